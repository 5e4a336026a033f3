#include "mailbox/redaction.h"

#include <charconv>
#include <string>
#include <string_view>

namespace qim {

DispatchId message_dispatch_id(MessageId message, ShardId shard, uint32_t part) {
  // At most 1 + 20 + 2 + 4 (+ 2 + 10) characters: always a valid name.
  std::string id = "m" + std::to_string(message.value) + "-s" + std::to_string(shard.value);
  if (part > 0) id += "-p" + std::to_string(part);
  return DispatchId::unchecked(std::move(id));
}

std::optional<MessageId> recall_target_of(const Message& entry) {
  constexpr std::string_view kPrefix = R"({"event":"recall","message_id":")";
  if (entry.client_msg_id != "~recall" || !entry.body.starts_with(kPrefix)) return std::nullopt;
  const std::string_view rest = std::string_view(entry.body).substr(kPrefix.size());
  uint64_t id = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), id);
  if (ec != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '"') {
    return std::nullopt;
  }
  return MessageId{id};
}

}  // namespace qim
