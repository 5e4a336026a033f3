#pragma once
// Identifiers of QIM. Strong types so a user id cannot be passed where a conversation id is expected.

#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qim {

// A bounded printable name: 1..64 bytes of [A-Za-z0-9_.:@-]. Used for users, devices, conversations.
template <typename Tag>
class Name {
 public:
  static constexpr size_t kMaxBytes = 64;

  Name() = default;
  // Validates `text`; InvalidArgument names the kind and the offending value.
  static Result<Name> parse(std::string_view text);
  // For trusted values already validated (decoded from our own storage after parse).
  static Name unchecked(std::string text) {
    Name n;
    n.value_ = std::move(text);
    return n;
  }

  const std::string& str() const { return value_; }
  bool empty() const { return value_.empty(); }
  auto operator<=>(const Name&) const = default;

 private:
  std::string value_;
};

struct UserTag {
  static constexpr std::string_view kKind = "user id";
};
struct DeviceTag {
  static constexpr std::string_view kKind = "device id";
};
struct ConversationTag {
  static constexpr std::string_view kKind = "conversation id";
};
struct DispatchTag {
  static constexpr std::string_view kKind = "dispatch id";
};

using UserId = Name<UserTag>;
using DeviceId = Name<DeviceTag>;
using ConversationId = Name<ConversationTag>;
// Deterministic per (message, shard), so a replayed Outbox record yields the same dispatch id.
using DispatchId = Name<DispatchTag>;

bool is_name_char(char c);

template <typename Tag>
Result<Name<Tag>> Name<Tag>::parse(std::string_view text) {
  if (text.empty() || text.size() > kMaxBytes) {
    return Error(Errc::kInvalidArgument, std::string(Tag::kKind) + " must be 1.." +
                                             std::to_string(kMaxBytes) + " bytes, got " +
                                             std::to_string(text.size()));
  }
  for (char c : text) {
    if (!is_name_char(c)) {
      return Error(Errc::kInvalidArgument, std::string(Tag::kKind) + " '" + std::string(text.substr(0, 64)) +
                                               "' has a character outside [A-Za-z0-9_.:@-]");
    }
  }
  return unchecked(std::string(text));
}

// Server message id: (outbox partition << 48) | outbox offset. Deterministic for a given Outbox record,
// so fanout replays and the archiver agree on it without coordination.
struct MessageId {
  uint64_t value = 0;
  auto operator<=>(const MessageId&) const = default;
};

// The one-to-one conversation of two users: "d:<smaller>:<larger>", the same whichever side sends.
Result<ConversationId> direct_conversation(const UserId& a, const UserId& b);

}  // namespace qim

template <typename Tag>
struct std::hash<qim::Name<Tag>> {
  size_t operator()(const qim::Name<Tag>& n) const noexcept { return std::hash<std::string>{}(n.str()); }
};
