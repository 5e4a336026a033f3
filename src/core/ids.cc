#include "core/ids.h"

namespace qim {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == ':' || c == '@' || c == '-';
}

Result<ConversationId> direct_conversation(const UserId& a, const UserId& b) {
  const auto& lo = a.str() < b.str() ? a.str() : b.str();
  const auto& hi = a.str() < b.str() ? b.str() : a.str();
  return ConversationId::parse("d:" + lo + ":" + hi);
}

}  // namespace qim
