#include "gateway/protocol/privacy_frames.h"

#include <simdjson.h>

#include <charconv>

#include "gateway/protocol/json_writer.h"

namespace qim {

namespace {

using simdjson::dom::element;
using simdjson::dom::object;

std::optional<std::string_view> string_field(const object& o, std::string_view field) {
  element e;
  std::string_view s;
  if (o.at_key(field).get(e) != simdjson::SUCCESS || e.get_string().get(s) != simdjson::SUCCESS)
    return std::nullopt;
  return s;
}

bool has(const object& o, std::string_view field) {
  element e;
  return o.at_key(field).get(e) == simdjson::SUCCESS && !e.is_null();
}

// A 64-bit value: a decimal string (the form the server writes) or a non-negative integer.
std::optional<uint64_t> u64_field(const object& o, std::string_view field) {
  element e;
  if (o.at_key(field).get(e) != simdjson::SUCCESS) return std::nullopt;
  uint64_t u = 0;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) return u;
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS && !s.empty() && s.size() <= 20) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), u);
    if (ec == std::errc() && end == s.data() + s.size()) return u;
  }
  return std::nullopt;
}

std::variant<ConversationId, std::string> conversation_of(const object& o) {
  auto text = string_field(o, "conversation");
  if (!text) return std::string("field 'conversation' (a string) is required");
  auto c = ConversationId::parse(*text);
  if (!c.ok()) return "field 'conversation': " + c.error().message();
  return std::move(c).value();
}

JsonWriter start(std::string_view type, std::string_view ref) {
  JsonWriter w;
  w.reserve(192).begin_object().field("type", type);
  if (!ref.empty()) w.field("ref", ref);
  return w;
}

}  // namespace

bool is_privacy_frame_type(std::string_view type) {
  return type == "BLOCK" || type == "UNBLOCK" || type == "BLOCKS" || type == "MUTE" || type == "UNMUTE" ||
         type == "DELETE_FOR_ME";
}

std::variant<PrivacyFrame, std::string> parse_privacy_frame(std::string_view type, const object& o) {
  if (type == "BLOCK" || type == "UNBLOCK") {
    auto text = string_field(o, "user");
    if (!text) return std::string("field 'user' (a string) is required");
    auto user = UserId::parse(*text);
    if (!user.ok()) return "field 'user': " + user.error().message();
    return PrivacyFrame{BlockFrame{std::move(user).value(), type == "BLOCK"}};
  }
  if (type == "BLOCKS") return PrivacyFrame{BlocksFrame{}};
  if (type == "MUTE" || type == "UNMUTE") {
    auto c = conversation_of(o);
    if (auto* e = std::get_if<std::string>(&c)) return std::move(*e);
    MuteFrame f{std::get<ConversationId>(std::move(c)), type == "MUTE", std::nullopt};
    if (f.muted && has(o, "until")) {
      auto until = u64_field(o, "until");
      if (!until || *until >= (uint64_t{1} << 48))
        return std::string("field 'until' must be a time in ms since the epoch (below 2^48), or null");
      f.until_ms = static_cast<int64_t>(*until);
    }
    return PrivacyFrame{std::move(f)};
  }
  if (type == "DELETE_FOR_ME") {
    auto c = conversation_of(o);
    if (auto* e = std::get_if<std::string>(&c)) return std::move(*e);
    DeleteForMeFrame f{std::get<ConversationId>(std::move(c)), std::nullopt};
    if (has(o, "message_id")) {
      auto id = u64_field(o, "message_id");
      if (!id)
        return std::string("field 'message_id' must be an unsigned 64-bit integer or its decimal string");
      f.message = MessageId{*id};
    }
    return PrivacyFrame{std::move(f)};
  }
  return "not a privacy frame: '" + std::string(type.substr(0, 32)) + "'";
}

std::string encode_block(std::string_view type, std::string_view ref, const UserId& user, bool blocked) {
  auto w = start(type, ref);
  w.field("user", user.str()).field("blocked", blocked);
  return w.end_object().take();
}

std::string encode_blocks_list(std::string_view ref, std::span<const UserId> users) {
  auto w = start("BLOCKS_LIST", ref);
  w.reserve(64 + users.size() * 72);
  w.key("users").begin_array();
  for (const UserId& u : users) w.string(u.str());
  w.end_array();
  return w.end_object().take();
}

std::string encode_mute(std::string_view type, std::string_view ref, const ConversationId& c,
                        const std::optional<Mute>& mute) {
  auto w = start(type, ref);
  w.field("conversation", c.str()).field("muted", mute.has_value());
  w.key("muted_until");
  if (mute && mute->until_ms) {
    w.int64(*mute->until_ms);
  } else {
    w.null();
  }
  return w.end_object().take();
}

std::string encode_deleted(std::string_view type, std::string_view ref, const ConversationId& c,
                           std::optional<MessageId> message, std::optional<MessageId> through) {
  auto w = start(type, ref);
  w.field("conversation", c.str());
  if (message) w.key("message_id").uint64_as_string(message->value);
  if (through) w.key("through").uint64_as_string(through->value);
  return w.end_object().take();
}

}  // namespace qim
