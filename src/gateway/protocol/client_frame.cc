#include "gateway/protocol/client_frame.h"

#include "lifecycle/reaction.h"

#include <simdjson.h>

#include "attachments/message_body.h"

#include <charconv>
#include <set>
#include <unordered_set>

namespace qim {

namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// Errors while reading one frame's fields; `ref` is filled in by the caller.
FrameError invalid(std::string message) {
  return FrameError{WireCode::kInvalidArgument, std::move(message), {}};
}

std::string quoted(std::string_view field) {
  return "'" + std::string(field) + "'";
}

// A field that must be a string when present.
std::variant<std::optional<std::string_view>, FrameError> optional_string(const object& o,
                                                                          std::string_view field) {
  element e;
  if (o.at_key(field).get(e) != simdjson::SUCCESS) return std::optional<std::string_view>{};
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS)
    return invalid("field " + quoted(field) + " must be a string");
  return std::optional<std::string_view>{s};
}

std::variant<std::string_view, FrameError> required_string(const object& o, std::string_view field) {
  auto v = optional_string(o, field);
  if (auto* e = std::get_if<FrameError>(&v)) return *e;
  auto s = std::get<0>(v);
  if (!s) return invalid("field " + quoted(field) + " is required");
  return *s;
}

// A 64-bit id or cursor: a decimal string (the form the server writes) or a non-negative integer.
std::variant<std::optional<uint64_t>, FrameError> optional_u64(const object& o, std::string_view field) {
  element e;
  if (o.at_key(field).get(e) != simdjson::SUCCESS) return std::optional<uint64_t>{};
  if (e.is_null()) return std::optional<uint64_t>{};
  uint64_t u = 0;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) return std::optional<uint64_t>{u};
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS && !s.empty() && s.size() <= 20) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), u);
    if (ec == std::errc() && end == s.data() + s.size()) return std::optional<uint64_t>{u};
  }
  return invalid("field " + quoted(field) + " must be an unsigned 64-bit integer or its decimal string");
}

std::variant<uint32_t, FrameError> limit_field(const object& o, uint32_t fallback, uint32_t max) {
  element e;
  if (o.at_key("limit").get(e) != simdjson::SUCCESS) return fallback;
  uint64_t u = 0;
  if (e.get_uint64().get(u) != simdjson::SUCCESS || u < 1 || u > max) {
    return invalid("field 'limit' must be an integer in 1.." + std::to_string(max));
  }
  return static_cast<uint32_t>(u);
}

template <typename N>
std::variant<N, FrameError> name_field(std::string_view field, std::string_view text) {
  auto n = N::parse(text);
  if (!n.ok()) return invalid("field " + quoted(field) + ": " + n.error().message());
  return std::move(n).value();
}

using Parsed = std::variant<ClientFrame, FrameError>;

// Each reader returns the frame body or the error; the macros keep them linear.
#define QIM_TAKE(lhs, expr)                                                         \
  auto QIM_CONCAT_(t_, __LINE__) = (expr);                                          \
  if (auto* err = std::get_if<FrameError>(&QIM_CONCAT_(t_, __LINE__))) return *err; \
  lhs = std::move(std::get<0>(QIM_CONCAT_(t_, __LINE__)))

Parsed read_auth(const object& o) {
  QIM_TAKE(std::string_view token, required_string(o, "token"));
  return ClientFrame{{}, AuthFrame{std::string(token)}};
}

