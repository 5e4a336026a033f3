#pragma once
// Conversation identity: the one place a conversation id is read (docs/protocol.md, "Names").
//
// A conversation id is "<kind>:<rest>". The only kind today is direct, "d:<a>:<b>": the one-to-one
// conversation of users a and b with a <= b bytewise (a == b is a note to self). User ids cannot hold
// ':' (core/name.h), so such an id has exactly one reading. Every other spelling (members out of order,
// more or fewer than two members, an unknown kind) is refused with an error naming the problem; nothing
// anywhere decides membership by how text "fits" an id. A later kind (groups, "g:<id>") is one more
// ConversationKind and one more alternative of Conversation's form.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/name.h"
#include "core/status.h"

namespace qim {

// Groups: "g:<group id>" (a name, core/name.h), minted by the gateway; who belongs to it is not in the
// id but in the group store (src/groups/), decided by fanout at each Outbox offset.

// The canonical text of a conversation: what travels on the wire and in Outbox records, and what
// history rows are keyed by. parse() admits only what Conversation::parse reads, so two conversations
// never share an id and one conversation has one id.
class ConversationId {
 public:
  static constexpr size_t kMaxBytes = 2 + UserId::kMaxBytes + 1 + UserId::kMaxBytes;  // "d:<64>:<64>"

  ConversationId() = default;  // empty: no conversation
  // `text` if Conversation::parse reads it; its InvalidArgument otherwise.
  static Result<ConversationId> parse(std::string_view text);
  // For values already validated, and for tests that need a malformed id. Readers that need the kind or
  // the members go through Conversation::of, which checks again.
  static ConversationId unchecked(std::string text) {
    ConversationId c;
    c.value_ = std::move(text);
    return c;
  }

  const std::string& str() const { return value_; }
  bool empty() const { return value_.empty(); }
  auto operator<=>(const ConversationId&) const = default;

 private:
  std::string value_;
};

enum class ConversationKind : uint8_t {
  kDirect,  // "d:<a>:<b>"
  kGroup,   // "g:<group id>"
};

// The parties of a direct conversation.
struct DirectPair {
  UserId low;   // low <= high bytewise
  UserId high;  // equal to low for a note to self

  bool has(const UserId& user) const { return user == low || user == high; }
  // The other party as seen by `member` (`member` itself for a note to self); nullopt for a non-party.
  std::optional<UserId> peer_of(const UserId& member) const;
};

// A parsed conversation id: its kind and what that kind names. Immutable; cheap to copy.
class Conversation {
 public:
  // The one parser of conversation ids. InvalidArgument, naming the id and the problem, for: an empty
  // id or one over ConversationId::kMaxBytes; no "<kind>:" prefix or an unknown kind; a direct id that
  // does not name exactly two members; a member that is not a valid user id; members out of byte order
  // (the other spelling of the same pair: only one spelling exists).
  static Result<Conversation> parse(std::string_view text);
  // `id` read back. InvalidArgument for an empty id, or one made by ConversationId::unchecked that does
  // not parse.
  static Result<Conversation> of(const ConversationId& id);
  // The direct conversation of a and b, the same whichever comes first. InvalidArgument if either is not
  // a valid user id (an empty one, or one made by UserId::unchecked).
  static Result<Conversation> direct(const UserId& a, const UserId& b);
  // The group conversation "g:<group>". InvalidArgument if `group` is not a valid group id.
  static Result<Conversation> group(const GroupId& group);

  ConversationKind kind() const { return static_cast<ConversationKind>(form_.index()); }
  const ConversationId& id() const { return id_; }
  // The parties when kind() is kDirect; nullptr for any other kind.
  const DirectPair* direct_pair() const { return std::get_if<DirectPair>(&form_); }
  // The group when kind() is kGroup; nullptr for any other kind.
  const GroupId* group_id() const { return std::get_if<GroupId>(&form_); }

 private:
  Conversation(ConversationId id, std::variant<DirectPair, GroupId> form)
      : id_(std::move(id)), form_(std::move(form)) {}

  ConversationId id_;
  std::variant<DirectPair, GroupId> form_;
};

// The one-to-one conversation of two users, "d:<smaller>:<larger>", the same whichever side sends.
// InvalidArgument if either is not a valid user id.
Result<ConversationId> direct_conversation(const UserId& a, const UserId& b);

}  // namespace qim

template <>
struct std::hash<qim::ConversationId> {
  size_t operator()(const qim::ConversationId& c) const noexcept { return std::hash<std::string>{}(c.str()); }
};
