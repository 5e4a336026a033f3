// The gateway's worker pools and its ordered Outbox writes (issue 36, items 2, 3 and 7), over real
// WebSockets with the embedded group store and an in-memory Outbox (no fanout: a group change is appended
// and never applied, as when fanout lags):
//   - a connection's pipelined SENDs (to a group, and direct ones between them) reach the Outbox in the
//     order they were sent;
//   - one connection flooding HISTORY and GROUP_RENAME does not stall another connection's SYNC and GROUPS;
//     its excess is answered RATE_LIMITED at once, work past its deadline is answered UNAVAILABLE and not
//     done, and its queued work is dropped when it goes;
//   - a group change is checked without loading the whole group;
//   - the gateway stops cleanly with a group change in flight (run under AddressSanitizer by test.sh's
//     asan phase: before the fix its pool posted into a destroyed io_context).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>

#include "client/client.h"
#include "core/conversation.h"
#include "gateway/tests/gateway_harness.h"
#include "groups/embedded/rocks_group_store.h"
#include "log/testing/temp_dir.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using namespace std::chrono_literals;
using client::ServerFrame;
using Steady = std::chrono::steady_clock;

constexpr const char* kSecret = "gateway-pools-test-secret";
constexpr auto kWait = 10s;
constexpr uint32_t kPartitions = 4;

UserId u(const std::string& s) {
  return UserId::parse(s).value();
}

// The embedded group store with a short random pause in every point read (so that reads on two threads
// finish in any order, as on a remote store) and a count of whole-group loads.
class JitteryGroupStore final : public GroupStore {
 public:
  explicit JitteryGroupStore(std::unique_ptr<RocksGroupStore> inner) : inner_(std::move(inner)) {}
  Status apply(const GroupChange& change) override { return inner_->apply(change); }
  Result<std::optional<GroupState>> load(const GroupId& group) override {
    loads++;
    return inner_->load(group);
  }
  Result<std::optional<GroupMeta>> meta(const GroupId& group) override {
    pause();
    return inner_->meta(group);
  }
  Result<std::optional<GroupMemberRecord>> member(const GroupId& group, const UserId& user) override {
    pause();
    return inner_->member(group, user);
  }
  Result<std::optional<GroupOpOutcome>> outcome(const GroupId& group, uint64_t offset) override {
    return inner_->outcome(group, offset);
  }
  Result<std::vector<GroupId>> groups_of(const UserId& user) override { return inner_->groups_of(user); }
  OpCounts op_counts() const override { return inner_->op_counts(); }

  std::atomic<uint64_t> loads{0};

 private:
  void pause() {
    thread_local std::mt19937 rng(std::random_device{}());
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 400)(rng)));
  }
  std::unique_ptr<RocksGroupStore> inner_;
};

// A history whose every read takes `delay` (a HISTORY of 200 on a remote store) and returns an empty page.
class SlowHistory final : public HistoryStore {
 public:
  Status append(const Message&) override { return {}; }
  Result<HistoryPage> read(const HistoryQuery&) override {
    std::this_thread::sleep_for(delay);
    reads++;
    return HistoryPage{};
  }
  OpCounts op_counts() const override { return {}; }

  std::chrono::milliseconds delay{0};
  std::atomic<uint64_t> reads{0};
};

class GatewayPoolsTest : public testing::GatewayHarness {
 protected:
  GatewayPoolsTest() : GatewayHarness(kSecret, 16, kPartitions) {}

  void SetUp() override {
    groups_ = std::make_unique<JitteryGroupStore>(RocksGroupStore::open(dir_.sub("groups")).value());
  }
  void configure(GatewayOptions& o, GatewayDeps& d) override {
    o.max_frames_per_second = 100'000;  // these tests are about the pools, not the frame rate
    d.groups = groups_.get();
    d.history = &history_;
  }