Parsed read_send(const object& o, const FrameLimits& limits) {
  // Sending as someone else is impossible by construction; a frame that tries is refused, not ignored,
  // so the client learns its mistake instead of believing it sent as another user.
  for (std::string_view forbidden : {"sender", "from", "user"}) {
    element e;
    if (o.at_key(forbidden).get(e) == simdjson::SUCCESS) {
      return FrameError{WireCode::kForbidden,
                        "SEND must not carry " + quoted(forbidden) + ": the sender is the authenticated user",
                        {}};
    }
  }
  SendFrame send;
  QIM_TAKE(std::string_view id, required_string(o, "client_msg_id"));
  if (id.empty() || id.size() > kMaxClientMsgIdBytes)
    return invalid("field 'client_msg_id' must be 1.." + std::to_string(kMaxClientMsgIdBytes) + " bytes");
  send.client_msg_id = std::string(id);
  QIM_TAKE(std::optional<std::string_view> to, optional_string(o, "to"));
  QIM_TAKE(std::optional<std::string_view> conversation, optional_string(o, "conversation"));
  if (to.has_value() == conversation.has_value())
    return invalid("SEND needs exactly one of 'to' and 'conversation'");
  if (to) {
    QIM_TAKE(send.to, name_field<UserId>("to", *to));
  } else {
    QIM_TAKE(send.conversation, name_field<ConversationId>("conversation", *conversation));
  }
  QIM_TAKE(std::string_view body, required_string(o, "body"));
  if (body.size() > limits.max_body_bytes) {
    return FrameError{WireCode::kTooLarge,
                      "body is " + std::to_string(body.size()) + " bytes, over the limit of " +
                          std::to_string(limits.max_body_bytes),
                      {}};
  }
  element list;
  if (o.at_key("attachments").get(list) == simdjson::SUCCESS) {
    auto refs = parse_attachment_refs(list);
    if (auto* err = std::get_if<std::string>(&refs)) return invalid(std::move(*err));
    send.attachments = std::get<0>(std::move(refs));
  }
  if (body.empty() && send.attachments.empty()) return invalid("field 'body' must not be empty");
  // Only the server writes a body with attachments (after checking them): a client's may not pass for one.
  if (attachments::looks_like_attachment_body(body))
    return invalid("field 'body' must not start like a message with attachments; send 'attachments' instead");
  send.body = std::string(body);
  QIM_TAKE(std::optional<uint64_t> reply_to, optional_u64(o, "reply_to"));
  if (reply_to) send.reply_to = MessageId{*reply_to};
  return ClientFrame{{}, std::move(send)};
}

Parsed read_message_event(std::string_view type, const object& o, const FrameLimits& limits) {
  MessageEventFrame f;
  f.kind = type == "EDIT"     ? MessageEventKind::kEdit
           : type == "RECALL" ? MessageEventKind::kRecall
           : type == "REACT"  ? MessageEventKind::kReact
                              : MessageEventKind::kUnreact;
  QIM_TAKE(std::string_view id, required_string(o, "client_msg_id"));
  if (id.empty() || id.size() > kMaxClientMsgIdBytes)
    return invalid("field 'client_msg_id' must be 1.." + std::to_string(kMaxClientMsgIdBytes) + " bytes");
  if (id.starts_with("~"))
    return invalid("field 'client_msg_id' cannot start with '~' (the system entries' ids)");
  f.client_msg_id = std::string(id);
  QIM_TAKE(std::string_view conversation, required_string(o, "conversation"));
  QIM_TAKE(f.conversation, name_field<ConversationId>("conversation", conversation));
  QIM_TAKE(std::optional<uint64_t> target, optional_u64(o, "message_id"));
  if (!target) return invalid(std::string(type) + " needs field 'message_id'");
  f.target = MessageId{*target};
  if (f.kind == MessageEventKind::kEdit) {
    QIM_TAKE(std::string_view body, required_string(o, "body"));
    if (body.size() > limits.max_body_bytes) {
      return FrameError{WireCode::kTooLarge,
                        "body is " + std::to_string(body.size()) + " bytes, over the limit of " +
                            std::to_string(limits.max_body_bytes),
                        {}};
    }
    if (body.empty()) return invalid("field 'body' must not be empty (RECALL removes a message)");
    // As SEND's: only the server writes a body with attachments (an EDIT keeps the message's own).
    if (attachments::looks_like_attachment_body(body))
      return invalid("field 'body' must not start like a message with attachments; an EDIT keeps them");
    f.body = std::string(body);
  }
  if (is_reaction(f.kind)) {
    // Bounded here; whether it is an emoji is decide_event's rule (BAD_REACTION), so fanout applies it too.
    QIM_TAKE(std::string_view emoji, required_string(o, "emoji"));
    if (emoji.empty() || emoji.size() > kMaxReactionBytes)
      return invalid("field 'emoji' must be 1.." + std::to_string(kMaxReactionBytes) + " bytes");
    f.body = std::string(emoji);
  }
  return ClientFrame{{}, std::move(f)};
}

Parsed read_sync(const object& o) {
  SyncFrame sync;
  QIM_TAKE(std::optional<uint64_t> after, optional_u64(o, "after"));
  sync.after = MailboxSeq::from_raw(after.value_or(0));
  QIM_TAKE(sync.limit, limit_field(o, kDefaultSyncLimit, kMaxSyncLimit));
  return ClientFrame{{}, sync};
}

