#pragma once
// How a MailboxStore is chosen and configured (SYSTEM.md section 4), and the factory that opens one.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "mailbox/entry_sink.h"
#include "mailbox/store.h"

namespace qim {

inline constexpr int64_t kDispatchIdentityTtlSeconds = 31 * 86'400;  // DISPATCH_IDENTITY_TTL_SECONDS
inline constexpr int64_t kDefaultOutboxRetentionMs = 7 * kDayMs;     // QIM_OUTBOX_RETENTION_MS
inline constexpr int64_t kDefaultDispatchRetentionMs = 1 * kDayMs;   // QIM_DISPATCH_RETENTION_MS

struct StoreOptions {
  std::string backend = "embedded";            // QIM_MAILBOX_STORE_BACKEND
  std::string data_dir = "qim-data/mailbox";   // embedded: QIM_DATA_DIR/mailbox
  uint32_t shard_count = 16;                   // QIM_SHARDS
  int64_t retention_ms = 30 * kDayMs;          // QIM_MAILBOX_RETENTION_MS
  std::optional<uint32_t> page_max;            // QIM_MAILBOX_FINISH_PAGE_MAX
  int64_t fence_check_ms = 1000;               // QIM_MAILBOX_FENCE_CHECK_MS (see FenceCheck)
  uint32_t fence_check_pages = 256;            // QIM_MAILBOX_FENCE_CHECK_PAGES
  std::optional<int64_t> outbox_retention_ms;  // QIM_OUTBOX_RETENTION_MS (enforced; checked on scylla)
  int64_t outbox_retention() const { return outbox_retention_ms.value_or(kDefaultOutboxRetentionMs); }
  std::optional<int64_t> dispatch_retention_ms;  // QIM_DISPATCH_RETENTION_MS (checked on scylla)
  std::vector<std::string> redis_endpoints = {"127.0.0.1:16379"};  // QIM_MAILBOX_REDIS (comma-separated)
  std::string redis_key_prefix = "qim:";  // QIM_MAILBOX_REDIS_PREFIX: one key namespace per deployment
  std::vector<std::string> cql_hosts = {"127.0.0.1"};  // QIM_CQL_HOSTS
  std::string cql_keyspace = "qim";                    // QIM_CQL_KEYSPACE
  uint32_t cql_replication_factor = 1;                 // QIM_CQL_RF
  // Rows per UNLOGGED batch for the page writes and the history (cql/batch_writer.h); 1: none.
  uint32_t cql_batch_rows = 32;  // QIM_CQL_BATCH_ROWS
  std::shared_ptr<const Clock> clock = std::make_shared<SystemClock>();
};

// Reads the QIM_* variables through `getenv` (injected: tests pass a map). Config error naming the
// variable for anything malformed; an unset variable keeps the default.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
Result<StoreOptions> store_options_from_env(const EnvLookup& getenv);
EnvLookup process_env();

// Config error unless outbox + dispatch retention (defaults 7 d + 1 d) stay below the 31-day identity TTL.
Status check_identity_ttl_covers_replays(const StoreOptions& options);

// Opens the configured backend behind the contract. Config for an unknown or unbuilt backend; Transport
// or Io when the backend cannot be reached or opened. `sink` (the inbox of a process that writes entries:
// the MailboxNode, `qim up`), if set, must outlive the store; ContractStore hands it every entry written
// (mailbox/entry_sink.h). Readers pass none.
Result<std::unique_ptr<MailboxStore>> open_mailbox_store(const StoreOptions& options,
                                                         EntrySink* sink = nullptr);

}  // namespace qim
