#pragma once
// The Redis InboxBackend (docs/adr/0072): the inbox's rows on the mailbox store's Redis instances, under
// its key prefix, a user's keys on the instance of the user's shard (as the user's entries) and a
// conversation's receipts on the instance of the conversation (as its history). Keys:
// redis_inbox_keys.h; scripts: redis_inbox_scripts.h; notes: docs/redis-store.md, "Inbox".
//
// entries_written is one script call per instance (up to 128 entries each, one pipeline per instance: one
// round trip per instance), write-only from the client's side: the monotonic maximum of each conversation
// row is compared inside the script. Index rows expire as the mailbox's entries do (the store's clock +
// BackendContext::entry_ttl_ms() at the write), and every read drops the expired ones first, so a count
// over the index equals a scan of read_entries at any time by that clock. count_unread is one ZLEXCOUNT
// (O(log n)) over a set of the counting rows.
//
// Operation counts (counters()): every script call (EVALSHA) and SCRIPT LOAD in `scripts`, every plain
// read command in `reads`, and every index row entries_written upserts in `inserts` (a row written inside
// a script, not a command of its own: commands = scripts + reads). No LWT, no update. round_trips(): every
// pipeline sent (read_batch, a page's summaries, is at most two per instance: docs/adr/0153).

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "inbox/inbox_backend.h"
#include "mailbox/store_backend.h"
#include "mailbox/store_options.h"

namespace qim {

struct RedisInboxOptions {
  std::vector<std::string> endpoints;  // the mailbox store's instances (QIM_MAILBOX_REDIS), in its order
  std::string key_prefix = "qim:";     // the mailbox store's prefix (QIM_MAILBOX_REDIS_PREFIX)
  uint32_t pool_size = 4;              // connections per instance at most
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{2000};  // also the longest wait for a free connection
};

// Opens the backend and loads its scripts on every instance. `context` is the mailbox store's (its shard
// map places users on instances, its clock and entry TTL expire index rows with the entries). Config for a
// malformed endpoint or an empty list; Transport or Timeout naming an instance that cannot be reached.
Result<std::unique_ptr<InboxBackend>> open_redis_inbox_backend(const BackendContext& context,
                                                               const RedisInboxOptions& options);

// The inbox of a deployment whose mailbox store is `store` (open_inbox's redis branch): its instances
// (QIM_MAILBOX_REDIS) and prefix (QIM_MAILBOX_REDIS_PREFIX), default pool and timeouts. Errors as above.
Result<std::unique_ptr<InboxBackend>> open_redis_inbox(const BackendContext& context,
                                                       const StoreOptions& store);

}  // namespace qim