  // Creates group `name` owned by `owner` with `members`, as fanout would have applied it.
  ConversationId create_group(const std::string& name, const std::string& owner,
                              const std::vector<std::string>& members) {
    GroupState state(GroupId::parse(name).value());
    std::vector<UserId> ids;
    for (const auto& m : members) ids.push_back(u(m));
    GroupChange change = state.apply(GroupOp{GroupOpKind::kCreate, ids, name, GroupRole::kMember}, u(owner),
                                     next_group_offset_++, 10'000);
    EXPECT_TRUE(change.outcome.applied) << change.outcome.reason;
    EXPECT_TRUE(groups_->apply(change).ok());
    return Conversation::group(state.group()).value().id();
  }

  // The client_msg_ids of `sender`'s records in Outbox partition `partition`, in offset order.
  std::vector<std::string> outbox_ids(uint32_t partition, const std::string& sender) {
    std::vector<std::string> out;
    for (const auto& rec : log_.all_records()) {
      if (rec.partition != partition) continue;
      auto r = decode_outbox_record(rec.value);
      if (r.ok() && r->sender.str() == sender) out.push_back(r->client_msg_id);
    }
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<JitteryGroupStore> groups_;
  SlowHistory history_;
  uint64_t next_group_offset_ = 1'000'000;
};

// Item 2: 500 SENDs pipelined without waiting for acks, to a group and (every fifth) to a direct
// conversation in the same Outbox partition, are appended in the order they were sent.
TEST_F(GatewayPoolsTest, PipelinedSendsReachTheOutboxInTheOrderTheyWereSent) {
  start();
  const ConversationId group = create_group("ordered", "alice", {"bob"});
  const uint32_t partition = outbox_partition_of(group, kPartitions);
  std::string peer;
  for (int i = 0; peer.empty(); ++i) {
    std::string name = "peer" + std::to_string(i);
    if (outbox_partition_of(direct_conversation(u("alice"), u(name)).value(), kPartitions) == partition)
      peer = name;
  }
  auto alice = login("alice");
  constexpr int kSends = 500;
  std::vector<std::string> sent;
  for (int i = 0; i < kSends; ++i) {
    const std::string id = "m" + std::to_string(i);
    sent.push_back(id);
    alice->send_text(i % 5 == 4 ? client::send_frame(peer, id, "direct " + id, id)
                                : client::send_to_conversation_frame(group.str(), id, "group " + id, id));
  }
  uint64_t last_id = 0;
  std::string first_late;  // the first SEND acknowledged with an id below an earlier SEND's
  for (int i = 0; i < kSends; ++i) {
    auto ack = alice->wait_ref(sent[i], kWait);
    ASSERT_TRUE(ack.ok()) << sent[i] << ": " << ack.error().to_string();
    ASSERT_EQ(ack->type, "SEND_ACK") << ack->raw;
    if (ack->message_id < last_id && first_late.empty()) first_late = sent[i];
    last_id = std::max(last_id, ack->message_id);
  }
  EXPECT_EQ(first_late, "") << "acknowledged with an id below an earlier SEND's";
  const auto stored = outbox_ids(partition, "alice");
  ASSERT_EQ(stored.size(), sent.size());
  size_t first_out_of_order = stored.size();
  for (size_t i = 0; i < stored.size(); ++i) {
    if (stored[i] != sent[i]) {
      first_out_of_order = i;
      break;
    }
  }
  EXPECT_EQ(first_out_of_order, stored.size()) << "the Outbox holds " << stored[first_out_of_order]
                                               << " where " << sent[first_out_of_order] << " was sent";
}

// Item 3: the membership check of a group change reads the actor's row and the meta row, not the group's
// whole state (every member row and every outcome ever recorded).
TEST_F(GatewayPoolsTest, AGroupChangeIsCheckedWithoutLoadingTheWholeGroup) {
  start([](GatewayOptions& o) { o.group_apply_wait_ms = 200; });
  const ConversationId group = create_group("checked", "alice", {"bob"});
  auto alice = login("alice");
  auto bob = login("bob");
  // No fanout here: an allowed change is appended and answered "not applied yet".
  auto renamed = alice->group("GROUP_RENAME", {.group = group.str(), .name = "new name"});
  ASSERT_FALSE(renamed.ok());
  EXPECT_EQ(renamed.error().message().rfind("UNAVAILABLE: the group change was appended", 0), 0u)
      << renamed.error().message();
  auto refused = bob->group("GROUP_RENAME", {.group = group.str(), .name = "mine"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message().rfind("NOT_ALLOWED", 0), 0u) << refused.error().message();
  EXPECT_EQ(groups_->loads.load(), 0u) << "a GROUP_RENAME's check loaded the whole group";
  EXPECT_EQ(outbox_ids(outbox_partition_of(group, kPartitions), "alice").size(), 1u);
  EXPECT_TRUE(outbox_ids(outbox_partition_of(group, kPartitions), "bob").empty());
}

// Item 3: over QIM_GATEWAY_MAX_PENDING a frame is answered RATE_LIMITED at once, under its ref; what is
// in progress is answered in order.
TEST_F(GatewayPoolsTest, WorkOverThePendingBoundIsAnsweredRateLimitedAtOnce) {
  history_.delay = 200ms;
  start([](GatewayOptions& o) { o.max_pending_per_connection = 4; });
  auto alice = login("alice");
  const std::string conv = direct_conversation(u("alice"), u("bob")).value().str();
  for (int i = 0; i < 10; ++i)
    alice->send_text(client::history_frame(conv, std::nullopt, 200, "h" + std::to_string(i)));
  const auto started = Steady::now();
  for (int i = 4; i < 10; ++i) {
    auto r = alice->wait_ref("h" + std::to_string(i), kWait);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->code, "RATE_LIMITED") << r->raw;
  }
  std::cout << "[ figures  ] 6 RATE_LIMITED answers after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now() - started).count()
            << " ms (each HISTORY in progress takes 200 ms)\n";
  EXPECT_LT(history_.reads.load(), 4u) << "the refused frames were answered only after the reads ahead";
  for (int i = 0; i < 4; ++i) {
    auto r = alice->wait_ref("h" + std::to_string(i), kWait);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->type, "HISTORY_PAGE") << r->raw;
  }
}

// Item 3: work not started by its deadline is answered UNAVAILABLE and not done (the client has given up;
// a group created minutes later would be a surprise, a retried one a second group).
TEST_F(GatewayPoolsTest, WorkNotStartedByItsDeadlineIsAnsweredUnavailableAndNotDone) {
  history_.delay = 300ms;
  start([](GatewayOptions& o) { o.pending_deadline_ms = 100; });
  const ConversationId group = create_group("late", "alice", {});
  auto alice = login("alice");
  const std::string conv = direct_conversation(u("alice"), u("bob")).value().str();
  for (int i = 0; i < 4; ++i)
    alice->send_text(client::history_frame(conv, std::nullopt, 200, "h" + std::to_string(i)));
  auto first = alice->wait_ref("h0", kWait);
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  EXPECT_EQ(first->type, "HISTORY_PAGE") << first->raw;
  for (int i = 1; i < 4; ++i) {
    auto r = alice->wait_ref("h" + std::to_string(i), kWait);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->code, "UNAVAILABLE") << r->raw;
    EXPECT_NE(r->message.find("nothing was done"), std::string::npos) << r->raw;
  }
  EXPECT_EQ(history_.reads.load(), 1u) << "work past its deadline was done anyway";
}

