#include "client/inbox_fields.h"

#include "gateway/protocol/json_fields.h"
#include "gateway/protocol/json_writer.h"

namespace qim::client {

namespace {

using json_fields::str;
using json_fields::u64;
using simdjson::dom::element;
using simdjson::dom::object;

JsonWriter start(std::string_view type, std::string_view ref) {
  JsonWriter w;
  w.begin_object().field("type", type);
  if (!ref.empty()) w.field("ref", ref);
  return w;
}

bool boolean(const object& o, std::string_view key) {
  bool v = false;
  return o.at_key(key).get_bool().get(v) == simdjson::SUCCESS && v;
}

uint32_t u32(const object& o, std::string_view key) {
  return static_cast<uint32_t>(u64(o, key).value_or(0));
}

Entry entry_of(const object& e) {
  int64_t time = 0;
  if (e.at_key("server_time").get_int64().get(time) != simdjson::SUCCESS) time = 0;
  return Entry{u64(e, "seq").value_or(0),
               u64(e, "message_id").value_or(0),
               str(e, "conversation"),
               str(e, "sender"),
               str(e, "sender_device"),
               str(e, "client_msg_id"),
               time,
               str(e, "body")};
}

}  // namespace

std::string read_frame(std::string_view conversation, uint64_t seq, std::string_view ref) {
  auto w = start("READ", ref);
  w.field("conversation", conversation);
  w.key("seq").uint64_as_string(seq);
  return w.end_object().take();
}

std::string conversations_frame(std::optional<uint64_t> before, uint32_t limit, std::string_view ref) {
  auto w = start("CONVERSATIONS", ref);
  if (before) w.key("before").uint64_as_string(*before);
  w.key("limit").uint64(limit);
  return w.end_object().take();
}

std::string receipts_frame(std::string_view conversation, uint64_t message_id, std::string_view ref) {
  auto w = start("RECEIPTS", ref);
  w.field("conversation", conversation);
  w.key("message_id").uint64_as_string(message_id);
  return w.end_object().take();
}

std::string settings_frame(const SettingsFields& fields, std::string_view ref) {
  auto w = start("SETTINGS", ref);
  if (fields.receipts) w.field("receipts", *fields.receipts);
  if (fields.presence) w.field("presence", *fields.presence);
  return w.end_object().take();
}

void read_inbox_fields(const object& o, ServerFrame& f) {
  f.read_seq = u64(o, "read_seq").value_or(0);
  f.unread = u32(o, "unread");
  f.unread_capped = boolean(o, "unread_capped");
  f.read_through = u64(o, "read_through");
  f.unread_conversations = u32(o, "unread_conversations");
  f.unread_conversations_capped = boolean(o, "unread_conversations_capped");
  f.read_count = u32(o, "read_count");
  simdjson::dom::array list;
  if (o.at_key("conversations").get_array().get(list) == simdjson::SUCCESS) {
    for (element item : list) {
      object c;
      if (item.get_object().get(c) != simdjson::SUCCESS) continue;
      ConversationItem it;
      it.conversation = str(c, "conversation");
      it.kind = str(c, "kind");
      it.peer = str(c, "peer");
      it.name = str(c, "name");
      object last;
      if (c.at_key("last").get_object().get(last) == simdjson::SUCCESS) it.last = entry_of(last);
      it.read_seq = u64(c, "read_seq").value_or(0);
      it.unread = u32(c, "unread");
      it.unread_capped = boolean(c, "unread_capped");
      it.peer_read_through = u64(c, "peer_read_through");
      it.peer_delivered_through = u64(c, "peer_delivered_through");
      it.muted = boolean(c, "muted");
      int64_t until = 0;
      if (c.at_key("muted_until").get_int64().get(until) == simdjson::SUCCESS) it.muted_until = until;
      f.conversations.push_back(std::move(it));
    }
  }
  if (o.at_key("readers").get_array().get(list) == simdjson::SUCCESS) {
    f.readers.emplace();
    for (element r : list) {
      std::string_view s;
      if (r.get_string().get(s) == simdjson::SUCCESS) f.readers->emplace_back(s);
    }
  }
  object settings;
  if (o.at_key("settings").get_object().get(settings) == simdjson::SUCCESS) {
    for (auto field : settings) {
      std::string_view v;
      if (field.value.get_string().get(v) == simdjson::SUCCESS) f.settings[std::string(field.key)] = v;
    }
  }
}

}  // namespace qim::client
