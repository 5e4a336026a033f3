#include "gateway/protocol/signal_frames.h"

#include <set>

#include "gateway/protocol/json_writer.h"

namespace qim {

namespace {

using simdjson::dom::element;

std::variant<TypingFrame, PresenceSubscribeFrame, std::string> read_typing(const simdjson::dom::object& o) {
  TypingFrame f;
  std::string_view text;
  if (o.at_key("conversation").get_string().get(text) != simdjson::SUCCESS)
    return std::string("field 'conversation' is required and must be a string");
  auto c = ConversationId::parse(text);
  if (!c.ok()) return "field 'conversation': " + c.error().message();
  f.conversation = std::move(c).value();
  element state;
  if (o.at_key("state").get(state) == simdjson::SUCCESS) {
    std::string_view s;
    if (state.get_string().get(s) != simdjson::SUCCESS || (s != "start" && s != "stop"))
      return std::string("field 'state' must be 'start' or 'stop'");
    f.stop = s == "stop";
  }
  return f;
}

std::variant<TypingFrame, PresenceSubscribeFrame, std::string> read_subscribe(
    const simdjson::dom::object& o) {
  PresenceSubscribeFrame f;
  simdjson::dom::array a;
  if (o.at_key("users").get_array().get(a) != simdjson::SUCCESS)
    return std::string("field 'users' is required and must be an array of user ids");
  std::set<UserId> seen;
  for (element e : a) {
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) return std::string("field 'users' must hold strings");
    if (f.users.size() == kMaxPresenceSubscriptions)
      return "field 'users' names more than " + std::to_string(kMaxPresenceSubscriptions) +
             " users (the bound of a connection's presence subscriptions)";
    auto u = UserId::parse(s);
    if (!u.ok()) return "field 'users': " + u.error().message();
    if (!seen.insert(*u).second) return "field 'users' names '" + u->str() + "' twice";
    f.users.push_back(std::move(u).value());
  }
  return f;
}

void write_view(JsonWriter& w, const PresenceView& v) {
  w.field("user", v.user.str()).field("status", v.online ? "online" : "offline").key("last_seen");
  if (v.last_seen && !v.online) {
    w.int64(*v.last_seen);
  } else {
    w.null();
  }
}

}  // namespace

std::variant<TypingFrame, PresenceSubscribeFrame, std::string> read_signal_frame(
    std::string_view type, const simdjson::dom::object& o) {
  if (type == "TYPING") return read_typing(o);
  return read_subscribe(o);
}

std::string encode_typing(const ConversationId& conversation, const UserId& user, bool stop) {
  JsonWriter w;
  w.begin_object()
      .field("type", "TYPING")
      .field("conversation", conversation.str())
      .field("user", user.str())
      .field("state", stop ? "stop" : "start")
      .field("expires_in_ms", stop ? int64_t{0} : kTypingExpiresMs)
      .end_object();
  return w.take();
}

std::string encode_presence(const PresenceView& view) {
  JsonWriter w;
  w.begin_object().field("type", "PRESENCE");
  write_view(w, view);
  w.end_object();
  return w.take();
}

std::string encode_presence_state(std::string_view ref, std::span<const PresenceView> views) {
  JsonWriter w;
  w.begin_object().field("type", "PRESENCE_STATE");
  if (!ref.empty()) w.field("ref", ref);
  w.key("users").begin_array();
  for (const auto& v : views) {
    w.begin_object();
    write_view(w, v);
    w.end_object();
  }
  w.end_array().end_object();
  return w.take();
}

}  // namespace qim
