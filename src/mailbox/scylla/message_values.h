#pragma once
// The columns of a message, bound in the one order both its CQL homes keep them: the mailbox entry
// (mailbox_entry, after its user and seq) and the history row (history_message). One list, so a column
// added to Message is added to both statements' values at once.

#include <cstdint>
#include <string_view>

#include "mailbox/message.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim::scylla {

// Appends id, conversation, sender, sender_device, client_msg_id, server_time_ms, body to `values`.
inline cql::Values& bind_message_columns(cql::Values& values, const Message& m) {
  return values.bigint(static_cast<int64_t>(m.id.value))
      .text(m.conversation.str())
      .text(m.sender.str())
      .text(m.sender_device.str())
      .text(m.client_msg_id)
      .bigint(m.server_time_ms)
      .blob(std::string_view(m.body));
}

}  // namespace qim::scylla