Parsed read_history(const object& o) {
  HistoryFrame history;
  QIM_TAKE(std::string_view conversation, required_string(o, "conversation"));
  QIM_TAKE(history.conversation, name_field<ConversationId>("conversation", conversation));
  QIM_TAKE(std::optional<uint64_t> before, optional_u64(o, "before"));
  if (before) history.before = MessageId{*before};
  QIM_TAKE(history.limit, limit_field(o, kDefaultHistoryLimit, kMaxHistoryLimit));
  return ClientFrame{{}, std::move(history)};
}

// "g:<group id>" in field `field`: a conversation id of kind group.
std::variant<GroupId, FrameError> group_field(const object& o, std::string_view field) {
  QIM_TAKE(std::string_view text, required_string(o, field));
  auto c = Conversation::parse(text);
  if (!c.ok()) return invalid("field " + quoted(field) + ": " + c.error().message());
  if (c->group_id() == nullptr) {
    return invalid("field " + quoted(field) + ": '" + c->id().str() + "' is not a group ('g:<group id>')");
  }
  return *c->group_id();
}

std::variant<std::vector<UserId>, FrameError> members_field(const object& o, bool required) {
  element e;
  std::vector<UserId> out;
  if (o.at_key("members").get(e) != simdjson::SUCCESS) {
    if (required) return invalid("field 'members' is required");
    return out;
  }
  simdjson::dom::array a;
  if (e.get_array().get(a) != simdjson::SUCCESS)
    return invalid("field 'members' must be an array of user ids");
  std::set<UserId> seen;
  for (element m : a) {
    std::string_view s;
    if (m.get_string().get(s) != simdjson::SUCCESS) return invalid("field 'members' must hold strings");
    if (out.size() == kMaxUsersPerGroupOp) {
      return invalid("field 'members' names more than " + std::to_string(kMaxUsersPerGroupOp) +
                     " users; send several frames");
    }
    QIM_TAKE(UserId user, name_field<UserId>("members", s));
    if (!seen.insert(user).second) return invalid("field 'members' names '" + user.str() + "' twice");
    out.push_back(std::move(user));
  }
  if (required && out.empty()) return invalid("field 'members' must name at least one user");
  return out;
}

std::variant<std::string, FrameError> group_name_field(const object& o) {
  QIM_TAKE(std::string_view name, required_string(o, "name"));
  if (name.empty() || name.size() > kMaxGroupNameBytes) {
    return invalid("field 'name' must be 1.." + std::to_string(kMaxGroupNameBytes) + " bytes");
  }
  return std::string(name);
}

Parsed read_group(std::string_view type, const object& o) {
  GroupFrame g;
  if (type == "GROUPS") {
    g.request = GroupRequest::kList;
    return ClientFrame{{}, std::move(g)};
  }
  if (type == "GROUP_CREATE") {
    g.request = GroupRequest::kCreate;
    QIM_TAKE(g.name, group_name_field(o));
    QIM_TAKE(g.members, members_field(o, false));
    return ClientFrame{{}, std::move(g)};
  }
  QIM_TAKE(g.group, group_field(o, "group"));
  if (type == "GROUP_ADD" || type == "GROUP_REMOVE") {
    g.request = type == "GROUP_ADD" ? GroupRequest::kAdd : GroupRequest::kRemove;
    QIM_TAKE(g.members, members_field(o, true));
  } else if (type == "GROUP_LEAVE") {
    g.request = GroupRequest::kLeave;
  } else if (type == "GROUP_RENAME") {
    g.request = GroupRequest::kRename;
    QIM_TAKE(g.name, group_name_field(o));
  } else if (type == "GROUP_ROLE") {
    g.request = GroupRequest::kRole;
    QIM_TAKE(std::string_view member, required_string(o, "member"));
    QIM_TAKE(UserId user, name_field<UserId>("member", member));
    g.members.push_back(std::move(user));
    QIM_TAKE(std::string_view role, required_string(o, "role"));
    if (role == "admin") {
      g.role = GroupRole::kAdmin;
    } else if (role == "member") {
      g.role = GroupRole::kMember;
    } else {
      return invalid("field 'role' must be 'admin' or 'member' (the owner is who created the group)");
    }
  } else {
    g.request = GroupRequest::kMembers;  // GROUP_MEMBERS
  }
  return ClientFrame{{}, std::move(g)};
}

