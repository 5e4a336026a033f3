#pragma once
// RocksDB statuses as QIM errors: a merge or checksum failure is CorruptEntry, everything else local
// disk trouble (Io). The message names the operation so a failure says what was being done.

#include <string>
#include <string_view>

#include <rocksdb/status.h>

#include "core/status.h"

namespace qim::embedded {

inline Status rocks_status(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return {};
  const Errc code = s.IsCorruption() ? Errc::kCorruptEntry : Errc::kIo;
  return Error(code, "embedded store: " + std::string(what) + ": " + s.ToString());
}

}  // namespace qim::embedded
