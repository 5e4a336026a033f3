// A keyspace written before inbox_user (inbox schema 1 or 2: inbox_conversation, inbox_index and, from 2,
// inbox_activity) copied into it once, at open (decision 0169). The older tables are left as they are:
// a binary of the older version still running reads and writes them until it is replaced; an operator
// drops them once every process runs this one (docs/scylla-store.md, "Inbox").
#include <fmt/format.h>

#include <algorithm>

#include "inbox/cql/cql_inbox_backend.h"
#include "inbox/cql/inbox_cells.h"
#include "mailbox/scylla/cql/batch_writer.h"
#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/write_timestamps.h"

namespace qim {

namespace {

using cql::Values;
using scylla::lift;

// Every row `cql` selects, a page at a time (each page written and waited for before the next is read,
// so memory holds one page, whatever the keyspace's size).
Status each_page(const cql::Session& session, const cql::ExecOptions& plain, const std::string& cql,
                 std::string_view what, const std::function<Status(const cql::Rows&)>& page) {
  cql::ExecOptions o = plain;
  o.page_size = CqlInboxBackend::kPage;
  o.max_rows = 0;  // one page a request
  for (;;) {
    QIM_ASSIGN_OR_RETURN(cql::Rows rows, lift(session.query(cql, {}, o), std::string(what)));
    QIM_RETURN_IF_ERROR(page(rows));
    if (!rows.has_more_pages()) return {};
    o.paging_state = rows.paging_state();
  }
}

}  // namespace

Status CqlInboxBackend::migrate_to_user_partitions(int recorded) {
  // The remaining TTL is kept (a copy outlives nothing its original would not have); a row without one
  // (none is written so) gets the entries' TTL.
  auto ttl_of = [this](int32_t remaining) { return remaining > 0 ? remaining : ttl_seconds_; };
  const cql::BatchLimits limits{.max_statements = options_.batch_rows};

  // Index rows: identical cells, no timestamp (as entries_written writes them).
  QIM_RETURN_IF_ERROR(each_page(
      session_, plain(),
      fmt::format(
          "SELECT epoch, log_offset, message_id, sender, server_time_ms, preview, conversation, counts, "
          "user_id, TTL(message_id) FROM {}.inbox_index",
          options_.keyspace),
      fmt::format("inbox: copy inbox_index (schema {}) into inbox_user", recorded),
      [&](const cql::Rows& rows) -> Status {
        cql::BatchWriter writes(session_, plain(), limits);
        for (const cql::Row row : rows) {
          QIM_ASSIGN_OR_RETURN(inbox_cells::MigratedRow m, inbox_cells::migrated_index_row(row));
          const InboxEntryRef& r = m.entry;
          writes.add(index_write_, Values()
                                       .text(m.user.str())
                                       .text(m.conversation.str())
                                       .boolean(r.counts)
                                       .int32(static_cast<int32_t>(r.seq.epoch().value))
                                       .bigint(static_cast<int64_t>(r.seq.offset().value))
                                       .bigint(static_cast<int64_t>(r.message.value))
                                       .text(r.sender.str())
                                       .bigint(r.server_time_ms)
                                       .blob(std::string_view(r.preview))
                                       .int32(ttl_of(m.ttl_seconds)));
        }
        return lift(cql::wait_all(writes.finish()), "inbox: write copied index rows");
      }));

  // Conversation rows of every epoch, each with its position (a lower epoch's is stale, skipped and
  // dropped by the first reader, as the walk does with any), at the row's offset.
  return each_page(
      session_, plain(),
      fmt::format("SELECT conversation, epoch, log_offset, WRITETIME(log_offset), message_id, sender, "
                  "server_time_ms, counts, preview, user_id, TTL(log_offset) FROM {}.inbox_conversation",
                  options_.keyspace),
      fmt::format("inbox: copy inbox_conversation (schema {}) into inbox_user", recorded),
      [&](const cql::Rows& rows) -> Status {
        cql::BatchWriter writes(session_, plain(), limits);
        for (const cql::Row row : rows) {
          QIM_ASSIGN_OR_RETURN(inbox_cells::MigratedRow m, inbox_cells::migrated_conversation_row(row));
          const InboxEntryRef& r = m.entry;
          QIM_ASSIGN_OR_RETURN(int64_t ts, scylla::monotonic_max_timestamp(r.seq.offset(), "inbox_user"));
          const int32_t ttl = ttl_of(m.ttl_seconds);
          writes.keep_together(2);
          writes.add(conversation_write_, Values()
                                              .text(m.user.str())
                                              .text(m.conversation.str())
                                              .int32(static_cast<int32_t>(r.seq.epoch().value))
                                              .bigint(static_cast<int64_t>(r.seq.offset().value))
                                              .bigint(static_cast<int64_t>(r.message.value))
                                              .text(r.sender.str())
                                              .bigint(r.server_time_ms)
                                              .boolean(r.counts)
                                              .blob(std::string_view(r.preview))
                                              .bigint(ts)
                                              .int32(ttl));
          add_position(
              writes, m.user, ActivityPosition{r.seq, m.conversation}, ts,
              static_cast<int32_t>(std::min<int64_t>(ttl + kActivityTtlSlackSeconds, kMaxTtlSeconds)));
        }
        return lift(cql::wait_all(writes.finish()), "inbox: write copied conversation rows and positions");
      });
}

}  // namespace qim
