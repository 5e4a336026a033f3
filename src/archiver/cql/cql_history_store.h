#pragma once
// History on CQL (ScyllaDB / Apache Cassandra), for the scylla deployment: ADR-0018's two rows per
// message, in tables the store creates in its keyspace (docs/scylla-store.md, "History"):
//
//   history_message (message_id bigint PRIMARY KEY, conversation, sender, sender_device, client_msg_id,
//                    server_time_ms, body)                 the message, one partition per id
//   history_index   (conversation text, message_id bigint, PRIMARY KEY (conversation, message_id))
//                   WITH CLUSTERING ORDER BY (message_id DESC)   the conversation's index, newest first
//
// Both are plain idempotent INSERTs at QUORUM (a replay rewrites the same cells), no LWT, no TTL, no
// USING TIMESTAMP (history rows are never deleted, so server timestamps shadow nothing). The message row
// is written and acknowledged before its index row, so a QUORUM read of the index never names a message
// a QUORUM read cannot find. Message ids of a conversation grow with its Outbox offsets (one
// conversation, one Outbox partition), so the index clusters a conversation newest first and HISTORY is
// one slice of one partition, then one read per message (in parallel).

#include <memory>
#include <string>
#include <vector>

#include "archiver/history_store.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim {

struct CqlHistoryOptions {
  std::vector<std::string> hosts = {"127.0.0.1"};  // QIM_CQL_HOSTS
  std::string keyspace = "qim";                    // QIM_CQL_KEYSPACE (shared with the mailbox tables)
  uint32_t replication_factor = 1;                 // QIM_CQL_RF, for a keyspace this store creates
  cql::Consistency consistency = cql::Consistency::kQuorum;  // every read and write
  uint32_t request_timeout_ms = 5000;
  uint32_t batch_rows = 32;  // rows per UNLOGGED batch of append_all (and 16 KiB); 1: each row alone
};

class CqlHistoryStore final : public HistoryStore {
 public:
  // Connects, creates the keyspace (SimpleStrategy, options.replication_factor) and both tables if
  // missing, prepares the statements. Transport if no host answers; Config for a bad keyspace name.
  static Result<std::unique_ptr<CqlHistoryStore>> open(const CqlHistoryOptions& options);

  // The message row, then the index row (2 inserts counted). Thread-safe.
  Status append(const Message& message) override;
  // Every message row, then every index row, each as UNLOGGED batches of options.batch_rows sent
  // together: two round trips for the call.
  Status append_all(std::span<const Message> messages) override;
  // One index slice (limit + 1 rows, to know `more`), then the message rows in parallel; 1 + n reads
  // counted. CorruptEntry naming the conversation and id for a row that does not decode, holds another
  // conversation, or is missing.
  Result<HistoryPage> read(const HistoryQuery& query) override;
  OpCounts op_counts() const override { return counters_.snapshot(); }

 private:
  CqlHistoryStore(CqlHistoryOptions options, cql::Session session)
      : options_(std::move(options)), session_(std::move(session)) {}
  Status prepare();
  cql::ExecOptions write_options() const;
  cql::ExecOptions read_options() const;
  Result<Message> decode(const ConversationId& conversation, uint64_t id, const cql::Rows& rows) const;

  CqlHistoryOptions options_;
  cql::Session session_;
  cql::Prepared message_write_, index_write_, index_read_, index_read_before_, message_read_;
  OpCounters counters_;
};

}  // namespace qim
