#include "gateway/protocol/inbox_frames.h"

#include <simdjson.h>

#include <charconv>

#include "core/conversation.h"
#include "gateway/protocol/json_writer.h"

namespace qim {

namespace {

using simdjson::dom::element;
using simdjson::dom::object;

InboxFrameError invalid(std::string message) {
  return InboxFrameError{WireCode::kInvalidArgument, std::move(message)};
}

std::variant<std::optional<std::string_view>, InboxFrameError> optional_string(const object& o,
                                                                               std::string_view field) {
  element e;
  if (o.at_key(field).get(e) != simdjson::SUCCESS) return std::optional<std::string_view>{};
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS)
    return invalid("field '" + std::string(field) + "' must be a string");
  return std::optional<std::string_view>{s};
}

// A 64-bit seq or id: a decimal string (the form the server writes) or a non-negative integer.
std::variant<std::optional<uint64_t>, InboxFrameError> optional_u64(const object& o, std::string_view field) {
  element e;
  if (o.at_key(field).get(e) != simdjson::SUCCESS || e.is_null()) return std::optional<uint64_t>{};
  uint64_t u = 0;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) return std::optional<uint64_t>{u};
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS && !s.empty() && s.size() <= 20) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), u);
    if (ec == std::errc() && end == s.data() + s.size()) return std::optional<uint64_t>{u};
  }
  return invalid("field '" + std::string(field) +
                 "' must be an unsigned 64-bit integer or its decimal string");
}

#define QIM_INBOX_TAKE(lhs, expr)                                                        \
  auto QIM_CONCAT_(t_, __LINE__) = (expr);                                               \
  if (auto* err = std::get_if<InboxFrameError>(&QIM_CONCAT_(t_, __LINE__))) return *err; \
  lhs = std::move(std::get<0>(QIM_CONCAT_(t_, __LINE__)))

using Parsed = std::variant<InboxFrame, InboxFrameError>;

std::variant<ConversationId, InboxFrameError> conversation_field(const object& o) {
  QIM_INBOX_TAKE(std::optional<std::string_view> text, optional_string(o, "conversation"));
  if (!text) return invalid("field 'conversation' is required");
  auto c = ConversationId::parse(*text);
  if (!c.ok()) return invalid("field 'conversation': " + c.error().message());
  return std::move(c).value();
}

std::variant<uint64_t, InboxFrameError> required_u64(const object& o, std::string_view field) {
  QIM_INBOX_TAKE(std::optional<uint64_t> v, optional_u64(o, field));
  if (!v) return invalid("field '" + std::string(field) + "' is required");
  return *v;
}

Parsed read_read(const object& o) {
  ReadFrame f;
  QIM_INBOX_TAKE(f.conversation, conversation_field(o));
  QIM_INBOX_TAKE(uint64_t seq, required_u64(o, "seq"));
  if (seq == 0) return invalid("field 'seq' must be a seq of your mailbox (above 0)");
  f.seq = MailboxSeq::from_raw(seq);
  return InboxFrame{f};
}

Parsed read_conversations(const object& o) {
  ConversationsFrame f;
  QIM_INBOX_TAKE(std::optional<uint64_t> before, optional_u64(o, "before"));
  if (before) f.before = MailboxSeq::from_raw(*before);
  element e;
  if (o.at_key("limit").get(e) == simdjson::SUCCESS) {
    uint64_t u = 0;
    if (e.get_uint64().get(u) != simdjson::SUCCESS || u < 1 || u > kMaxConversationsLimit)
      return invalid("field 'limit' must be an integer in 1.." + std::to_string(kMaxConversationsLimit));
    f.limit = static_cast<uint32_t>(u);
  }
  return InboxFrame{f};
}

Parsed read_receipts(const object& o) {
  ReceiptsFrame f;
  QIM_INBOX_TAKE(f.conversation, conversation_field(o));
  QIM_INBOX_TAKE(uint64_t id, required_u64(o, "message_id"));
  f.message = MessageId{id};
  return InboxFrame{f};
}

std::variant<std::optional<std::string>, InboxFrameError> setting_field(
    const object& o, std::string_view field, std::initializer_list<std::string_view> allowed) {
  QIM_INBOX_TAKE(std::optional<std::string_view> v, optional_string(o, field));
  if (!v) return std::optional<std::string>{};
  std::string names;
  for (std::string_view a : allowed) {
    if (*v == a) return std::optional<std::string>{std::string(a)};
    names += (names.empty() ? "'" : ", '") + std::string(a) + "'";
  }
  return invalid("field '" + std::string(field) + "' must be one of " + names);
}

Parsed read_settings(const object& o) {
  for (auto field : o) {
    const std::string_view k = field.key;
    if (k != "type" && k != "ref" && k != "v" && k != kSettingReceipts && k != kSettingPresence) {
      return invalid("SETTINGS has no setting '" + std::string(k.substr(0, 32)) + "' (settings: '" +
                     std::string(kSettingReceipts) + "', '" + std::string(kSettingPresence) + "')");
    }
  }
  SettingsFrame f;
  QIM_INBOX_TAKE(f.receipts, setting_field(o, kSettingReceipts, {"on", "off"}));
  QIM_INBOX_TAKE(f.presence, setting_field(o, kSettingPresence, {"everyone", "contacts", "nobody"}));
  return InboxFrame{std::move(f)};
}

#undef QIM_INBOX_TAKE

JsonWriter start(std::string_view type, std::string_view ref) {
  JsonWriter w;
  w.reserve(192).begin_object().field("type", type);
  if (!ref.empty()) w.field("ref", ref);
  return w;
}