// Item 3: one connection floods HISTORY (each read takes 30 ms) and GROUP_RENAME (never applied: each
// waits QIM_GROUP_APPLY_WAIT_MS) at the frame rate for QIM_TEST_FLOOD_SECONDS (5 by default; the issue's
// 30 s shows nothing more), while another measures its SYNC and GROUPS: they stay fast (the figures are
// printed; the bound asserted, 2 s, is loose for CI: before the fix both grew without bound, past the
// client's timeout). When the flooder goes, its queued work is dropped, not done.
TEST_F(GatewayPoolsTest, OneConnectionFloodingDoesNotStallAnotherConnectionsSyncAndGroups) {
  history_.delay = 30ms;
  start([](GatewayOptions& o) {
    o.max_frames_per_second = 200;  // the default rate: the flood is what one client may send
    o.group_apply_wait_ms = 1'000;
  });
  const ConversationId group = create_group("flooded", "alice", {"bob"});
  const char* env = std::getenv("QIM_TEST_FLOOD_SECONDS");
  const auto flood_for = std::chrono::seconds(env ? std::max(1, std::atoi(env)) : 5);
  auto alice = login("alice");
  auto bob = login("bob");
  const std::string conv = direct_conversation(u("alice"), u("bob")).value().str();

  std::atomic<bool> flooding{true};
  uint64_t flood_frames = 0;
  std::thread flooder([&] {
    for (int tick = 0; flooding.load(); ++tick) {  // every 10 ms: 1.5 HISTORY, and a rename every 100 ms
      alice->send_text(client::history_frame(conv, std::nullopt, 200, "fh" + std::to_string(tick)));
      if (tick % 2 == 0)
        alice->send_text(client::history_frame(conv, std::nullopt, 200, "fx" + std::to_string(tick)));
      if (tick % 10 == 0)
        alice->send_text(client::group_frame("GROUP_RENAME",
                                             {.group = group.str(), .name = "n" + std::to_string(tick)},
                                             "fr" + std::to_string(tick)));
      flood_frames += tick % 2 == 0 ? 2 + (tick % 10 == 0) : 1;
      std::this_thread::sleep_for(10ms);
    }
  });
  std::vector<double> sync_ms, groups_ms;
  auto measure = [&](const std::string& frame, const std::string& ref, const char* expect,
                     std::vector<double>& into) {
    const auto t0 = Steady::now();
    bob->send_text(frame);
    auto r = bob->wait_ref(ref, kWait);
    into.push_back(std::chrono::duration<double, std::milli>(Steady::now() - t0).count());
    EXPECT_TRUE(r.ok() && r->type == expect) << ref << ": " << (r.ok() ? r->raw : r.error().to_string());
  };
  const auto end = Steady::now() + flood_for;
  for (int i = 0; Steady::now() < end; ++i) {
    measure(client::sync_frame(0, 100, "s" + std::to_string(i)), "s" + std::to_string(i), "SYNC_PAGE",
            sync_ms);
    measure(client::group_frame("GROUPS", {}, "g" + std::to_string(i)), "g" + std::to_string(i),
            "GROUPS_LIST", groups_ms);
    std::this_thread::sleep_for(100ms);
  }
  flooding = false;
  flooder.join();

  auto report = [](const char* what, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const double p50 = v[v.size() / 2], p99 = v[std::min(v.size() - 1, v.size() * 99 / 100)], max = v.back();
    std::cout << "[ figures  ] " << what << " during the flood: " << v.size() << " requests, p50 " << p50
              << " ms, p99 " << p99 << " ms, max " << max << " ms\n";
    return max;
  };
  std::cout << "[ figures  ] the flooder sent " << flood_frames << " frames in " << flood_for.count()
            << " s\n";
  const double sync_max = report("SYNC", sync_ms);
  const double groups_max = report("GROUPS", groups_ms);
  EXPECT_LT(sync_max, 2'000.0) << "another connection's flood stalled SYNC";
  EXPECT_LT(groups_max, 2'000.0) << "another connection's flood stalled GROUPS";

  // The flooder's excess was refused at once (the bound), not queued.
  size_t limited = 0;
  while (alice->wait_for([](const ServerFrame& f) { return f.code == "RATE_LIMITED"; }, 1ms).ok()) ++limited;
  std::cout << "[ figures  ] the flooder's frames answered RATE_LIMITED: " << limited << "\n";
  EXPECT_GT(limited, 0u);

  // Gone, its queued work is dropped: at most the read running when it went is done.
  alice->close();
  std::this_thread::sleep_for(100ms);
  const uint64_t reads_at_close = history_.reads.load();
  std::this_thread::sleep_for(500ms);
  EXPECT_LE(history_.reads.load() - reads_at_close, 1u) << "the reads of a closed connection went on";
}

// Item 7: the gateway stops with a group change in flight (appended, waiting for fanout) without touching
// what it already freed; under AddressSanitizer (scripts/test.sh asan) a use after free fails the test.
TEST_F(GatewayPoolsTest, StopsCleanlyWithAGroupChangeInFlight) {
  start([](GatewayOptions& o) { o.group_apply_wait_ms = 5'000; });
  const ConversationId group = create_group("stopping", "alice", {"bob"});
  auto alice = login("alice");
  alice->send_text(client::group_frame("GROUP_RENAME", {.group = group.str(), .name = "bye"}, "r1"));
  alice->send_text(client::group_frame("GROUP_ADD", {.group = group.str(), .members = {"carol"}}, "r2"));
  const auto deadline = Steady::now() + kWait;
  while (outbox_ids(outbox_partition_of(group, kPartitions), "alice").empty() && Steady::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_FALSE(outbox_ids(outbox_partition_of(group, kPartitions), "alice").empty());
  gateway_->stop();
  gateway_.reset();
  auto closed = alice->wait_ref("r1", 2s);  // the connection closed (or answered) once the gateway stopped
  EXPECT_TRUE(alice->closed() || closed.ok());
}

}  // namespace
}  // namespace qim
