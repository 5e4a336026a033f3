#pragma once
// The inbox on CQL (ScyllaDB / Apache Cassandra), for the scylla deployments, in tables it creates in the
// mailbox's keyspace (docs/scylla-store.md, "Inbox"; decision 74). Every ordered cell is a monotonic
// maximum kept by the storage engine, never by Paxos: zero LWT, and no read on the write path.
//
//   inbox_user ((user_id), kind, conversation, counts DESC, epoch DESC, log_offset DESC, positioned)
//       what the inbox keeps of a user's entries, in one partition (decision 0169), so the writes one call
//       makes for a user ride one batch as one mutation: one write per user, applied whole on a replica.
//       Three kinds of row, the key's unused columns fixed ('' , false, 0):
//     kind 0, an index row per entry (conversation, counts, epoch, log_offset), USING TTL <the entries'
//       TTL> (as mailbox_entry: the rows live as long as the entries they stand for), no timestamp:
//       identical cells on a replay. `counts` leads the rest of the key, so count_unread() is one slice of
//       counting rows only, LIMIT cap: bounded whatever the user sent.
//     kind 1, the latest entry of a conversation per epoch (conversation, epoch): every cell USING
//       TIMESTAMP <the entry's log offset> AND TTL <the entries' TTL>, so the highest offset of the epoch
//       wins whatever order the writes land in; the epoch is in the key (a seq with its epoch bits is no
//       timestamp: ADR-0022's lesson). conversation_rows() returns each conversation's highest epoch's
//       row: the highest seq, as an engine keeping one row would.
//     kind 2, a row's position (epoch, log_offset, positioned = the conversation; docs/adr/0089, 0143):
//       one empty row per (user, conversation, epoch) raised by a call, at its seq, USING TIMESTAMP <that
//       offset> AND TTL <the entries' TTL plus an hour>. Blind: the old position is left behind (stale)
//       and deleted by a reader that met it below its row, USING TIMESTAMP <its own offset> (a tombstone
//       wins a tie: it shadows that one row and nothing else, at any clock).
//   inbox_read_mark ((user_id), conversation, epoch DESC)   read_offset USING TIMESTAMP read_offset
//   inbox_receipt ((conversation), user_id)   read_through USING TIMESTAMP <the message id's offset>: one
//       conversation's messages share one Outbox partition, so the offset orders them.
//   inbox_setting ((user_id), name)   value USING TIMESTAMP <version ms> (last writer by version wins)
//
// Every timestamp is refused at or above 2^48 before it is sent (scylla/write_timestamps.h). Reads check
// WRITETIME of the ordered cells against their value, so a hand-made wall-clock write (which would win
// forever) reads as CorruptEntry instead of silently freezing a row. Reads and writes at QUORUM.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "inbox/inbox_backend.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim {

namespace cql {
class BatchWriter;
}

struct CqlInboxOptions {
  std::vector<std::string> hosts = {"127.0.0.1"};  // QIM_CQL_HOSTS
  std::string keyspace = "qim";                    // QIM_CQL_KEYSPACE (the mailbox's)
  uint32_t replication_factor = 1;                 // QIM_CQL_RF, for a keyspace this backend creates
  cql::Consistency consistency = cql::Consistency::kQuorum;  // every read and write
  uint32_t request_timeout_ms = 5000;
  uint32_t batch_rows = 32;  // QIM_CQL_BATCH_ROWS: rows per UNLOGGED batch of entries_written; 1: none
  // The mailbox entries' TTL (BackendContext::entry_ttl_ms(): retention + slack). Index and conversation
  // rows are written with it, rounded up to seconds like mailbox_entry's, so they expire with the entries.
  int64_t entry_ttl_ms = 31 * int64_t{86'400'000};
};

class CqlInboxBackend final : public InboxBackend {
 public:
  // Rows per page of the partition reads (conversation_rows, read_marks, settings).
  static constexpr int32_t kPage = 5000;

  // Connects, creates the keyspace (SimpleStrategy, replication_factor) and the inbox tables if missing
  // (recording "inbox" in qim_schema_version), prepares the statements. A keyspace recorded at inbox
  // schema 1 or 2 (the tables before inbox_user) first has its rows copied into inbox_user (a paged scan
  // of inbox_index and inbox_conversation, each row with its position), then 3 is recorded. Config for a
  // bad keyspace name, an
  // entry TTL out of 1 s..20 years or batch_rows out of 1..256, or a keyspace holding a newer inbox
  // schema; Transport/Timeout if the cluster cannot be reached.
  static Result<std::unique_ptr<CqlInboxBackend>> open(const CqlInboxOptions& options);

