#include "delivery/fan_in_notifier.h"

#include <gtest/gtest.h>

#include <latch>
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

class Recorder final : public DeliveryNotifier {
 public:
  void entries_visible(ShardId shard, MailboxSeq frontier, std::span<const MailboxEntry> entries) override {
    std::lock_guard lock(mu);
    for (const auto& e : entries) seen.push_back({shard.value, frontier.raw(), e.seq.raw()});
  }
  std::mutex mu;
  std::vector<std::array<uint64_t, 3>> seen;
};

TEST(FanInNotifierTest, HandsEveryBatchToEveryDownstreamInArrivalOrder) {
  Recorder a, b;
  {
    FanInNotifier fan_in({&a, &b});
    std::vector<MailboxEntry> first{entry("u1", 5), entry("u2", 5)};
    fan_in.entries_visible(ShardId{1}, MailboxSeq::from_raw(5), first);
    std::vector<MailboxEntry> second{entry("u3", 9)};
    fan_in.entries_visible(ShardId{2}, MailboxSeq::from_raw(9), second);
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
  void entries_visible(ShardId, MailboxSeq, std::span<const MailboxEntry> entries) override {
    entered.count_down();
    release.wait();
    calls += entries.size();
  }
  std::latch entered{1};
  std::latch release{1};
  size_t calls = 0;
};

TEST(FanInNotifierTest, AFullQueueDropsAndCountsInsteadOfBlockingTheWorker) {
  Blocking slow;
  FanInNotifier fan_in({&slow}, 2);
  std::vector<MailboxEntry> one{entry("u", 1)};
  fan_in.entries_visible(ShardId{0}, MailboxSeq::from_raw(1), one);
  slow.entered.wait();  // the delivery thread holds the first batch
  fan_in.entries_visible(ShardId{0}, MailboxSeq::from_raw(2), one);
  fan_in.entries_visible(ShardId{0}, MailboxSeq::from_raw(3), one);
  fan_in.entries_visible(ShardId{0}, MailboxSeq::from_raw(4), one);  // over the bound of 2 queued
  EXPECT_EQ(fan_in.dropped_entries(), 1u);
  slow.release.count_down();
  fan_in.flush();
  EXPECT_EQ(fan_in.delivered_entries(), 3u);
  EXPECT_EQ(slow.calls, 3u);
}

}  // namespace
}  // namespace qim
