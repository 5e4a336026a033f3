#include "client/frames.h"

#include <simdjson.h>

#include "client/inbox_fields.h"
#include "client/privacy_fields.h"
#include "gateway/protocol/json_fields.h"
#include "gateway/protocol/json_writer.h"

namespace qim::client {

namespace {

using simdjson::dom::element;
using simdjson::dom::object;

JsonWriter start(std::string_view type, std::string_view ref) {
  JsonWriter w;
  w.begin_object().field("type", type);
  if (!ref.empty()) w.field("ref", ref);
  return w;
}

using json_fields::str;
using json_fields::u64;

int64_t i64(const object& o, std::string_view key) {
  int64_t v = 0;
  if (o.at_key(key).get_int64().get(v) != simdjson::SUCCESS) return 0;
  return v;
}

bool boolean(const object& o, std::string_view key) {
  bool v = false;
  if (o.at_key(key).get_bool().get(v) != simdjson::SUCCESS) return false;
  return v;
}

void read_entries(const object& o, std::string_view key, std::vector<Entry>& out) {
  simdjson::dom::array list;
  if (o.at_key(key).get_array().get(list) != simdjson::SUCCESS) return;
  for (element item : list) {
    object e;
    if (item.get_object().get(e) != simdjson::SUCCESS) continue;
    Entry entry{
        u64(e, "seq").value_or(0), u64(e, "message_id").value_or(0), str(e, "conversation"), str(e, "sender"),
        str(e, "sender_device"),   str(e, "client_msg_id"),          i64(e, "server_time"),  str(e, "body")};
    entry.deleted_for_me = boolean(e, "deleted_for_me");
    entry.from_blocked = boolean(e, "from_blocked");
    entry.recalled = boolean(e, "recalled");
    entry.edited_at = i64(e, "edited_at");
    entry.edit_count = static_cast<uint32_t>(u64(e, "edit_count").value_or(0));
    simdjson::dom::array reactions;
    if (e.at_key("reactions").get_array().get(reactions) == simdjson::SUCCESS) {
      for (element r : reactions) {
        object ro;
        if (r.get_object().get(ro) != simdjson::SUCCESS) continue;
        entry.reactions.push_back(Entry::Reaction{
            str(ro, "emoji"), static_cast<uint32_t>(u64(ro, "count").value_or(0)), boolean(ro, "mine")});
      }
    }
    entry.reply_to = u64(e, "reply_to");
    object quote;
    if (e.at_key("quote").get_object().get(quote) == simdjson::SUCCESS) {
      entry.quote = Entry::Quote{
          u64(quote, "message_id").value_or(0), str(quote, "sender"),       str(quote, "body"),
          boolean(quote, "truncated"),          boolean(quote, "recalled"), boolean(quote, "unavailable")};
    }
    out.push_back(std::move(entry));
  }
}

}  // namespace

std::string auth_frame(std::string_view token, std::string_view ref) {
  return start("AUTH", ref).field("token", token).end_object().take();
}

std::string send_frame(std::string_view to, std::string_view client_msg_id, std::string_view body,
                       std::string_view ref) {
  return start("SEND", ref)
      .field("client_msg_id", client_msg_id)
      .field("to", to)
      .field("body", body)
      .end_object()
      .take();
}

std::string send_to_conversation_frame(std::string_view conversation, std::string_view client_msg_id,
                                       std::string_view body, std::string_view ref) {
  return start("SEND", ref)
      .field("client_msg_id", client_msg_id)
      .field("conversation", conversation)
      .field("body", body)
      .end_object()
      .take();
}

std::string reply_frame(std::string_view conversation, std::string_view client_msg_id, std::string_view body,
                        uint64_t reply_to, std::string_view ref) {
  auto w = start("SEND", ref);
  w.field("client_msg_id", client_msg_id).field("conversation", conversation).field("body", body);
  w.key("reply_to").uint64_as_string(reply_to);
  return w.end_object().take();
}

std::string edit_frame(std::string_view conversation, uint64_t message_id, std::string_view client_msg_id,
                       std::string_view body, std::string_view ref) {
  auto w = start("EDIT", ref);
  w.field("client_msg_id", client_msg_id).field("conversation", conversation);
  w.key("message_id").uint64_as_string(message_id);
  w.field("body", body);
  return w.end_object().take();
}

std::string recall_frame(std::string_view conversation, uint64_t message_id, std::string_view client_msg_id,
                         std::string_view ref) {
  auto w = start("RECALL", ref);
  w.field("client_msg_id", client_msg_id).field("conversation", conversation);
  w.key("message_id").uint64_as_string(message_id);
  return w.end_object().take();
}

std::string react_frame(std::string_view conversation, uint64_t message_id, std::string_view client_msg_id,
                        std::string_view emoji, bool remove, std::string_view ref) {
  auto w = start(remove ? "UNREACT" : "REACT", ref);
  w.field("client_msg_id", client_msg_id).field("conversation", conversation);
  w.key("message_id").uint64_as_string(message_id);
  w.field("emoji", emoji);
  return w.end_object().take();
}

std::string sync_frame(uint64_t after, uint32_t limit, std::string_view ref) {
  auto w = start("SYNC", ref);
  w.key("after").uint64_as_string(after);
  w.key("limit").uint64(limit);
  return w.end_object().take();
}

std::string history_frame(std::string_view conversation, std::optional<uint64_t> before, uint32_t limit,
                          std::string_view ref) {
  auto w = start("HISTORY", ref);
  w.field("conversation", conversation);
  if (before) w.key("before").uint64_as_string(*before);
  w.key("limit").uint64(limit);
  return w.end_object().take();
}

std::string ping_frame(std::string_view ref) {
  return start("PING", ref).end_object().take();
}

std::string group_frame(std::string_view type, const GroupRequestFields& fields, std::string_view ref) {
  auto w = start(type, ref);
  if (!fields.group.empty()) w.field("group", fields.group);
  if (!fields.name.empty()) w.field("name", fields.name);
  if (type == "GROUP_CREATE" || type == "GROUP_ADD" || type == "GROUP_REMOVE") {
    w.key("members").begin_array();
    for (const auto& m : fields.members) w.string(m);
    w.end_array();
  }
  if (!fields.member.empty()) w.field("member", fields.member);
  if (!fields.role.empty()) w.field("role", fields.role);
  return w.end_object().take();
}

Result<ServerFrame> parse_server_frame(std::string_view text) {
  simdjson::dom::parser parser;
  element root;
  object o;
  if (parser.parse(text.data(), text.size()).get(root) != simdjson::SUCCESS ||
      root.get_object().get(o) != simdjson::SUCCESS) {
    return Error(Errc::kCorruptEntry,
                 "server frame is not a JSON object: " + std::string(text.substr(0, 200)));
  }
  ServerFrame f;
  f.raw = std::string(text);
  f.type = str(o, "type");
  if (f.type.empty())
    return Error(Errc::kCorruptEntry, "server frame without a type: " + f.raw.substr(0, 200));
  f.ref = str(o, "ref");
  f.code = str(o, "code");
  f.message = str(o, "message");
  f.user = str(o, "user");
  f.device = str(o, "device");
  f.delivery = str(o, "delivery");
  f.client_msg_id = str(o, "client_msg_id");
  f.message_id = u64(o, "message_id").value_or(0);
  f.conversation = str(o, "conversation");
  f.server_time = i64(o, "server_time");
  f.duplicate = boolean(o, "duplicate");
  f.target = u64(o, "target").value_or(0);
  read_entries(o, "entries", f.entries);
  read_entries(o, "messages", f.entries);
  f.from = u64(o, "from");
  f.frontier = u64(o, "frontier").value_or(0);
  f.reason = str(o, "reason");
  f.trim = u64(o, "trim").value_or(0);
  f.gap_through = u64(o, "gap_through");
  f.more = boolean(o, "more");
  f.next_before = u64(o, "next_before");
  f.group = str(o, "group");
  f.op = str(o, "op");
  f.name = str(o, "name");
  for (const char* list : {"groups", "members"}) {
    simdjson::dom::array a;
    if (f.type.rfind("GROUP", 0) != 0 || o[list].get_array().get(a) != simdjson::SUCCESS) continue;
    for (element e : a) {
      object item;
      if (e.get_object().get(item) != simdjson::SUCCESS) continue;
      ServerFrame::Item it;
      it.id = str(item, std::string(list) == "groups" ? "group" : "user");
      it.name = str(item, "name");
      it.role = str(item, "role");
      it.members = u64(item, "members").value_or(0);
      f.items.push_back(std::move(it));
    }
  }
  read_inbox_fields(o, f);
  read_privacy_fields(o, f);
  return f;
}

}  // namespace qim::client
