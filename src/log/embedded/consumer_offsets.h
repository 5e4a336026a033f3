#pragma once
// Committed consumer positions of an embedded log: one small text file per group
// ("<dir>/<group>.offsets", lines "<partition> <next>"), replaced atomically by rename on every commit,
// so a crash leaves either the old or the new positions, never a torn file.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/status.h"

namespace qim::embedded_log {

class ConsumerOffsets {
 public:
  explicit ConsumerOffsets(std::string dir) : dir_(std::move(dir)) {}

  // Durably records `next` for (group, partition). InvalidArgument for a malformed group name.
  Status commit(const std::string& group, uint32_t partition, uint64_t next);
  // The committed position, nullopt if the group never committed this partition. CorruptEntry if the
  // group's file does not parse.
  Result<std::optional<uint64_t>> committed(const std::string& group, uint32_t partition);

 private:
  using Positions = std::map<uint32_t, uint64_t>;
  Result<Positions*> load(const std::string& group);  // with mu_ held

  std::string dir_;
  std::mutex mu_;
  std::map<std::string, Positions> groups_;
};

// InvalidArgument unless `group` is 1..64 characters of [A-Za-z0-9_.-] (it names a file).
Status check_group_name(const std::string& group);

}  // namespace qim::embedded_log