  std::string_view name() const override { return "cql"; }

  // One index insert per entry, and per (user, conversation, epoch) of the call (its highest seq) one
  // conversation-row update and one position insert, as UNLOGGED batches of batch_rows sent at once and
  // waited for together; a user's rows kept in one batch (one mutation) when they fit in it. No reads, no
  // LWT; a replay writes identical cells. The first failed request's error (some rows may have landed: a
  // retry rewrites them).
  Status entries_written(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override;
  // The same writes, every request sent before it returns (decision 0170): ContractStore writes the
  // entries while they travel. An error found before sending (a timestamp out of range) is wait()'s.
  std::unique_ptr<Pending> begin(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override;

  // One partition read (paged by kPage; a read counted per page); per conversation the row of its highest
  // epoch (the others are read and dropped).
  Result<std::vector<ConversationRow>> conversation_rows(const UserId& user) override;
  // --- The activity index (decision 0089; on CQL 0143, cql_activity.cc) ---
  // One slice of the user's positions, LIMIT limit (nothing read for an empty range or a limit of 0).
  Result<std::vector<ActivityPosition>> activity_desc(const UserId& user, MailboxSeq after, MailboxSeq before,
                                                      uint32_t limit) override;
  // One read per kInList conversations (`conversation IN ?`, sent together); per conversation the row of
  // its highest epoch.
  Result<std::vector<std::optional<InboxEntryRef>>> rows_of(
      const UserId& user, std::span<const ConversationId> conversations) override;
  // As rows_of, of the read marks: the highest epoch's mark per conversation.
  Result<std::vector<MailboxSeq>> read_marks_of(const UserId& user,
                                                std::span<const ConversationId> conversations) override;
  // One UNLOGGED batch of deletes (per batch_rows), each USING TIMESTAMP the position's own offset.
  Status drop_stale_activity(const UserId& user, std::span<const ActivityPosition> stale) override;

  // The four reads of a page's summaries (index_rows_desc, count_unread, receipts, settings) are in
  // cql_summary_reads.cc, each an issue half and a fold half shared with read_batch.
  //
  // Two slices read together (the counting and the other rows), merged: two reads, one round trip.
  Result<std::vector<InboxEntryRef>> index_rows_desc(const UserId& user, const ConversationId& c,
                                                     MailboxSeq after, MailboxSeq upto,
                                                     uint32_t limit) override;
  // One slice of the counting rows, LIMIT cap (nothing read for an empty range or a cap of 0).
  Result<uint32_t> count_unread(const UserId& user, const ConversationId& c, MailboxSeq after,
                                MailboxSeq upto, uint32_t cap) override;

  // One write (none for a zero seq).
  Status raise_read_mark(const UserId& user, const ConversationId& c, MailboxSeq seq) override;
  Result<std::vector<ReadMark>> read_marks(const UserId& user) override;
  // One read (LIMIT 1: the highest epoch's row holds the highest mark).
  Result<MailboxSeq> read_mark(const UserId& user, const ConversationId& c) override;

  Status raise_receipt(const ConversationId& c, const UserId& user, MessageId read_through) override;
  // One partition read, paged by kPage (a read counted per page; nothing read for a limit of 0).
  Result<std::vector<ReceiptMark>> receipts(const ConversationId& c, uint32_t limit) override;

  // InvalidArgument for a version outside 0..2^48-1 (it is the write timestamp).
  Status put_setting(const UserId& user, const std::string& key, const std::string& value,
                     int64_t version) override;
  // One partition read, paged by kPage (a read counted per page).
  Result<std::map<std::string, std::string>> settings(const UserId& user) override;

  // Every query of `reads` sent at once (decision 0159): each one's requests as its single call sends them,
  // all issued before any is waited for, so the page's summaries cost one round trip (plus the further
  // pages of a settings or receipts partition longer than kPage), whatever their number; `parallelism` is
  // not used (no thread waits per query). Each answer is folded exactly as the single call folds it. Every
  // request is waited for before it answers; the first error in the order of the queries (counts, index,
  // settings, receipts) fails the batch, as read_batch's default meets it.
  Result<BatchAnswers> read_batch(const BatchReads& reads, uint32_t parallelism) override;

  OpCounters& counters() override { return counters_; }
  // CQL rows received by every read so far (counters().reads counts requests and pages): what a read
  // costs the cluster, so a test tells a page of positions from a scan of every conversation row.
  uint64_t rows_read() const noexcept { return rows_read_.load(); }
  // Every wave of requests since open: requests sent together and waited for together count once (a
  // page's summary reads in read_batch, rows_of's IN reads, an index read's two slices, a batch of
  // writes), a paged read once per page (a page waits for the one before it). Opening (schema, prepared
  // statements, a backfill) is not counted.
  uint64_t round_trips() const override { return round_trips_.load(); }

  // CQL's maximum TTL (20 years), and what a position outlives its row by (a position without its row is
  // only skipped; a row without its position would be missed by the list).
  static constexpr int64_t kMaxTtlSeconds = 630'720'000;
  static constexpr int64_t kActivityTtlSlackSeconds = 3600;
  // Conversations per `IN ?` read of rows_of / read_marks_of.
  static constexpr size_t kInList = 64;

 private:
  CqlInboxBackend(CqlInboxOptions options, cql::Session session)
      : options_(std::move(options)), session_(std::move(session)) {}
  Status prepare();
  // entries_written's requests, sent (waited for by the caller).
  Result<std::vector<cql::PendingResult>> send_entries(std::span<const MailboxEntry> entries);
  Status prepare_activity();  // cql_activity.cc
  // Adds the position `p` of `user` (written USING TIMESTAMP `ts` AND TTL `ttl_seconds`) to `writes`.
  void add_position(cql::BatchWriter& writes, const UserId& user, const ActivityPosition& p, int64_t ts,
                    int32_t ttl_seconds);
  // Copies a keyspace of inbox schema `recorded` (1 or 2: inbox_conversation, inbox_index and, from 2,
  // inbox_activity) into inbox_user, a page at a time (cql_migrate.cc).
  Status migrate_to_user_partitions(int recorded);
  // Reads `statement` (user_id = ?, conversation IN ?) for `conversations`, kInList a read, sent
  // together, and hands each row to `each`; its first error, or the first failed read's.
  Status read_in(const cql::Prepared& statement, const UserId& user,
                 std::span<const ConversationId> conversations, std::string_view what,
                 const std::function<Status(const cql::Row&)>& each);
  cql::ExecOptions plain() const;
  // A summary read sent and not yet waited for (cql_summary_reads.cc): its requests, none when there is
  // nothing to read (an empty range, a limit of 0).
  struct Issued {
    std::vector<cql::PendingResult> requests;
    bool paged = false;  // settings, receipts: kPage rows a page, every page (up to the limit)
  };
  Issued issue_count(const CountQuery& q);
  Result<uint32_t> fold_count(const CountQuery& q, const Issued& issued);
  Issued issue_index(const IndexQuery& q);
  Result<std::vector<InboxEntryRef>> fold_index(const IndexQuery& q, const Issued& issued);
  Issued issue_settings(const UserId& user);
  Result<std::map<std::string, std::string>> fold_settings(const UserId& user, const Issued& issued);
  Issued issue_receipts(const ConversationId& c, uint32_t limit);
  Result<std::vector<ReceiptMark>> fold_receipts(const ConversationId& c, const Issued& issued);
  // Waits for every request of `wave` and counts its round trips: one if anything was sent, plus the pages
  // its longest paged read took past its first.
  void await(std::span<const Issued> wave);
  // The rows `request` answered, counting the read (a read a page when `paged`) and its rows; its error
  // named `what` if it failed. The pointer lives as long as the request.
  Result<const cql::Rows*> answered(const cql::PendingResult& request, bool paged, const std::string& what);
  // The rows `statement` selects with `values` (every one, or the first max_rows), kPage rows a page; a
  // read counted a page.
  Result<cql::Rows> read_all(const cql::Prepared& statement, const cql::Values& values, std::string_view what,
                             int64_t max_rows = -1);

  CqlInboxOptions options_;
  int32_t ttl_seconds_ = 0;
  int32_t activity_ttl_seconds_ = 0;  // ttl_seconds_ + kActivityTtlSlackSeconds, at most kMaxTtlSeconds
  cql::Session session_;
  cql::Prepared conversation_write_, conversation_read_, index_write_, index_read_, count_read_, mark_write_,
      marks_read_, mark_read_, receipt_write_, receipts_read_, setting_write_, settings_read_,
      activity_write_, activity_read_, activity_delete_, rows_in_read_, marks_in_read_;
  OpCounters counters_;
  std::atomic<uint64_t> rows_read_{0};
  std::atomic<uint64_t> round_trips_{0};
};

}  // namespace qim
