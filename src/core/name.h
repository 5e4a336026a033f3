#pragma once
// Bounded printable names: users, devices, dispatch ids. Strong types so a user id cannot be passed where
// a device id is expected.

#include <compare>
#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qim {

// The name alphabet, [A-Za-z0-9_.@-]. It has no ':' on purpose: ':' separates the members of a
// conversation id ("d:<a>:<b>", core/conversation.h), so a name that held one would make two pairs of
// users spell the same conversation (docs/adr/0010-names-without-colon.md).
inline constexpr std::string_view kNameAlphabet = "[A-Za-z0-9_.@-]";

namespace name_detail {
// Every name of every record is checked when it is decoded, byte by byte: a table, inlined.
struct NameChars {
  bool allowed[256] = {};
  constexpr NameChars() {
    for (int c = 'a'; c <= 'z'; ++c) allowed[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) allowed[c] = true;
    for (int c = '0'; c <= '9'; ++c) allowed[c] = true;
    for (char c : std::string_view("_.@-")) allowed[static_cast<unsigned char>(c)] = true;
  }
};
inline constexpr NameChars kNameChars;
}  // namespace name_detail

constexpr bool is_name_char(char c) {
  return name_detail::kNameChars.allowed[static_cast<unsigned char>(c)];
}

// `text` shown in an error message: at most `max` bytes, anything outside printable ASCII as \xHH.
std::string shown_text(std::string_view text, size_t max = 64);

// Ok iff `text` is 1..max_bytes bytes of the name alphabet; otherwise InvalidArgument naming `kind`,
// the value and the first offending byte and its position.
Status check_name(std::string_view kind, std::string_view text, size_t max_bytes);

// A name: 1..64 bytes of [A-Za-z0-9_.@-].
template <typename Tag>
class Name {
 public:
  static constexpr size_t kMaxBytes = 64;

  Name() = default;
  // Validates `text`; InvalidArgument names the kind, the offending value and what is wrong with it.
  static Result<Name> parse(std::string_view text) {
    QIM_RETURN_IF_ERROR(check_name(Tag::kKind, text, kMaxBytes));
    return unchecked(std::string(text));
  }
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
struct DispatchTag {
  static constexpr std::string_view kKind = "dispatch id";
};
struct GroupTag {
  static constexpr std::string_view kKind = "group id";
};

using UserId = Name<UserTag>;
using DeviceId = Name<DeviceTag>;
// Deterministic per (message, shard), so a replayed Outbox record yields the same dispatch id.
using DispatchId = Name<DispatchTag>;
// A group conversation's id, "g:<group id>": minted at random by the gateway at GROUP_CREATE.
using GroupId = Name<GroupTag>;

}  // namespace qim

template <typename Tag>
struct std::hash<qim::Name<Tag>> {
  size_t operator()(const qim::Name<Tag>& n) const noexcept { return std::hash<std::string>{}(n.str()); }
};
