#pragma once
// Shard leases in CQL (the scylla deployment), in the mailbox keyspace (QIM_CQL_KEYSPACE), with
// lightweight transactions at SERIAL (off the hot path: one per grant, renewal and release):
//
//   shard_lease (shard int PRIMARY KEY, epoch int, owner text, moving_to text)  -- owner written USING
//                TTL: it expires; moving_to (a pending move, request_move) too, with the move's TTL
//   mailbox_node (scope text, node_id text, PRIMARY KEY (scope, node_id))  -- heartbeats, USING TTL
//
// A grant is one conditional batch on the shard's partition: `SET epoch = new IF epoch = seen AND owner =
// null` (or `= node` for our own lease) together with `USING TTL t SET owner = node`, so the epoch never
// expires while the owner does. Renewal and release are conditional on (epoch, owner). A grant requires
// `moving_to = null`, or, for a move's target, `moving_to = node` and clears it in the same round.
//
// CQL TTLs are whole seconds, counted from the replica's clock in whole seconds (a cell written at
// 10.9 s with TTL 10 may expire at 20 s): the store writes ceil(ttl) + 1 s, so the lease the store
// keeps is never shorter than the ttl the holder counts with, and a takeover after a death takes up to
// 2 s longer than on Redis. The tables are created at open, idempotently (IF NOT EXISTS); a shard_lease
// table of before the moves gets its moving_to column then (ALTER TABLE ADD).

#include <memory>
#include <string>
#include <vector>

#include "node/lease/lease_store.h"

namespace qim {

struct CqlLeaseOptions {
  std::vector<std::string> hosts;   // QIM_CQL_HOSTS
  std::string keyspace = "qim";     // QIM_CQL_KEYSPACE
  uint32_t replication_factor = 1;  // QIM_CQL_RF (for a keyspace it creates)
  uint32_t request_timeout_ms = 5000;
};

// Connects and creates the keyspace (if missing) and the two tables. Config for no host;
// Transport/Timeout if the cluster cannot be reached.
Result<std::unique_ptr<LeaseStore>> open_cql_lease_store(const CqlLeaseOptions& options);

// The TTL in seconds written for a lease or heartbeat of `ttl`: ceil(ttl / 1 s) + 1 (see above).
int32_t cql_lease_ttl_seconds(std::chrono::milliseconds ttl);

}  // namespace qim
