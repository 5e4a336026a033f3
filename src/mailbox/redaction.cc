#include "mailbox/redaction.h"

#include <charconv>
#include <string>
#include <string_view>

namespace qim {

namespace {

// Reads a decimal id in quotes, "<digits>", from the start of `in`, and moves `in` past it.
std::optional<uint64_t> quoted_id(std::string_view& in) {
  if (in.size() < 3 || in.front() != '"') return std::nullopt;
  uint64_t id = 0;
  const char* begin = in.data() + 1;
  const char* end = in.data() + in.size();
  auto [stop, ec] = std::from_chars(begin, end, id);
  if (ec != std::errc() || stop == begin || stop == end || *stop != '"') return std::nullopt;
  in.remove_prefix(static_cast<size_t>(stop - in.data()) + 1);
  return id;
}

}  // namespace

DispatchId message_dispatch_id(MessageId message, ShardId shard, uint32_t part) {
  // At most 1 + 20 + 2 + 4 (+ 2 + 10) characters: always a valid name.
  std::string id = "m" + std::to_string(message.value) + "-s" + std::to_string(shard.value);
  if (part > 0) id += "-p" + std::to_string(part);
  return DispatchId::unchecked(std::move(id));
}

std::optional<RecallEntry> recall_of(const Message& entry) {
  constexpr std::string_view kPrefix = R"({"event":"recall","message_id":)";
  if (entry.client_msg_id != "~recall" || !entry.body.starts_with(kPrefix)) return std::nullopt;
  std::string_view rest = std::string_view(entry.body).substr(kPrefix.size());
  const std::optional<uint64_t> target = quoted_id(rest);
  if (!target) return std::nullopt;
  RecallEntry out{MessageId{*target}, {}};
  // The "by" string before it is JSON-escaped, so an unescaped `,"edits":[` can only be the field itself.
  constexpr std::string_view kEdits = R"(,"edits":[)";
  const size_t at = rest.find(kEdits);
  if (at == std::string_view::npos) return out;
  rest.remove_prefix(at + kEdits.size());
  while (true) {
    const std::optional<uint64_t> edit = quoted_id(rest);
    if (!edit) return std::nullopt;
    out.edits.push_back(MessageId{*edit});
    if (rest.starts_with(",")) {
      rest.remove_prefix(1);
      continue;
    }
    if (!rest.starts_with("]")) return std::nullopt;
    return out;
  }
}

std::optional<std::string> redacted_edit_body(MessageId target, std::string_view client_msg_id,
                                              std::string_view body) {
  if (client_msg_id != "~edit") return std::nullopt;
  const std::string prefix =
      R"({"event":"edit","message_id":")" + std::to_string(target.value) + R"(","body":")";
  if (!body.starts_with(prefix)) return std::nullopt;
  // The text is a JSON string: it ends at the first quote not escaped by a backslash.
  size_t end = prefix.size();
  while (end < body.size() && body[end] != '"') end += body[end] == '\\' ? 2 : 1;
  if (end >= body.size() || end == prefix.size()) return std::nullopt;  // not closed, or already empty
  const std::string_view rest = body.substr(end);                       // from the closing quote on
  if (!rest.starts_with(R"(","edited_at":)")) return std::nullopt;
  return prefix + std::string(rest);
}

}  // namespace qim
