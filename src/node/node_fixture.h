#pragma once
// The fixture the MailboxNode's tests share (node_test.cc, node_recall_test.cc): a mailbox log of four
// partitions, a quarantine log, the memory store at the messages' server time, two users of shard 0, and
// the dispatch records fanout would append for their messages and events. Test-only.

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "fanout/dispatch_plan.h"
#include "lifecycle/message_state.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "mailbox/contract_store.h"
#include "mailbox/message_codec.h"
#include "node/mailbox_node.h"
#include "node/node_test_support.h"
#include "node/quarantine.h"
#include "node/testing_stores.h"

namespace qim::testing {

using namespace std::chrono_literals;

inline constexpr uint32_t kShards = 4;
inline constexpr int64_t kServerTimeMs = 1'700'000'000'000;

// Polls `done` (a condition, not a duration) until it holds or a minute has passed.
template <typename F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

class Recorder final : public DeliveryNotifier {
 public:
  void entries_visible(ShardId, MailboxSeq, MailboxSeq frontier,
                       std::span<const MailboxEntry> entries) override {
    std::lock_guard lock(mu_);
    for (const auto& e : entries) {
      EXPECT_LE(e.seq, frontier);
      seen_.push_back(e);
    }
  }
  void range_unknown(ShardId, MailboxSeq, MailboxSeq) override {}  // delivery_report_test.cc checks these
  std::vector<MailboxEntry> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  std::vector<MailboxEntry> seen_;
};

class NodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = testing::open_test_log(dir_.sub("mailbox-log"), kShards, "mailbox");
    quarantine_log_ = testing::open_test_log(dir_.sub("quarantine-log"), kQuarantinePartitions, "quarantine");
    // The store's clock stands at the messages' server time: on the wall clock their day buckets are long
    // past retention, and the node's retention sweep would (rightly) trim them.
    store_ = testing::open_memory_store(kShards, std::make_shared<ManualClock>(kServerTimeMs));
    std::tie(a_, b_) = testing::two_users_of_shard_zero(shards_);
  }

  // The dispatch record of message number `n` (from a to b) on partition 0.
  DispatchRecord record(int n) { return testing::message_record(shards_, a_, b_, n, kServerTimeMs); }
  // The record of message `n` with another body under the same dispatch id: a DispatchConflict.
  DispatchRecord conflicting(int n) {
    DispatchRecord r = record(n);
    r.message.body = "tampered " + std::to_string(n);
    r.identity = make_identity(r.identity.id, r.message, r.chunks);
    return r;
  }
  // Appends the dispatch record of message number `n` to partition 0; returns its offset.
  Offset dispatch(int n) { return log_->append_sync(0, "", encode_dispatch_record(record(n))).value(); }
  // Appends the record fanout appends for a recall of message number `n` (Outbox offset n), read at
  // Outbox offset `at`: its entry, client id "~recall", to a and b.
  Offset dispatch_recall(int n, uint64_t at) {
    MessageState target;
    target.id = message_id_of(0, Offset{static_cast<uint64_t>(n)});
    return dispatch_event(target, MessageEventKind::kRecall, "", at);
  }
  // Appends the record fanout appends for the applied event `kind` of `state`'s message (an edit to
  // `text`), read at Outbox offset `at`, with `state` as it stands after it: its entry to a and b.
  Offset dispatch_event(MessageState& state, MessageEventKind kind, std::string_view text, uint64_t at) {
    state.events[at] =
        EventOutcome{kind, true, EventRefusal::kNone, a_, kServerTimeMs + static_cast<int64_t>(at), ""};
    OutboxRecord r;
    r.sender = a_;
    r.conversation = direct_conversation(a_, b_).value();
    r.client_msg_id = event_entry_client_id(kind);
    r.server_time_ms = kServerTimeMs;
    r.body = event_entry_body(state, kind, a_, text, at);
    auto plan = plan_dispatches(r, 0, Offset{at}, shards_, 256).value();
    return log_->append_sync(0, "", encode_dispatch_record(plan.at(0).record)).value();
  }

  NodeOptions options(Epoch epoch = Epoch{1}) {
    NodeOptions o;
    o.shards = {ShardId{0}};
    o.epoch = epoch;
    o.poll_wait = 10ms;
    o.retry_min = 1ms;
    o.retry_max = 10ms;
    o.quarantine = quarantine_log_.get();
    return o;
  }
  // What the quarantine holds, read back from its log.
  std::vector<QuarantineEntry> quarantined() {
    return read_quarantine(*quarantine_log_, Offset{0}, 100).value();
  }

  // Every visible entry of a user, paging through the mailbox.
  std::vector<MailboxEntry> mailbox(const UserId& user) { return testing::read_whole_mailbox(*store_, user); }
  MailboxSeq frontier() { return testing::shard_zero_frontier(*store_); }

  // Checks that `user` sees messages 0..n-1 exactly once, in order, with strictly increasing seqs.
  void expect_all_once(const UserId& user, int n) {
    auto entries = mailbox(user);
    ASSERT_EQ(entries.size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(entries[i].message.body, "message " + std::to_string(i));
      if (i > 0) {
        EXPECT_LT(entries[i - 1].seq, entries[i].seq);
      }
    }
  }

  testing::TempDir dir_;
  ShardMap shards_ = ShardMap::create(kShards).value();
  std::unique_ptr<EmbeddedLog> log_;
  std::unique_ptr<EmbeddedLog> quarantine_log_;
  std::unique_ptr<MailboxStore> store_;
  UserId a_, b_;
  Recorder recorder_;
};

}  // namespace qim::testing
