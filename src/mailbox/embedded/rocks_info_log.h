#pragma once
// RocksDB's informational log, kept off the data disk (issue 42, item 3). By default RocksDB writes a LOG
// file into the database's directory; on a full disk an append to it fails, and the next one trips an
// assertion in Debian's RocksDB 7.8 build (WritableFileWriter::AssertFalseAndGetStatusForPrevError): the
// process aborts, found by the disk-full nemesis test. This logger writes RocksDB's warnings and errors to
// the process's standard error (where QIM's own log goes) instead, and drops the rest.
//
// Thread safety: Logv may be called from any thread (one fprintf per line).

#include <rocksdb/env.h>

#include <cstdarg>
#include <cstdio>
#include <memory>
#include <string>

namespace qim::embedded {

class RocksInfoLog final : public rocksdb::Logger {
 public:
  explicit RocksInfoLog(std::string name)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), name_(std::move(name)) {}

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override { Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap); }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel() || level == rocksdb::InfoLogLevel::HEADER_LEVEL) return;
    char line[1024];
    std::vsnprintf(line, sizeof line, format, ap);
    std::fprintf(stderr, "rocksdb %s: %s\n", name_.c_str(), line);
  }

 private:
  const std::string name_;
};

inline std::shared_ptr<rocksdb::Logger> rocks_info_log(std::string name) {
  return std::make_shared<RocksInfoLog>(std::move(name));
}

}  // namespace qim::embedded
