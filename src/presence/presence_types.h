#pragma once
// What presence is made of (docs/protocol.md "Typing and presence", docs/adr/0081): a user is online
// while any of their connections is live on any gateway; offline with the time the last one closed (last
// seen); and each user chooses who may see it (the inbox setting "presence").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/name.h"

namespace qim {

enum class PresencePrivacy : uint8_t {
  kEveryone,  // anybody who subscribes
  kContacts,  // the users who share a direct conversation with them
  kNobody,    // nobody: shown offline, without a last seen
};

// "everyone", "contacts", "nobody".
std::string_view presence_privacy_name(PresencePrivacy p);
// nullopt for any other text.
std::optional<PresencePrivacy> parse_presence_privacy(std::string_view text);

// A user's presence as the deployment knows it (before privacy is applied for a watcher).
struct PresenceRecord {
  bool online = false;
  std::optional<int64_t> last_seen;  // ms since the epoch the user went offline; none if never seen
  PresencePrivacy privacy = PresencePrivacy::kEveryone;  // as of the user's last change
  bool operator==(const PresenceRecord&) const = default;
};

// A change of one user's presence, as every gateway hears it.
struct PresenceChange {
  UserId user;
  PresenceRecord record;
  // Only the privacy changed (not online/offline): watchers that may no longer see the user are told
  // "offline, no last seen"; the others the record.
  bool privacy_only = false;
};

}  // namespace qim
