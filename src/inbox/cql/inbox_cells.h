#pragma once
// Reading the inbox tables' rows (cql_inbox_backend.h), column by column in the order the backend's
// SELECTs name them. A cell that is missing, of the wrong type or out of range is CorruptEntry naming
// table and column; so is an ordered cell whose WRITETIME is not the value it was written with (a write
// not made by this backend: a wall-clock one would win over every later write forever).

#include <string>
#include <utility>

#include "core/status.h"
#include "inbox/inbox_backend.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim::inbox_cells {

// Columns: conversation, epoch, log_offset (the row's entry's offset), WRITETIME(log_offset), message_id,
// sender, server_time_ms, counts, preview. `table` names it in errors.
Result<ConversationRow> conversation_row(const cql::Row& row, const char* table = "inbox_user (a row)");
// Columns: epoch, log_offset, message_id, sender, server_time_ms, preview (`counts` is the slice read).
Result<InboxEntryRef> index_row(const cql::Row& row, bool counts,
                                const char* table = "inbox_user (an index row)");
// Columns: epoch, log_offset, positioned (the conversation).
Result<ActivityPosition> activity_position(const cql::Row& row);
// A row of the tables before inbox_user (inbox schema 1 and 2), as the migration copies it: whose, of
// which conversation, the entry, its remaining TTL (0: none).
struct MigratedRow {
  UserId user;
  ConversationId conversation;
  InboxEntryRef entry;
  int32_t ttl_seconds = 0;
};
// Columns: as conversation_row's, then user_id, TTL(log_offset).
Result<MigratedRow> migrated_conversation_row(const cql::Row& row);
// Columns: as index_row's, then conversation, counts, user_id, TTL(message_id).
Result<MigratedRow> migrated_index_row(const cql::Row& row);
// Columns: conversation, epoch, read_offset, WRITETIME(read_offset).
Result<ReadMark> read_mark(const cql::Row& row);
// Columns: user_id, read_through, WRITETIME(read_through) (= the message id's offset).
Result<ReceiptMark> receipt(const cql::Row& row, const ConversationId& c);
// Columns: name, value, version, WRITETIME(value) (= version).
Result<std::pair<std::string, std::string>> setting(const cql::Row& row, const UserId& user);

}  // namespace qim::inbox_cells
