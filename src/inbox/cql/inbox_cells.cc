#include "inbox/cql/inbox_cells.h"

#include <fmt/format.h>

#include "mailbox/scylla/cql_cells.h"

namespace qim::inbox_cells {

namespace {

using scylla::cell;
using scylla::name_cell;

// (epoch, offset) read back as the seq they are; CorruptEntry if out of range.
Result<MailboxSeq> seq_cells(const cql::Row& row, size_t epoch_col, size_t offset_col, const char* table) {
  QIM_ASSIGN_OR_RETURN(int32_t epoch, cell(row.get_i32(epoch_col), table));
  QIM_ASSIGN_OR_RETURN(int64_t offset, cell(row.get_i64(offset_col), table));
  auto seq = compose(Epoch{static_cast<uint32_t>(epoch)}, Offset{static_cast<uint64_t>(offset)});
  if (epoch < 0 || offset < 0 || !seq.ok()) {
    return Error(Errc::kCorruptEntry,
                 fmt::format("{}: epoch {} offset {} out of range", table, epoch, offset));
  }
  return *seq;
}

// An ordered cell's WRITETIME must be what the backend wrote it with.
Status check_writetime(const cql::Row& row, size_t col, int64_t expected, const char* table,
                       const std::string& of) {
  QIM_ASSIGN_OR_RETURN(int64_t writetime, cell(row.get_i64(col), table));
  if (writetime != expected) {
    return Error(Errc::kCorruptEntry,
                 fmt::format("{} of {}: WRITETIME {} != {} (a write not made by the inbox: "
                             "it would win over every later one)",
                             table, of, writetime, expected));
  }
  return {};
}

std::string blob_cell(const cql::Row& row, size_t col) {
  if (row.is_null(col)) return {};
  auto b = row.get_blob(col);
  if (!b.ok()) return {};
  return std::string(reinterpret_cast<const char*>(b->data()), b->size());
}

// message_id, sender, server_time_ms at `col`, `col + 1`, `col + 2`; preview at `preview_col`.
Status entry_cells(const cql::Row& row, size_t col, size_t preview_col, const char* table,
                   InboxEntryRef& out) {
  QIM_ASSIGN_OR_RETURN(int64_t id, cell(row.get_i64(col), table));
  out.message = MessageId{static_cast<uint64_t>(id)};
  QIM_ASSIGN_OR_RETURN(out.sender, name_cell<UserId>(row, col + 1, table));
  QIM_ASSIGN_OR_RETURN(out.server_time_ms, cell(row.get_i64(col + 2), table));
  if (!row.is_null(preview_col) && !row.get_blob(preview_col).ok()) {
    return Error(Errc::kCorruptEntry, std::string(table) + ": preview is not a blob");
  }
  out.preview = blob_cell(row, preview_col);
  return {};
}

}  // namespace

Result<ConversationRow> conversation_row(const cql::Row& row, const char* kTable) {
  ConversationRow out;
  QIM_ASSIGN_OR_RETURN(out.conversation, name_cell<ConversationId>(row, 0, kTable));
  QIM_ASSIGN_OR_RETURN(out.last.seq, seq_cells(row, 1, 2, kTable));
  QIM_RETURN_IF_ERROR(check_writetime(row, 3, static_cast<int64_t>(out.last.seq.offset().value), kTable,
                                      out.conversation.str()));
  QIM_RETURN_IF_ERROR(entry_cells(row, 4, 8, kTable, out.last));
  QIM_ASSIGN_OR_RETURN(out.last.counts, cell(row.get_bool(7), kTable));
  return out;
}

Result<InboxEntryRef> index_row(const cql::Row& row, bool counts, const char* kTable) {
  InboxEntryRef out;
  QIM_ASSIGN_OR_RETURN(out.seq, seq_cells(row, 0, 1, kTable));
  QIM_RETURN_IF_ERROR(entry_cells(row, 2, 5, kTable, out));
  out.counts = counts;
  return out;
}

Result<ActivityPosition> activity_position(const cql::Row& row) {
  constexpr const char* kTable = "inbox_user (a position)";
  ActivityPosition out;
  QIM_ASSIGN_OR_RETURN(out.seq, seq_cells(row, 0, 1, kTable));
  QIM_ASSIGN_OR_RETURN(out.conversation, name_cell<ConversationId>(row, 2, kTable));
  return out;
}

namespace {

// user_id at `col`, the TTL at `col + 1` (null: none, 0).
Status owner_cells(const cql::Row& row, size_t col, const char* table, MigratedRow& out) {
  QIM_ASSIGN_OR_RETURN(out.user, name_cell<UserId>(row, col, table));
  if (!row.is_null(col + 1)) {
    QIM_ASSIGN_OR_RETURN(out.ttl_seconds, cell(row.get_i32(col + 1), table));
  }
  return {};
}

}  // namespace

Result<MigratedRow> migrated_conversation_row(const cql::Row& row) {
  constexpr const char* kTable = "inbox_conversation";
  QIM_ASSIGN_OR_RETURN(ConversationRow r, conversation_row(row, kTable));
  MigratedRow out{.conversation = std::move(r.conversation), .entry = std::move(r.last)};
  QIM_RETURN_IF_ERROR(owner_cells(row, 9, kTable, out));
  return out;
}

Result<MigratedRow> migrated_index_row(const cql::Row& row) {
  constexpr const char* kTable = "inbox_index";
  QIM_ASSIGN_OR_RETURN(bool counts, cell(row.get_bool(7), kTable));
  QIM_ASSIGN_OR_RETURN(InboxEntryRef entry, index_row(row, counts, kTable));
  MigratedRow out{.entry = std::move(entry)};
  QIM_ASSIGN_OR_RETURN(out.conversation, name_cell<ConversationId>(row, 6, kTable));
  QIM_RETURN_IF_ERROR(owner_cells(row, 8, kTable, out));
  return out;
}

Result<ReadMark> read_mark(const cql::Row& row) {
  constexpr const char* kTable = "inbox_read_mark";
  ReadMark out;
  QIM_ASSIGN_OR_RETURN(out.conversation, name_cell<ConversationId>(row, 0, kTable));
  QIM_ASSIGN_OR_RETURN(out.seq, seq_cells(row, 1, 2, kTable));
  QIM_RETURN_IF_ERROR(
      check_writetime(row, 3, static_cast<int64_t>(out.seq.offset().value), kTable, out.conversation.str()));
  return out;
}

Result<ReceiptMark> receipt(const cql::Row& row, const ConversationId& c) {
  constexpr const char* kTable = "inbox_receipt";
  ReceiptMark out;
  QIM_ASSIGN_OR_RETURN(out.user, name_cell<UserId>(row, 0, kTable));
  QIM_ASSIGN_OR_RETURN(int64_t id, cell(row.get_i64(1), kTable));
  out.read_through = MessageId{static_cast<uint64_t>(id)};
  QIM_RETURN_IF_ERROR(check_writetime(row, 2, static_cast<int64_t>(out.read_through.value & kMaxOffset),
                                      kTable, out.user.str() + " in " + c.str()));
  return out;
}

Result<std::pair<std::string, std::string>> setting(const cql::Row& row, const UserId& user) {
  constexpr const char* kTable = "inbox_setting";
  QIM_ASSIGN_OR_RETURN(auto name, cell(row.get_text(0), kTable));
  QIM_ASSIGN_OR_RETURN(auto value, cell(row.get_text(1), kTable));
  QIM_ASSIGN_OR_RETURN(int64_t version, cell(row.get_i64(2), kTable));
  QIM_RETURN_IF_ERROR(check_writetime(row, 3, version, kTable, std::string(name) + " of " + user.str()));
  return std::pair(std::string(name), std::string(value));
}

}  // namespace qim::inbox_cells