void write_unread(JsonWriter& w, const UnreadState& s) {
  w.field("conversation", s.conversation.str());
  w.key("read_seq").uint64_as_string(s.read_seq.raw());
  w.key("unread").uint64(s.unread);
  w.field("unread_capped", s.unread_capped);
}

void write_optional_id(JsonWriter& w, std::string_view name, const std::optional<MessageId>& id) {
  w.key(name);
  if (id) {
    w.uint64_as_string(id->value);
  } else {
    w.null();
  }
}

}  // namespace

bool is_inbox_frame_type(std::string_view type) {
  return type == "READ" || type == "CONVERSATIONS" || type == "RECEIPTS" || type == "SETTINGS";
}

std::variant<InboxFrame, InboxFrameError> parse_inbox_frame(std::string_view type, const object& o) {
  if (type == "READ") return read_read(o);
  if (type == "CONVERSATIONS") return read_conversations(o);
  if (type == "RECEIPTS") return read_receipts(o);
  if (type == "SETTINGS") return read_settings(o);
  return InboxFrameError{WireCode::kUnknownType, "not an inbox frame"};
}

std::map<std::string, std::string> effective_settings(const std::map<std::string, std::string>& stored) {
  std::map<std::string, std::string> out{{std::string(kSettingReceipts), "on"},
                                         {std::string(kSettingPresence), "everyone"}};
  for (const auto& [k, v] : stored) {
    if (out.contains(k)) out[k] = v;  // only the settings this protocol version names
  }
  return out;
}

std::string encode_read_ok(std::string_view ref, const UnreadState& s) {
  auto w = start("READ_OK", ref);
  write_unread(w, s);
  return w.end_object().take();
}

std::string encode_read_state(const UnreadState& s) {
  auto w = start("READ_STATE", {});
  write_unread(w, s);
  return w.end_object().take();
}

std::string encode_receipt(const ConversationId& conversation, const UserId& user, MessageId read_through) {
  auto w = start("RECEIPT", {});
  w.field("conversation", conversation.str()).field("user", user.str());
  w.key("read_through").uint64_as_string(read_through.value);
  return w.end_object().take();
}

std::string encode_delivered(const ConversationId& conversation, const UserId& user, MessageId message) {
  auto w = start("DELIVERED", {});
  w.field("conversation", conversation.str()).field("user", user.str());
  w.key("message_id").uint64_as_string(message.value);
  return w.end_object().take();
}

std::string encode_conversations_page(std::string_view ref, const ConversationPage& page,
                                      std::span<const ConversationLabel> labels) {
  auto w = start("CONVERSATIONS_PAGE", ref);
  w.reserve(256 + page.items.size() * (400 + kPreviewBytes));
  w.key("conversations").begin_array();
  for (size_t i = 0; i < page.items.size(); ++i) {
    const ConversationSummary& s = page.items[i];
    w.begin_object().field("conversation", s.conversation.str());
    if (i < labels.size()) {
      w.field("kind", labels[i].kind);
      if (labels[i].peer) w.field("peer", *labels[i].peer);
      if (labels[i].peer_name) w.field("peer_name", *labels[i].peer_name);
      if (labels[i].kind == "group") {
        w.key("name");
        if (labels[i].name) {
          w.string(*labels[i].name);
        } else {
          w.null();
        }
      }
    }
    // The entry as DELIVER writes one, from what the inbox keeps of it: its body is the preview (the
    // first kPreviewBytes, cut on a character); the full message is one HISTORY or SYNC away.
    w.key("last").begin_object();
    w.key("seq").uint64_as_string(s.last.seq.raw());
    w.key("message_id").uint64_as_string(s.last.message.value);
    w.field("conversation", s.conversation.str());
    w.field("sender", s.last.sender.str());
    w.field("server_time", s.last.server_time_ms);
    w.field("body", s.last.preview);
    w.end_object();
    w.key("read_seq").uint64_as_string(s.read_seq.raw());
    w.key("unread").uint64(s.unread);
    w.field("unread_capped", s.unread_capped);
    write_optional_id(w, "peer_read_through", s.peer_read_through);
    write_optional_id(w, "peer_delivered_through", s.peer_delivered_through);
    // The caller's mute (privacy_frames.h): muted_until null with muted true is for ever.
    w.field("muted", s.muted.has_value());
    w.key("muted_until");
    if (s.muted && s.muted->until_ms) {
      w.int64(*s.muted->until_ms);
    } else {
      w.null();
    }
    w.end_object();
  }
  w.end_array();
  w.key("next_before");
  if (page.next_before) {
    w.uint64_as_string(page.next_before->raw());
  } else {
    w.null();
  }
  w.key("unread_conversations").uint64(page.unread_conversations);
  w.field("unread_conversations_capped", page.unread_conversations_capped);
  return w.end_object().take();
}

std::string encode_receipts_page(std::string_view ref, const ConversationId& conversation, MessageId message,
                                 const MessageReceipts& receipts) {
  auto w = start("RECEIPTS_PAGE", ref);
  w.field("conversation", conversation.str());
  w.key("message_id").uint64_as_string(message.value);
  w.key("read_count").uint64(receipts.read_count);
  w.key("readers");
  if (receipts.readers) {
    w.begin_array();
    for (const UserId& u : *receipts.readers) w.string(u.str());
    w.end_array();
  } else {
    w.null();
  }
  return w.end_object().take();
}

std::string encode_settings_ok(std::string_view ref, const std::map<std::string, std::string>& settings) {
  auto w = start("SETTINGS_OK", ref);
  w.key("settings").begin_object();
  for (const auto& [k, v] : settings) w.field(k, v);
  w.end_object();
  return w.end_object().take();
}

}  // namespace qim
