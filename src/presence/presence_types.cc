#include "presence/presence_types.h"

namespace qim {

std::string_view presence_privacy_name(PresencePrivacy p) {
  switch (p) {
    case PresencePrivacy::kEveryone:
      return "everyone";
    case PresencePrivacy::kContacts:
      return "contacts";
    case PresencePrivacy::kNobody:
      return "nobody";
  }
  return "nobody";
}

std::optional<PresencePrivacy> parse_presence_privacy(std::string_view text) {
  if (text == "everyone") return PresencePrivacy::kEveryone;
  if (text == "contacts") return PresencePrivacy::kContacts;
  if (text == "nobody") return PresencePrivacy::kNobody;
  return std::nullopt;
}

}  // namespace qim
