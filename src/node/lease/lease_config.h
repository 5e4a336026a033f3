#pragma once
// How a `qim mailbox` process decides between configured and leased shards, and opens the pieces of the
// leased mode (docs/running.md, "Shards without an operator"). For the process wiring:
//
//   StoreOptions so = store_options_from_env(env);                   // as today
//   if (shard_leases_enabled(env)) {                                 // QIM_OWNED_SHARDS unset or "auto"
//     auto ownership = ownership_options_from_env(env, so);   // QIM_NODE_ID, QIM_SHARD_LEASE_*
//     auto leases = open_lease_store(so);                            // redis or cql, by the store backend
//     NodeOptions no = ...; no.leased = true; no.shards = {};        // start() starts no shard
//     MailboxNode node(mailbox_log, *store, notifier, no);  node.start();
//     ShardOwnership own(node, **leases, *store, *ownership);  own.start();
//     ... on SIGTERM: own.stop() (drains, commits, releases), then node.stop().
//   }
//
// Leases need a mailbox log every node reads (Kafka) and a store every node writes (redis or scylla):
// with the embedded log or store, open_lease_store() refuses (Config), and QIM_OWNED_SHARDS stays the way.

#include <memory>
#include <string>

#include "mailbox/store_options.h"
#include "node/lease/lease_store.h"
#include "node/lease/shard_ownership.h"

namespace qim {

// True when QIM_OWNED_SHARDS is unset, empty or "auto": shards come from leases.
bool shard_leases_enabled(const EnvLookup& getenv);

// QIM_NODE_ID (default: <hostname>-<pid>-<random hex>, unique per process), QIM_SHARD_LEASE_TTL_MS
// (default 10000, 30..3600000), QIM_SHARD_LEASE_MARGIN_MS (default: 3/10 of the ttl, but at least the
// store's call timeout: 2 s on redis, 5 s on scylla, so a write started just before the holder gives up
// has ended before the lease can be taken), the scan at (ttl - margin)/3, QIM_SHARD_TAKE_RETRY_MAX_MS (the
// longest back-off of a shard whose take failed; default 1800000, 1..86400000). Config naming the variable
// for a malformed value or a margin that leaves no renewal (see validate()).
Result<OwnershipOptions> ownership_options_from_env(const EnvLookup& getenv, const StoreOptions& store);

// The lease store of the deployment: redis for QIM_MAILBOX_STORE_BACKEND=redis (QIM_MAILBOX_REDIS, its
// prefix), cql for scylla and scylla-lwt (QIM_CQL_HOSTS, QIM_CQL_KEYSPACE, QIM_CQL_RF). Config for
// memory and embedded (nothing shared to lease through); Transport/Timeout if it cannot be reached.
Result<std::unique_ptr<LeaseStore>> open_lease_store(const StoreOptions& store);

}  // namespace qim
