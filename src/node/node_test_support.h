#pragma once
// What the node tests share (node_test.cc, delivery_report_test.cc, gateway/tests/delivery_heal_test.cc):
// the memory store a node writes, two users of shard 0, the dispatch record of a numbered message between
// them as fanout plans it, and reads of what the store shows afterwards.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/conversation.h"
#include "core/sharding.h"
#include "fanout/dispatch_plan.h"
#include "mailbox/contract_store.h"
#include "mailbox/store_options.h"

namespace qim::testing {

// The memory mailbox store over `shards` shards, on `clock`.
inline std::unique_ptr<MailboxStore> open_memory_store(
    uint32_t shards, std::shared_ptr<const Clock> clock = std::make_shared<SystemClock>()) {
  StoreOptions so;
  so.backend = "memory";
  so.shard_count = shards;
  so.clock = std::move(clock);
  return open_mailbox_store(so).value();
}

// The first two users "user<i>" of shard 0: every message between them is one record on partition 0.
inline std::pair<UserId, UserId> two_users_of_shard_zero(const ShardMap& shards) {
  UserId a, b;
  for (int i = 0; a.empty() || b.empty(); ++i) {
    UserId u = UserId::parse("user" + std::to_string(i)).value();
    if (shards.shard_of(u).value != 0) continue;
    (a.empty() ? a : b) = u;
  }
  return {a, b};
}

// The dispatch record of message number `n` from `from` to `to` (client id "c<n>", body "message <n>"),
// planned at offset n of Outbox partition 0.
inline DispatchRecord message_record(const ShardMap& shards, const UserId& from, const UserId& to, int n,
                                     int64_t server_time_ms) {
  OutboxRecord r;
  r.sender = from;
  r.conversation = direct_conversation(from, to).value();
  r.client_msg_id = "c" + std::to_string(n);
  r.server_time_ms = server_time_ms;
  r.body = "message " + std::to_string(n);
  auto plan = plan_dispatches(r, 0, Offset{static_cast<uint64_t>(n)}, shards, 256).value();
  EXPECT_EQ(plan.size(), 1u);
  return plan.at(0).record;
}

// Every visible entry of `user`, paging through a fresh query of the store (not a worker's view).
inline std::vector<MailboxEntry> read_whole_mailbox(MailboxStore& store, const UserId& user) {
  std::vector<MailboxEntry> out;
  MailboxSeq after;
  while (true) {
    auto page = store.read_mailbox(MailboxQuery{user, after, 1000});
    EXPECT_TRUE(page.ok()) << page.error().to_string();
    if (!page.ok()) return out;
    out.insert(out.end(), page->entries.begin(), page->entries.end());
    if (!page->more) return out;
    after = out.back().seq;
  }
}

// The stored frontier of shard 0, whatever the epoch.
inline MailboxSeq shard_zero_frontier(MailboxStore& store) {
  return store.lane_watermarks(ShardId{0}, Epoch{kMaxEpoch}).value()[0];
}

}  // namespace qim::testing
