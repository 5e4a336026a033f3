#include "inbox/unread_rule.h"

namespace qim {

bool is_system_entry(const Message& message) {
  return message.client_msg_id.starts_with(kSystemClientIdPrefix);
}

bool counts_as_unread(const MailboxEntry& entry) {
  return entry.message.sender != entry.user && !is_system_entry(entry.message);
}

}  // namespace qim
