// The activity index on CQL (docs/adr/0089, 0143): the positions of a user's conversation rows in one
// partition clustered by seq, written blind beside the rows (cql_inbox_backend.cc), read a slice at a time
// by the walk (inbox/activity_walk.h), the stale ones deleted at their own timestamp.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "inbox/cql/cql_inbox_backend.h"
#include "inbox/cql/inbox_cells.h"
#include "mailbox/scylla/component_schema.h"
#include "mailbox/scylla/cql/batch_writer.h"
#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/write_timestamps.h"

namespace qim {

namespace {

using cql::Values;
using scylla::lift;

int32_t epoch_of(MailboxSeq s) {
  return static_cast<int32_t>(s.epoch().value);
}
int64_t offset_of(MailboxSeq s) {
  return static_cast<int64_t>(s.offset().value);
}

}  // namespace

Status CqlInboxBackend::prepare_activity() {
  auto one = [this](cql::Prepared& into, const char* text) -> Status {
    QIM_ASSIGN_OR_RETURN(into, scylla::prepare_in_keyspace(session_, options_.keyspace, text, "inbox"));
    return {};
  };
  // kind 2, a position: (epoch, log_offset, positioned) in the key, conversation '' and counts false, so
  // a user's positions are one slice in seq order.
  QIM_RETURN_IF_ERROR(
      one(activity_write_,
          "INSERT INTO {ks}.inbox_user (user_id, kind, conversation, counts, epoch, log_offset, positioned) "
          "VALUES (?, 2, '', false, ?, ?, ?) USING TIMESTAMP ? AND TTL ?"));
  // Both bounds on (epoch, log_offset): the slice runs in clustering order, highest seq first.
  QIM_RETURN_IF_ERROR(
      one(activity_read_,
          "SELECT epoch, log_offset, positioned FROM {ks}.inbox_user WHERE user_id = ? AND kind = 2 "
          "AND conversation = '' AND counts = false AND (epoch, log_offset) > (?, ?) "
          "AND (epoch, log_offset) < (?, ?) LIMIT ?"));
  QIM_RETURN_IF_ERROR(one(
      activity_delete_,
      "DELETE FROM {ks}.inbox_user USING TIMESTAMP ? WHERE user_id = ? AND kind = 2 AND conversation = '' "
      "AND counts = false AND epoch = ? AND log_offset = ? AND positioned = ?"));
  QIM_RETURN_IF_ERROR(
      one(rows_in_read_,
          "SELECT conversation, epoch, last_offset, WRITETIME(last_offset), message_id, sender, "
          "server_time_ms, last_counts, preview FROM {ks}.inbox_user WHERE user_id = ? AND kind = 1 "
          "AND conversation IN ?"));
  return one(marks_in_read_,
             "SELECT conversation, epoch, read_offset, WRITETIME(read_offset) FROM {ks}.inbox_read_mark "
             "WHERE user_id = ? AND conversation IN ?");
}

void CqlInboxBackend::add_position(cql::BatchWriter& writes, const UserId& user, const ActivityPosition& p,
                                   int64_t ts, int32_t ttl_seconds) {
  writes.add(activity_write_, Values()
                                  .text(user.str())
                                  .int32(epoch_of(p.seq))
                                  .bigint(offset_of(p.seq))
                                  .text(p.conversation.str())
                                  .bigint(ts)
                                  .int32(ttl_seconds));
  counters_.inserts++;
}

Result<std::vector<ActivityPosition>> CqlInboxBackend::activity_desc(const UserId& user, MailboxSeq after,
                                                                     MailboxSeq before, uint32_t limit) {
  std::vector<ActivityPosition> out;
  if (before <= after || limit == 0) return out;
  counters_.reads++;
  round_trips_++;
  QIM_ASSIGN_OR_RETURN(
      cql::Rows rows,
      lift(session_.execute(activity_read_,
                            Values()
                                .text(user.str())
                                .int32(epoch_of(after))
                                .bigint(offset_of(after))
                                .int32(epoch_of(before))
                                .bigint(offset_of(before))
                                .int32(static_cast<int32_t>(std::min<uint32_t>(limit, INT32_MAX))),
                            plain()),
           "inbox: read activity of " + user.str()));
  rows_read_ += rows.size();
  out.reserve(rows.size());
  for (const cql::Row row : rows) {
    QIM_ASSIGN_OR_RETURN(ActivityPosition p, inbox_cells::activity_position(row));
    out.push_back(std::move(p));
  }
  return out;
}

Status CqlInboxBackend::read_in(const cql::Prepared& statement, const UserId& user,
                                std::span<const ConversationId> conversations, std::string_view what,
                                const std::function<Status(const cql::Row&)>& each) {
  // Each conversation once: the list stays short, the answer free of repeats.
  const std::set<ConversationId> unique(conversations.begin(), conversations.end());
  std::vector<cql::PendingResult> pending;
  std::vector<std::string> names;
  auto send = [&] {
    pending.push_back(session_.execute_async(statement, Values().text(user.str()).text_list(names), plain()));
    counters_.reads++;
    names.clear();
  };
  for (const ConversationId& c : unique) {
    names.push_back(c.str());
    if (names.size() == kInList) send();
  }
  if (!names.empty()) send();
  if (!pending.empty()) round_trips_++;  // sent together, waited for together
  for (const cql::PendingResult& p : pending) {
    const cql::Result<cql::Rows>& rows = p.get();
    if (!rows.ok())
      return scylla::to_error(rows.error(), "inbox: " + std::string(what) + " of " + user.str());
    rows_read_ += rows->size();
    for (const cql::Row row : *rows) QIM_RETURN_IF_ERROR(each(row));
  }
  return {};
}

// Per conversation its highest epoch's row, as conversation_rows() keeps.
Result<std::vector<std::optional<InboxEntryRef>>> CqlInboxBackend::rows_of(
    const UserId& user, std::span<const ConversationId> conversations) {
  std::vector<std::optional<InboxEntryRef>> out(conversations.size());
  if (conversations.empty()) return out;
  std::map<ConversationId, InboxEntryRef> highest;
  QIM_RETURN_IF_ERROR(read_in(rows_in_read_, user, conversations, "read conversation rows",
                              [&](const cql::Row& row) -> Status {
                                QIM_ASSIGN_OR_RETURN(ConversationRow r, inbox_cells::conversation_row(row));
                                auto [it, fresh] = highest.try_emplace(r.conversation, r.last);
                                if (!fresh && it->second.seq < r.last.seq) it->second = std::move(r.last);
                                return {};
                              }));
  for (size_t i = 0; i < conversations.size(); ++i) {
    if (auto it = highest.find(conversations[i]); it != highest.end()) out[i] = it->second;
  }
  return out;
}

Result<std::vector<MailboxSeq>> CqlInboxBackend::read_marks_of(
    const UserId& user, std::span<const ConversationId> conversations) {
  std::vector<MailboxSeq> out(conversations.size());
  if (conversations.empty()) return out;
  std::map<ConversationId, MailboxSeq> highest;
  QIM_RETURN_IF_ERROR(
      read_in(marks_in_read_, user, conversations, "read marks", [&](const cql::Row& row) -> Status {
        QIM_ASSIGN_OR_RETURN(ReadMark m, inbox_cells::read_mark(row));
        MailboxSeq& h = highest[m.conversation];
        h = std::max(h, m.seq);
        return {};
      }));
  for (size_t i = 0; i < conversations.size(); ++i) {
    if (auto it = highest.find(conversations[i]); it != highest.end()) out[i] = it->second;
  }
  return out;
}

// The tombstone carries the position's own offset, the timestamp it was written with: it wins that tie
// and shadows nothing else (no other write of that key has another timestamp). A replay writing the
// position again is shadowed by it until compaction, then only skipped again.
Status CqlInboxBackend::drop_stale_activity(const UserId& user, std::span<const ActivityPosition> stale) {
  if (stale.empty()) return {};
  cql::BatchWriter deletes(session_, plain(), cql::BatchLimits{.max_statements = options_.batch_rows});
  for (const ActivityPosition& p : stale) {
    QIM_ASSIGN_OR_RETURN(int64_t ts, scylla::monotonic_max_timestamp(p.seq.offset(), "inbox_user"));
    deletes.add(activity_delete_, Values()
                                      .bigint(ts)
                                      .text(user.str())
                                      .int32(epoch_of(p.seq))
                                      .bigint(offset_of(p.seq))
                                      .text(p.conversation.str()));
    counters_.updates++;  // deletes
  }
  round_trips_++;
  return lift(cql::wait_all(deletes.finish()), "inbox: drop stale positions of " + user.str());
}

}  // namespace qim
