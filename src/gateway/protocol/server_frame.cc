#include "gateway/protocol/server_frame.h"

#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/json_writer.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>

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
  if (m.reply_to) w.key("reply_to").uint64_as_string(m.reply_to->value);
}

// A reply's quote (docs/protocol.md "Replies").
void write_quote(JsonWriter& w, const ReplyQuote& q) {
  w.key("quote").begin_object();
  w.key("message_id").uint64_as_string(q.message_id.value);
  if (!q.sender.str().empty()) w.field("sender", q.sender.str());
  if (q.recalled) {
    w.field("recalled", true);
  } else if (q.unavailable) {
    w.field("unavailable", true);
  } else {
    w.field("body", q.body);
    w.field("truncated", q.truncated);
    if (q.attachments > 0) w.key("attachments").uint64(q.attachments);
  }
  w.end_object();
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

// What a frame's fields after its list take at most (seqs, `more`, `gap_through`, `next_before`, the
// closing brackets): the list stops max_bytes - kTailBytes into the frame.
constexpr size_t kTailBytes = 256;

size_t budget_of(size_t max_bytes) {
  return max_bytes > 2 * kTailBytes ? max_bytes - kTailBytes : kTailBytes;
}

// Writes the items of `items` (each by `one`) as the array `name` while the frame stays within `budget`
// bytes, and at least one item. Returns how many were written.
template <class T, class WriteOne>
size_t write_bounded(JsonWriter& w, std::string_view name, std::span<const T> items, size_t budget,
                     WriteOne one) {
  w.key(name).begin_array();
  size_t n = 0;
  for (const T& item : items) {
    const JsonWriter::Mark mark = w.mark();
    w.begin_object();
    one(item);
    w.end_object();
    if (n > 0 && w.size() > budget) {
      w.rewind(mark);
      break;
    }
    ++n;
  }
  w.end_array();
  return n;
}

size_t write_entries(JsonWriter& w, std::span<const MailboxEntry> entries,
                     size_t budget = std::numeric_limits<size_t>::max(), const ReaderMarks* marks = nullptr) {
  return write_bounded(w, "entries", entries, budget, [&](const MailboxEntry& e) {
    w.key("seq").uint64_as_string(e.seq.raw());
    if (marks != nullptr && marks->deleted && marks->deleted(e.message)) {
      w.key("message_id").uint64_as_string(e.message.id.value);
      w.field("conversation", e.message.conversation.str());
      w.field("deleted_for_me", true);
      return;
    }
    write_message_fields(w, e.message);
    if (marks != nullptr && marks->from_blocked && marks->from_blocked(e.message))
      w.field("from_blocked", true);
    if (marks != nullptr && marks->quotes != nullptr && e.message.reply_to) {
      if (auto q = marks->quotes->find(e.message.id.value); q != marks->quotes->end())
        write_quote(w, q->second);
    }
  });
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

std::string encode_event_ack(std::string_view ref, const EventAck& ack) {
  std::string type(message_event_name(ack.kind));
  for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto w = start(type + "_ACK", ref);
  w.field("client_msg_id", ack.client_msg_id);
  w.key("message_id").uint64_as_string(ack.event_id.value);
  w.key("target").uint64_as_string(ack.target.value);
  w.field("conversation", ack.conversation.str());
  w.field("server_time", ack.server_time_ms);
  return w.end_object().take();
}

std::string encode_deliver(std::span<const MailboxEntry> entries, MailboxSeq from, MailboxSeq frontier) {
  auto w = start("DELIVER", {}, 96 + estimate_entries(entries));
  write_entries(w, entries);
  w.key("from").uint64_as_string(from.raw());
  w.key("frontier").uint64_as_string(frontier.raw());
  return w.end_object().take();
}

std::vector<std::string> encode_delivers(std::span<const MailboxEntry> entries, MailboxSeq from,
                                         MailboxSeq frontier, size_t max_bytes, const ReaderMarks* marks) {
  std::vector<std::string> frames;
  size_t done = 0;
  MailboxSeq start_at = from;
  do {
    const auto rest = entries.subspan(done);
    auto w = start("DELIVER", {}, 96 + std::min(estimate_entries(rest), max_bytes));
    done += write_entries(w, rest, budget_of(max_bytes), marks);
    // A frame that ends before the last entry ends at its own last entry: it holds every entry up to it.
    const MailboxSeq end_at = done == entries.size() ? frontier : entries[done - 1].seq;
    w.key("from").uint64_as_string(start_at.raw());
    w.key("frontier").uint64_as_string(end_at.raw());
    frames.push_back(w.end_object().take());
    start_at = end_at;
  } while (done < entries.size());
  return frames;
}

std::string encode_sync_needed(std::string_view reason) {
  return start("SYNC_NEEDED", {}).field("reason", reason).end_object().take();
}

std::string encode_sync_page(std::string_view ref, const MailboxPage& page, size_t max_bytes,
                             const ReaderMarks* marks) {
  auto w = start("SYNC_PAGE", ref, 160 + ref.size() + std::min(estimate_entries(page.entries), max_bytes));
  const size_t written = write_entries(w, page.entries, budget_of(max_bytes), marks);
  w.key("frontier").uint64_as_string(page.frontier.raw());
  w.key("trim").uint64_as_string(page.trim.raw());
  w.field("more", page.more || written < page.entries.size());
  w.key("gap_through");
  if (page.gap_through) {
    w.uint64_as_string(page.gap_through->raw());
  } else {
    w.null();
  }
  return w.end_object().take();
}

std::string encode_history_page(std::string_view ref, const ConversationId& conversation,
                                const HistoryPage& page, size_t max_bytes, const ReaderMarks* marks) {
  auto w = start("HISTORY_PAGE", ref);
  w.field("conversation", conversation.str());
  const size_t written = write_bounded(
      w, "messages", std::span<const Message>(page.messages), budget_of(max_bytes), [&](const Message& m) {
        write_message_fields(w, m);
        if (marks != nullptr && marks->from_blocked && marks->from_blocked(m)) w.field("from_blocked", true);
        if (auto quote = page.quotes.find(m.id.value); quote != page.quotes.end())
          write_quote(w, quote->second);
        auto life = page.life.find(m.id.value);
        if (life == page.life.end()) return;
        if (life->second.recalled) w.field("recalled", true);
        if (life->second.edit_count > 0 && !life->second.recalled) {
          w.field("edited_at", life->second.edited_at_ms);
          w.key("edit_count").uint64(life->second.edit_count);
        }
        if (!life->second.reactions.empty() && !life->second.recalled) {
          w.key("reactions").begin_array();
          for (const ReactionCount& r : life->second.reactions) {
            w.begin_object().field("emoji", r.emoji);
            w.key("count").uint64(r.count);
            w.field("mine", r.mine).end_object();
          }
          w.end_array();
        }
      });
  const bool cut = written < page.messages.size();
  w.field("more", page.more || cut);
  // Where to page on from: the last message sent, unless the reader read past it (messages it may not
  // see, group_history.h), or sent none.
  std::optional<MessageId> next;
  if (cut) {
    next = page.messages[written - 1].id;
  } else if (page.more) {
    next = page.next_before        ? page.next_before
           : page.messages.empty() ? std::nullopt
                                   : std::optional(page.messages.back().id);
  }
  if (next) w.key("next_before").uint64_as_string(next->value);
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
