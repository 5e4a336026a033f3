// ScyllaFrontierBackend's redactions (docs/adr/0129, 0157, 0164), apart from the ADR-0022 statements in
// frontier_backend.cc: a recalled SEND's body cell deleted above its write time, and a recalled message's
// edit entries written again without their text.
#include <fmt/format.h>

#include <algorithm>

#include "mailbox/scylla/cql_cells.h"
#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/frontier_backend.h"
#include "mailbox/scylla/message_values.h"

namespace qim::scylla {

using cql::Values;

namespace {

// The entry's key columns, bound after `before` (the values of markers that come first).
Values entry_key_values(const EntryKey& k, Values before = Values()) {
  before.text(k.user.str())
      .int32(static_cast<int32_t>(k.seq.epoch().value))
      .bigint(static_cast<int64_t>(k.seq.offset().value));
  return before;
}

// Columns of entry_body_read_ after the entry's own (0..9, as decode_entry reads them).
constexpr size_t kTtlColumn = 10, kRowWritetimeColumn = 11, kBodyWritetimeColumn = 12;
// Columns of entry_writetime_read_.
constexpr size_t kRowWrittenColumn = 0, kBodyWrittenColumn = 1;

}  // namespace

Status ScyllaFrontierBackend::redact_entries(std::span<const EntryKey> entries) {
  std::vector<cql::PendingResult> reads;
  reads.reserve(entries.size());
  for (const auto& k : entries) {
    counters_.reads++;
    reads.push_back(session_.execute_async(entry_writetime_read_, entry_key_values(k), plain_options()));
  }
  cql::BatchWriter writes(session_, plain_options(), batch_limits());
  Status failed;
  for (size_t i = 0; i < entries.size() && failed.ok(); ++i) {
    failed = [&]() -> Status {
      const cql::Result<cql::Rows>& rows = reads[i].get();
      if (!rows.ok()) return to_error(rows.error(), "read mailbox entry write times");
      if (rows->empty()) return {};  // never written, or expired: nothing is created
      const cql::Row row = (*rows)[0];
      if (row.is_null(kBodyWrittenColumn)) return {};  // no body cell (redacted already): nothing to delete
      // Above both the row's write and the body's (one INSERT: one time; the body's may be later), on
      // whichever clock stamped them (docs/adr/0164).
      QIM_ASSIGN_OR_RETURN(int64_t written,
                           cell(row.get_i64(kBodyWrittenColumn), "WRITETIME(mailbox_entry.body)"));
      if (!row.is_null(kRowWrittenColumn)) {
        QIM_ASSIGN_OR_RETURN(int64_t row_written,
                             cell(row.get_i64(kRowWrittenColumn), "WRITETIME(mailbox_entry.message_id)"));
        written = std::max(written, row_written);
      }
      counters_.updates++;
      writes.add(entry_redact_, entry_key_values(entries[i], Values().bigint(written + 1)));
      return {};
    }();
  }
  // Every write started is waited for, even after a failed read (none is left in flight).
  Status written = lift(cql::wait_all(writes.finish()), "redact mailbox entries");
  QIM_RETURN_IF_ERROR(failed);
  return written;
}

Status ScyllaFrontierBackend::redact_edit_entries(std::span<const EntryKey> entries,
                                                  const EntryBodyRedaction& redact) {
  std::vector<cql::PendingResult> reads;
  reads.reserve(entries.size());
  for (const auto& k : entries) {
    counters_.reads++;
    reads.push_back(session_.execute_async(entry_body_read_, entry_key_values(k), plain_options()));
  }
  cql::BatchWriter writes(session_, plain_options(), batch_limits());
  Status failed;
  for (size_t i = 0; i < entries.size() && failed.ok(); ++i) {
    failed = [&]() -> Status {
      const cql::Result<cql::Rows>& rows = reads[i].get();
      if (!rows.ok()) return to_error(rows.error(), "read mailbox entry");
      if (rows->empty()) return {};  // never written, or expired: nothing is created
      const cql::Row row = (*rows)[0];
      QIM_ASSIGN_OR_RETURN(MailboxEntry e, decode_entry(entries[i].user, row));
      std::optional<std::string> body = redact(e.message.client_msg_id, e.message.body);
      if (!body) return {};
      e.message.body = *std::move(body);
      // The row's remaining TTL (null: written without one, kept so with 0), and a timestamp above every
      // cell the entry's write made (one INSERT: one time; the body's may be a later redaction's).
      int32_t ttl = 0;
      if (!row.is_null(kTtlColumn)) {
        QIM_ASSIGN_OR_RETURN(ttl, cell(row.get_i32(kTtlColumn), "TTL(mailbox_entry.message_id)"));
      }
      QIM_ASSIGN_OR_RETURN(int64_t written,
                           cell(row.get_i64(kRowWritetimeColumn), "WRITETIME(mailbox_entry.message_id)"));
      if (!row.is_null(kBodyWritetimeColumn)) {
        QIM_ASSIGN_OR_RETURN(int64_t body_written,
                             cell(row.get_i64(kBodyWritetimeColumn), "WRITETIME(mailbox_entry.body)"));
        written = std::max(written, body_written);
      }
      Values values = entry_key_values(entries[i]);
      bind_message_columns(values, e.message).int32(std::max(ttl, 0)).bigint(written + 1);
      counters_.updates++;
      writes.add(entry_body_write_, std::move(values));
      return {};
    }();
  }
  // Every write started is waited for, even after a failed read (none is left in flight).
  Status written = lift(cql::wait_all(writes.finish()), "redact edit entries");
  QIM_RETURN_IF_ERROR(failed);
  return written;
}

}  // namespace qim::scylla
