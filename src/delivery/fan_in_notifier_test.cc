#include "delivery/fan_in_notifier.h"

#include <gtest/gtest.h>

#include <latch>
#include <map>
#include <mutex>
#include <thread>

namespace qim {
namespace {

MailboxEntry entry(const std::string& user, uint64_t seq) {
  MailboxEntry e;
  e.user = UserId::parse(user).value();
  e.seq = MailboxSeq::from_raw(seq);
  return e;
}

MailboxSeq seq(uint64_t raw) {
  return MailboxSeq::from_raw(raw);
}

class Recorder final : public DeliveryNotifier {
 public:
  void entries_visible(ShardId shard, MailboxSeq, MailboxSeq to,
                       std::span<const MailboxEntry> entries) override {
    std::lock_guard lock(mu);
    for (const auto& e : entries) seen.push_back({shard.value, to.raw(), e.seq.raw()});
  }
  void range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) override {
    std::lock_guard lock(mu);
    unknown.push_back({shard.value, from.raw(), to.raw()});
  }
  std::mutex mu;
  std::vector<std::array<uint64_t, 3>> seen;
  std::vector<std::array<uint64_t, 3>> unknown;  // shard, from, to
};

TEST(FanInNotifierTest, HandsEveryBatchToEveryDownstreamInArrivalOrder) {
  Recorder a, b;
  {
    FanInNotifier fan_in({&a, &b});
    std::vector<MailboxEntry> first{entry("u1", 5), entry("u2", 5)};
    fan_in.entries_visible(ShardId{1}, seq(0), seq(5), first);
    std::vector<MailboxEntry> second{entry("u3", 9)};
    fan_in.entries_visible(ShardId{2}, seq(0), seq(9), second);
    fan_in.flush();
    EXPECT_EQ(fan_in.delivered_entries(), 3u);
  }
  const std::vector<std::array<uint64_t, 3>> want{{1, 5, 5}, {1, 5, 5}, {2, 9, 9}};
  EXPECT_EQ(a.seen, want);
  EXPECT_EQ(b.seen, want);
}

// A downstream that blocks until released, to fill the queue behind it.
class Blocking final : public DeliveryNotifier {
 public:
  void entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                       std::span<const MailboxEntry> entries) override {
    entered.count_down();
    release.wait();
    calls += entries.size();
    reports++;
    inner.entries_visible(shard, from, to, entries);
  }
  void range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) override {
    inner.range_unknown(shard, from, to);
  }
  std::latch entered{1};
  std::latch release{1};
  size_t calls = 0;    // entries handed on
  size_t reports = 0;  // calls of entries_visible
  Recorder inner;
};

// Over its bound the fan-in drops entries but not the fact: the dropped ranges of a shard reach the
// downstream as one "range unknown" report, in chain order, so a gateway can tell its clients to SYNC.
TEST(FanInNotifierTest, AFullQueueSignalsTheDroppedRangesInsteadOfBlockingOrStayingSilent) {
  Blocking slow;
  FanInNotifier fan_in({&slow}, 2);
  std::vector<MailboxEntry> one{entry("u", 1)};
  fan_in.entries_visible(ShardId{0}, seq(0), seq(1), one);
  slow.entered.wait();  // the delivery thread holds the first report
  fan_in.entries_visible(ShardId{0}, seq(1), seq(2), one);
  fan_in.entries_visible(ShardId{0}, seq(2), seq(3), one);
  fan_in.entries_visible(ShardId{0}, seq(3), seq(4), one);  // over the bound of 2 queued
  fan_in.entries_visible(ShardId{1}, seq(0), seq(7), one);  // another shard: its own marker
  fan_in.entries_visible(ShardId{0}, seq(4), seq(5), one);  // collapses into shard 0's marker
  EXPECT_EQ(fan_in.dropped_entries(), 3u);
  slow.release.count_down();
  fan_in.flush();
  EXPECT_EQ(fan_in.delivered_entries(), 3u);
  EXPECT_EQ(slow.calls, 3u);
  EXPECT_EQ(fan_in.unknown_ranges_delivered(), 2u);
  const std::vector<std::array<uint64_t, 3>> want{{0, 3, 5}, {1, 0, 7}};
  EXPECT_EQ(slow.inner.unknown, want);
}

// Reports queued behind a slow downstream go on together: a shard's chained reports as one call (its
// entries in order), an unknown range or a break in the chain still separate, other shards apart.
TEST(FanInNotifierTest, ChainedReportsQueuedBehindASlowDownstreamAreHandedOnAsOne) {
  Blocking slow;
  FanInNotifier fan_in({&slow});
  std::vector<MailboxEntry> one{entry("u", 1)};
  fan_in.entries_visible(ShardId{0}, seq(0), seq(1), one);
  slow.entered.wait();  // the delivery thread holds the first report: the rest queue up
  fan_in.entries_visible(ShardId{0}, seq(1), seq(2), std::vector<MailboxEntry>{entry("a", 2)});
  fan_in.entries_visible(ShardId{1}, seq(0), seq(4), std::vector<MailboxEntry>{entry("b", 4)});
  fan_in.entries_visible(ShardId{0}, seq(2), seq(3), std::vector<MailboxEntry>{entry("c", 3)});
  fan_in.range_unknown(ShardId{0}, seq(3), seq(5));
  fan_in.entries_visible(ShardId{0}, seq(5), seq(6), std::vector<MailboxEntry>{entry("d", 6)});
  fan_in.entries_visible(ShardId{0}, seq(7), seq(8), std::vector<MailboxEntry>{entry("e", 8)});  // a gap
  slow.release.count_down();
  fan_in.flush();
  EXPECT_EQ(fan_in.delivered_entries(), 6u);
  EXPECT_EQ(fan_in.unknown_ranges_delivered(), 1u);
  // Per shard (shards are independent chains: their order between each other is not promised), the
  // report's `to` and the entry's seq: shard 0's (1, 3] came as one report.
  std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> by_shard;
  for (const auto& [shard, to, s] : slow.inner.seen) by_shard[shard].push_back({to, s});
  const std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> want{
      {0, {{1, 1}, {3, 2}, {3, 3}, {6, 6}, {8, 8}}}, {1, {{4, 4}}}};
  EXPECT_EQ(by_shard, want);
  const std::vector<std::array<uint64_t, 3>> unknown{{0, 3, 5}};
  EXPECT_EQ(slow.inner.unknown, unknown);
  EXPECT_EQ(slow.reports, 5u);  // (0, 1], (1, 3], (0, 4] of shard 1, (5, 6], (7, 8]
}

// A range the node itself could not attribute is handed on as such, in order with the other reports.
TEST(FanInNotifierTest, ARangeUnknownFromTheNodeIsHandedOnInOrder) {
  Recorder r;
  {
    FanInNotifier fan_in({&r});
    std::vector<MailboxEntry> one{entry("u", 1)};
    fan_in.entries_visible(ShardId{3}, seq(0), seq(1), one);
    fan_in.range_unknown(ShardId{3}, seq(1), seq(6));
    fan_in.flush();
    EXPECT_EQ(fan_in.unknown_ranges_delivered(), 1u);
  }
  EXPECT_EQ(r.seen.size(), 1u);
  const std::vector<std::array<uint64_t, 3>> want{{3, 1, 6}};
  EXPECT_EQ(r.unknown, want);
}

}  // namespace
}  // namespace qim
