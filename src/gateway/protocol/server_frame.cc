#include "gateway/protocol/server_frame.h"

#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/json_writer.h"

namespace qim {

namespace {

JsonWriter start(std::string_view type, std::string_view ref, size_t estimate = 256) {
  JsonWriter w;
  w.reserve(estimate).begin_object().field("type", type);
  if (!ref.empty()) w.field("ref", ref);
  return w;
}

void write_message_fields(JsonWriter& w, const Message& m) {
  w.key("message_id").uint64_as_string(m.id.value);
  w.field("conversation", m.conversation.str());
  w.field("sender", m.sender.str());
  w.field("sender_device", m.sender_device.str());
  w.field("client_msg_id", m.client_msg_id);
  w.field("server_time", m.server_time_ms);
  w.field("body", m.body);
}

// An entry's JSON without its strings' escapes: the fixed keys and numbers take under 200 bytes.
size_t estimate_entries(std::span<const MailboxEntry> entries) {
  size_t n = 0;
  for (const auto& e : entries) {
    const Message& m = e.message;
    n += 200 + m.conversation.str().size() + m.sender.str().size() + m.sender_device.str().size() +
         m.client_msg_id.size() + m.body.size();
  }
  return n;
}

void write_entries(JsonWriter& w, std::span<const MailboxEntry> entries) {
  w.key("entries").begin_array();
  for (const auto& e : entries) {
    w.begin_object();
    w.key("seq").uint64_as_string(e.seq.raw());
    write_message_fields(w, e.message);
    w.end_object();
  }
  w.end_array();
}

}  // namespace

std::string encode_auth_ok(std::string_view ref, const Principal& who, std::string_view delivery_mode) {
  auto w = start("AUTH_OK", ref);
  w.key("v").int64(kProtocolVersion);
  w.field("user", who.user.str()).field("device", who.device.str());
  w.field("expires_at", who.expires_at_ms).field("delivery", delivery_mode);
  return w.end_object().take();
}

std::string encode_send_ack(std::string_view ref, const SendAck& ack) {
  auto w = start("SEND_ACK", ref);
  w.field("client_msg_id", ack.client_msg_id);
  w.key("message_id").uint64_as_string(ack.message_id.value);
  w.field("conversation", ack.conversation.str());
  w.field("server_time", ack.server_time_ms);
  w.field("duplicate", ack.duplicate);
  return w.end_object().take();
}

std::string encode_deliver(std::span<const MailboxEntry> entries, MailboxSeq from, MailboxSeq frontier) {
  auto w = start("DELIVER", {}, 96 + estimate_entries(entries));
  write_entries(w, entries);
  w.key("from").uint64_as_string(from.raw());
  w.key("frontier").uint64_as_string(frontier.raw());
  return w.end_object().take();
}

std::string encode_sync_needed(std::string_view reason) {
  return start("SYNC_NEEDED", {}).field("reason", reason).end_object().take();
}

std::string encode_sync_page(std::string_view ref, const MailboxPage& page) {
  auto w = start("SYNC_PAGE", ref, 160 + ref.size() + estimate_entries(page.entries));
  write_entries(w, page.entries);
  w.key("frontier").uint64_as_string(page.frontier.raw());
  w.key("trim").uint64_as_string(page.trim.raw());
  w.field("more", page.more);
  w.key("gap_through");
  if (page.gap_through) {
    w.uint64_as_string(page.gap_through->raw());
  } else {
    w.null();
  }
  return w.end_object().take();
}

std::string encode_history_page(std::string_view ref, const ConversationId& conversation,
                                const HistoryPage& page) {
  auto w = start("HISTORY_PAGE", ref);
  w.field("conversation", conversation.str());
  w.key("messages").begin_array();
  for (const auto& m : page.messages) {
    w.begin_object();
    write_message_fields(w, m);
    w.end_object();
  }
  w.end_array();
  w.field("more", page.more);
  return w.end_object().take();
}

std::string encode_error(std::string_view ref, WireCode code, std::string_view message) {
  auto w = start("ERROR", ref);
  w.field("code", wire_code_name(code)).field("message", message);
  return w.end_object().take();
}

std::string encode_pong(std::string_view ref) {
  return start("PONG", ref).end_object().take();
}

std::string encode_group_ok(std::string_view ref, std::string_view op, const GroupId& group, MessageId id) {
  auto w = start("GROUP_OK", ref);
  w.field("op", op).field("group", "g:" + group.str());
  w.key("message_id").uint64_as_string(id.value);
  return w.end_object().take();
}

std::string encode_groups_list(std::string_view ref, std::span<const GroupListing> groups) {
  auto w = start("GROUPS_LIST", ref);
  w.key("groups").begin_array();
  for (const auto& g : groups) {
    w.begin_object().field("group", "g:" + g.meta.group.str()).field("name", g.meta.name);
    w.field("role", group_role_name(g.role));
    w.key("members").uint64(g.meta.member_count);
    w.end_object();
  }
  w.end_array();
  return w.end_object().take();
}

std::string encode_group_members(std::string_view ref, const GroupMeta& meta,
                                 std::span<const GroupMemberRecord> members) {
  auto w = start("GROUP_MEMBERS_LIST", ref);
  w.field("group", "g:" + meta.group.str()).field("name", meta.name);
  w.key("members").begin_array();
  for (const auto& m : members)
    w.begin_object().field("user", m.user.str()).field("role", group_role_name(m.role)).end_object();
  w.end_array();
  return w.end_object().take();
}

}  // namespace qim