#undef QIM_TAKE

Parsed read_frame(const object& o, const FrameLimits& limits) {
  element v;
  if (o.at_key("v").get(v) == simdjson::SUCCESS) {
    int64_t version = 0;
    if (v.get_int64().get(version) != simdjson::SUCCESS || version != kProtocolVersion) {
      return FrameError{WireCode::kUnsupportedVersion,
                        "this server speaks protocol version " + std::to_string(kProtocolVersion),
                        {}};
    }
  }
  element t;
  std::string_view type;
  if (o.at_key("type").get(t) != simdjson::SUCCESS || t.get_string().get(type) != simdjson::SUCCESS)
    return FrameError{WireCode::kBadFrame, "a frame needs a string field 'type'", {}};
  if (type == "AUTH") {
    auto auth = read_auth(o);
    if (auto* e = std::get_if<FrameError>(&auth)) e->auth = true;
    return auth;
  }
  if (type == "SEND") return read_send(o, limits);
  if (type == "SYNC") return read_sync(o);
  if (type == "EDIT" || type == "RECALL" || type == "REACT" || type == "UNREACT")
    return read_message_event(type, o, limits);
  if (type == "HISTORY") return read_history(o);
  if (type == "PING") return ClientFrame{{}, PingFrame{}};
  if (type == "TYPING" || type == "PRESENCE_SUBSCRIBE") {  // signal_frames.h
    auto f = read_signal_frame(type, o);
    if (auto* e = std::get_if<std::string>(&f)) return invalid(std::move(*e));
    if (auto* t = std::get_if<TypingFrame>(&f)) return ClientFrame{{}, std::move(*t)};
    return ClientFrame{{}, std::get<PresenceSubscribeFrame>(std::move(f))};
  }
  if (is_inbox_frame_type(type)) {  // READ, CONVERSATIONS, RECEIPTS, SETTINGS (inbox_frames.h)
    auto inbox = parse_inbox_frame(type, o);
    if (auto* e = std::get_if<InboxFrameError>(&inbox)) return FrameError{e->code, std::move(e->message), {}};
    return ClientFrame{{}, std::move(std::get<InboxFrame>(inbox))};
  }
  if (is_privacy_frame_type(type)) {  // BLOCK, UNBLOCK, BLOCKS, MUTE, UNMUTE, DELETE_FOR_ME
    auto privacy = parse_privacy_frame(type, o);
    if (auto* e = std::get_if<std::string>(&privacy)) return invalid(std::move(*e));
    return ClientFrame{{}, InboxFrame{std::get<PrivacyFrame>(std::move(privacy))}};
  }
  if (is_attachment_frame_type(type)) {  // ATTACH, ATTACHMENT_URL (attachment_frames.h)
    auto f = parse_attachment_frame(type, o);
    if (auto* e = std::get_if<std::string>(&f)) return invalid(std::move(*e));
    return ClientFrame{{}, std::get<AttachmentFrame>(std::move(f))};
  }
  for (std::string_view g : {"GROUPS", "GROUP_CREATE", "GROUP_ADD", "GROUP_REMOVE", "GROUP_LEAVE",
                             "GROUP_RENAME", "GROUP_ROLE", "GROUP_MEMBERS"}) {
    if (type == g) return read_group(type, o);
  }
  std::string shown(type.substr(0, 32));
  return FrameError{WireCode::kUnknownType, "unknown frame type '" + shown + "'", {}};
}

// The DOM parser refuses a number that does not fit in 64 bits as a whole-document error. This second,
// bounded pass (the frame is already within max_frame_bytes) finds the top-level field holding it, so the
// client hears which field is wrong rather than "not valid JSON", and reads the frame's ref on the way.
// `field` stays empty when no top-level field holds the number.
struct BadNumber {
  std::string field;
  std::string ref;
};

