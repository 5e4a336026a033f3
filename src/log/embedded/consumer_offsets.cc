#include "log/embedded/consumer_offsets.h"

#include <sstream>

#include "log/embedded/file.h"

namespace qim::embedded_log {

namespace {
constexpr const char* kHeader = "qim-consumer-offsets v1";
}

Status check_group_name(const std::string& group) {
  bool ok = !group.empty() && group.size() <= 64 && group[0] != '.';
  for (char c : group) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                c == '.' || c == '-');
  }
  if (!ok) {
    return Error(Errc::kInvalidArgument,
                 "consumer group '" + group + "' must be 1..64 characters of [A-Za-z0-9_.-]");
  }
  return {};
}

Result<ConsumerOffsets::Positions*> ConsumerOffsets::load(const std::string& group) {
  QIM_RETURN_IF_ERROR(check_group_name(group));
  if (auto it = groups_.find(group); it != groups_.end()) return &it->second;
  const std::string path = dir_ + "/" + group + ".offsets";
  Positions positions;
  auto text = read_whole_file(path);
  if (text.ok()) {
    std::istringstream in(*text);
    std::string header;
    std::getline(in, header);
    if (header != kHeader) return Error(Errc::kCorruptEntry, path + ": unknown header '" + header + "'");
    uint32_t partition = 0;
    uint64_t next = 0;
    while (in >> partition >> next) positions[partition] = next;
    if (!in.eof())
      return Error(Errc::kCorruptEntry,
                   path + ": malformed line after partition " + std::to_string(partition));
  } else if (text.code() != Errc::kNotFound) {
    return text.error();
  }
  return &groups_.emplace(group, std::move(positions)).first->second;
}

Status ConsumerOffsets::commit(const std::string& group, uint32_t partition, uint64_t next) {
  std::lock_guard lock(mu_);
  QIM_ASSIGN_OR_RETURN(Positions * positions, load(group));
  Positions updated = *positions;
  updated[partition] = next;
  std::ostringstream out;
  out << kHeader << "\n";
  for (const auto& [p, n] : updated) out << p << " " << n << "\n";
  QIM_RETURN_IF_ERROR(write_file_atomically(dir_ + "/" + group + ".offsets", out.str()));
  *positions = std::move(updated);  // only once durable: a failed commit leaves the old position
  return {};
}

Result<std::optional<uint64_t>> ConsumerOffsets::committed(const std::string& group, uint32_t partition) {
  std::lock_guard lock(mu_);
  QIM_ASSIGN_OR_RETURN(Positions * positions, load(group));
  auto it = positions->find(partition);
  if (it == positions->end()) return std::optional<uint64_t>();
  return std::optional(it->second);
}

}  // namespace qim::embedded_log
