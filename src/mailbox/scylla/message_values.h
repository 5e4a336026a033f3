#pragma once
// The columns of a message, bound in the one order both its CQL homes keep them: the mailbox entry
// (mailbox_entry, after its user and seq) and the history row (history_message). One list, so a column
// added to Message is added to both statements' values at once.

#include <cstdint>
#include <string_view>

#include "mailbox/message.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim::scylla {

// Appends id, conversation, sender, sender_device, client_msg_id, server_time_ms, body, reply_to to
// `values`. reply_to (docs/adr/0125) is unset for a plain message: no cell, no tombstone, as before replies.
inline cql::Values& bind_message_columns(cql::Values& values, const Message& m) {
  values.bigint(static_cast<int64_t>(m.id.value))
      .text(m.conversation.str())
      .text(m.sender.str())
      .text(m.sender_device.str())
      .text(m.client_msg_id)
      .bigint(m.server_time_ms)
      .blob(std::string_view(m.body));
  return m.reply_to ? values.bigint(static_cast<int64_t>(m.reply_to->value)) : values.unset();
}

}  // namespace qim::scylla