// Whether `token` is a number as JSON writes one (RFC 8259 section 6): -?(0|[1-9][0-9]*)(.[0-9]+)?
// ([eE][+-]?[0-9]+)?. The on-demand parser calls anything starting with '-' a number, -Infinity too.
bool is_json_number(std::string_view token) {
  while (!token.empty() &&
         (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' || token.back() == '\r'))
    token.remove_suffix(1);
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') ++i;
    return i > start;
  };
  if (i < token.size() && token[i] == '-') ++i;
  if (i < token.size() && token[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < token.size() && token[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == token.size();
}
BadNumber find_bad_number(std::string_view text) {
  BadNumber out;
  simdjson::padded_string padded(text);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  simdjson::ondemand::object o;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS || doc.get_object().get(o) != simdjson::SUCCESS)
    return out;
  for (auto field : o) {
    std::string_view key;
    simdjson::ondemand::value value;
    simdjson::ondemand::json_type type;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS ||
        field.value().get(value) != simdjson::SUCCESS || value.type().get(type) != simdjson::SUCCESS)
      break;
    if (key == "ref" && type == simdjson::ondemand::json_type::string) {
      std::string_view ref;
      if (value.get_string().get(ref) == simdjson::SUCCESS && ref.size() <= kMaxRefBytes) out.ref = ref;
      continue;
    }
    if (type != simdjson::ondemand::json_type::number) continue;
    simdjson::ondemand::number n;
    if (value.get_number().get(n) == simdjson::SUCCESS) continue;
    // Only a real JSON number out of range names its field; -Infinity is no JSON at all (BAD_FRAME).
    if (!is_json_number(value.raw_json_token())) return BadNumber{};
    if (out.field.empty()) out.field = std::string(key.substr(0, 32));
  }
  return out;
}

// The first top-level key that appears more than once. Two JSON parsers may disagree on which of two
// `to` fields counts (first or last), so a frame with a repeated key is refused rather than guessed at.
std::optional<std::string_view> repeated_key(const object& o) {
  std::unordered_set<std::string_view> seen;
  for (auto field : o) {
    if (!seen.insert(field.key).second) return field.key;
  }
  return std::nullopt;
}

}  // namespace

struct FrameParser::Impl {
  simdjson::dom::parser parser;
};

FrameParser::FrameParser() : impl_(std::make_unique<Impl>()) {}
FrameParser::~FrameParser() = default;

std::variant<ClientFrame, FrameError> FrameParser::parse(std::string_view text, const FrameLimits& limits) {
  element root;
  // parse() copies into its padded buffer when needed; it validates UTF-8 and nesting depth itself.
  if (auto err = impl_->parser.parse(text.data(), text.size()).get(root); err != simdjson::SUCCESS) {
    if (err == simdjson::NUMBER_ERROR || err == simdjson::NUMBER_OUT_OF_RANGE) {
      BadNumber bad = find_bad_number(text);
      if (!bad.field.empty()) {
        return FrameError{
            WireCode::kInvalidArgument,
            "field " + quoted(std::string_view(bad.field)) + " holds a number that does not fit in 64 bits",
            bad.ref};
      }
    }
    if (err == simdjson::UTF8_ERROR)
      return FrameError{WireCode::kBadFrame, "the frame is not valid UTF-8", {}};
    return FrameError{WireCode::kBadFrame, "the frame is not valid JSON", {}};
  }
  object o;
  if (root.get_object().get(o) != simdjson::SUCCESS)
    return FrameError{WireCode::kBadFrame, "a frame must be a JSON object", {}};

  // A repeated "ref" makes the ref itself ambiguous: then the error carries none.
  std::string ref;
  const auto repeated = repeated_key(o);
  element r;
  if (repeated != "ref" && o.at_key("ref").get(r) == simdjson::SUCCESS) {
    std::string_view s;
    if (r.get_string().get(s) != simdjson::SUCCESS || s.size() > kMaxRefBytes) {
      return FrameError{WireCode::kInvalidArgument,
                        "field 'ref' must be a string of at most " + std::to_string(kMaxRefBytes) + " bytes",
                        {}};
    }
    ref = std::string(s);
  }
  auto parsed = repeated ? Parsed(FrameError{WireCode::kInvalidArgument,
                                             "field " + quoted(repeated->substr(0, 32)) +
                                                 " appears more than once; every key must be unique",
                                             {}})
                         : read_frame(o, limits);
  std::visit([&](auto& f) { f.ref = ref; }, parsed);
  return parsed;
}

std::string FrameParser::peek_ref(std::string_view text) {
  element root;
  object o;
  if (impl_->parser.parse(text.data(), text.size()).get(root) != simdjson::SUCCESS ||
      root.get_object().get(o) != simdjson::SUCCESS || repeated_key(o) == "ref")
    return {};
  std::string_view s;
  if (o.at_key("ref").get_string().get(s) != simdjson::SUCCESS || s.size() > kMaxRefBytes) return {};
  return std::string(s);
}

}  // namespace qim
