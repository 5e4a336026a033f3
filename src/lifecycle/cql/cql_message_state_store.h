#pragma once
// The message state store on CQL (ScyllaDB / Apache Cassandra), for the scylla deployments, in two tables
// it creates in the deployment's keyspace (docs/adr/0128):
//
//   message_states     (message_id bigint PRIMARY KEY, state blob)      encode_message_state, opaque
//   message_watermarks (outbox_partition int PRIMARY KEY, watermark bigint)
//
// No LWT: fanout is the one writer of a partition, and both columns are monotonic by their write
// timestamps (ADR-0022 section 2, mailbox/scylla/write_timestamps.h). The state is written USING
// TIMESTAMP the offset of the event that produced it, so a delayed write of an older decision never
// replaces a newer one; the watermark USING TIMESTAMP its own value (event offset + 1), so the larger one
// wins whatever order the writes land in: the cell is a maximum. Both are below 2^48 (refused otherwise).
// put() writes the state first and the watermark second (two partitions, so no atomic batch): a crash
// between leaves a decided event below the watermark's old value, which the archiver treats as
// undecided and waits for, and fanout's replay of the event raises it (docs/adr/0128).
// Reads and writes at QUORUM.

#include <memory>
#include <string>
#include <vector>

#include "lifecycle/message_state_store.h"
#include "mailbox/op_counters.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim {

struct CqlMessageStateOptions {
  std::vector<std::string> hosts = {"127.0.0.1"};  // QIM_CQL_HOSTS
  std::string keyspace = "qim";                    // QIM_CQL_KEYSPACE (shared with the mailbox tables)
  uint32_t replication_factor = 1;                 // QIM_CQL_RF, for a keyspace this store creates
  cql::Consistency consistency = cql::Consistency::kQuorum;
  uint32_t request_timeout_ms = 5000;
};

class CqlMessageStateStore final : public MessageStateStore {
 public:
  // Connects, creates the keyspace and both tables if missing, prepares the statements. Transport if no
  // host answers; Config for a bad keyspace name or a keyspace holding a newer schema of this component.
  static Result<std::unique_ptr<CqlMessageStateStore>> open(const CqlMessageStateOptions& options);

  // One read (load_many: one per id, in parallel). CorruptEntry naming the id for a row that does not
  // decode.
  Result<std::optional<MessageState>> load(MessageId id) override;
  Result<std::vector<std::optional<MessageState>>> load_many(std::span<const MessageId> ids) override;
  // Two writes in order (state, then watermark). Invariant for an offset not below 2^48 - 1; Transport or
  // Timeout: retry with the same values.
  Status put(const MessageState& state, uint32_t partition, uint64_t event_offset) override;
  Status raise_watermark(uint32_t partition, uint64_t event_offset) override;
  Result<uint64_t> watermark(uint32_t partition) override;

  OpCounts op_counts() const { return counters_.snapshot(); }

 private:
  CqlMessageStateStore(CqlMessageStateOptions options, cql::Session session)
      : options_(std::move(options)), session_(std::move(session)) {}
  Status prepare();

  CqlMessageStateOptions options_;
  cql::Session session_;
  cql::Prepared state_write_, state_read_, watermark_write_, watermark_read_;
  OpCounters counters_;
};

}  // namespace qim
