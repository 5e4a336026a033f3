#pragma once
// The `qim` binary's configuration: environment variables (SYSTEM.md section 4 and ours), which
// command-line flags may override. Every bad value is a Config error naming the variable.
//
//   QIM_DATA_DIR              ./qim-data   everything the embedded deployment keeps
//   QIM_LOG_BACKEND           embedded     embedded | kafka (each role its own process)
//   QIM_LOG_SEGMENT_BYTES     67108864     embedded log segment size
//   QIM_KAFKA_BROKERS         127.0.0.1:19092   host:port[,host:port...] (kafka)
//   QIM_KAFKA_TOPIC_PREFIX    qim.         topics are <prefix>outbox and <prefix>mailbox (kafka)
//   QIM_KAFKA_APPEND_TIMEOUT_MS  5000      how long an append may wait for its acknowledgement (kafka)
//   QIM_KAFKA_REPLICATION_FACTOR 1         replicas of the topics QIM creates (kafka)
//   QIM_LOG_BATCH_INTERVAL_US 3000         least time between two writer batches of an embedded log
//   QIM_LOG_MAX_QUEUED_APPENDS 8192        Outbox appends queued behind the disk at most; past it a SEND
//                                          is refused UNAVAILABLE (embedded; 0: no bound)
//   QIM_SHARDS                16           mailbox shards = mailbox-log partitions; with the embedded
//                                          logs: what the data directory was created with, else one
//                                          per CPU (2..16) with a local store, 16 with a remote one
//   QIM_OUTBOX_PARTITIONS     16           Outbox partitions; embedded logs: as QIM_SHARDS
//   QIM_OWNED_SHARDS          all          shards this MailboxNode owns, e.g. "0-15" or "0-3,8"
//   QIM_EPOCH                 1            ownership epoch of the owned shards, 1..65535
//   QIM_DELIVERY_MODE         hybrid       hybrid | push | pull (pull: the node notifies nobody)
//   QIM_FANOUT_CHUNK_ENTRIES  256          recipients per chunk of a dispatch record
//   QIM_GROUP_MAX_MEMBERS     10000        current members of a group at most (fanout and gateway)
//   QIM_EDIT_WINDOW_MS        172800000    a message is editable by its sender this long (0: never)
//   QIM_RECALL_WINDOW_MS      86400000     its sender may recall it this long (a group's admins: always)
//   QIM_RECEIPT_READERS_MAX   100          groups up to this size list who read a message (inbox.h)
//   QIM_DRAIN_TIMEOUT_MS      60000        how long a clean shutdown may take to drain
//   QIM_RETENTION_SWEEP_INTERVAL_MS  60000  time between two rounds of the owner's retention sweep
//   QIM_RETENTION_SWEEP_BATCH        1000   users swept per round at most
//   QIM_LOG_LEVEL             info         trace | debug | info | warn | error
//   QIM_ADMIN_LISTEN          127.0.0.1    admin server (/healthz, /metrics) of a role without a gateway
//   QIM_ADMIN_PORT            7401         its port; 0 picks a free one (the gateway reads both itself)
//   QIM_HISTORY_BACKEND       (follows QIM_MAILBOX_STORE_BACKEND)  embedded | scylla | redis
//   QIM_DEV_TLS               0            1 (`qim up --dev-tls`): serve wss:// with a self-signed pair in
//   <data>/tls plus the store's (mailbox/store_options.h) and the gateway's (gateway/gateway_options.h)
//   variables.

#include <spdlog/common.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "archiver/open_history_store.h"
#include "core/cpu_placement.h"
#include "core/sharding.h"
#include "lifecycle/message_state.h"
#include "log/open_log.h"
#include "mailbox/store_options.h"

namespace qim {

// The shard and Outbox partition count a new data directory of the embedded logs and a local store
// (embedded, memory) gets when none is given (decision 51): one per CPU the process may use, at least 2,
// at most 16 (the distributed default, which a remote store keeps). Each
// is a thread at its stage (a shard worker; a fanout and an archiver thread), and threads beyond the CPUs
// that run them only add wake-ups.
uint32_t embedded_default_partitions(size_t cpus);

struct AppConfig {
  std::string data_dir = "qim-data";
  LogOptions log;
  StoreOptions store;
  HistoryOptions history;  // where the archiver writes and the gateway reads HISTORY
  uint32_t shards = 16;
  uint32_t outbox_partitions = 16;
  CpuPlacementSetting cpu_placement;  // QIM_CPU_PLACEMENT: auto, off or PIPELINE:GATEWAY CPU lists
  std::vector<ShardId> owned_shards;  // default: every shard
  Epoch epoch{1};
  std::string delivery_mode = "hybrid";
  uint32_t chunk_entries = 256;
  uint32_t group_max_members = 10'000;
  LifecyclePolicy lifecycle;           // QIM_EDIT_WINDOW_MS, QIM_RECALL_WINDOW_MS
  uint32_t receipt_readers_max = 100;  // QIM_RECEIPT_READERS_MAX (InboxOptions::readers_max)
  std::chrono::milliseconds drain_timeout{60'000};
  std::chrono::milliseconds retention_sweep_interval{60'000};
  uint32_t retention_sweep_batch = 1000;
  spdlog::level::level_enum log_level = spdlog::level::info;
  std::string admin_address = "127.0.0.1";
  uint16_t admin_port = 7401;
  // Test-only (QIM_TEST_NODE_CRASH_BETWEEN_CHUNKS=1): the node exits in the middle of its first
  // multi-chunk record (node/crash_between_chunks.h).
  bool test_crash_between_chunks = false;
};

Result<AppConfig> app_config_from_env(const EnvLookup& getenv);

// Whether `role` ("gateway", "fanout", "mailbox", "archiver") can run in a process of its own with this
// configuration: every log and store a role touches must be one that other processes share. Config naming
// the variables otherwise (QIM_LOG_BACKEND=embedded, QIM_MAILBOX_STORE_BACKEND=embedded|memory, ...), with
// what to set instead. Pure: looks at the configuration only.
Status check_role_config(const std::string& role, const AppConfig& config);

// `base`, with the variables in `overrides` (from command-line flags) taking precedence.
EnvLookup with_overrides(EnvLookup base, std::map<std::string, std::string> overrides);

}  // namespace qim
