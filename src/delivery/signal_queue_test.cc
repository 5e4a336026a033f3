#include "delivery/signal_queue.h"

#include <gtest/gtest.h>

#include <future>

#include "delivery/local_signal_bus.h"

namespace qim {
namespace {

UserId user(std::string_view name) {
  return *UserId::parse(name);
}

TEST(SignalQueue, HandsOnEverySignalInOrder) {
  std::vector<std::string> got;
  {
    SignalQueue q("t", [&](std::vector<Signal>& batch) {
      for (auto& s : batch) got.push_back(s.frame);
    });
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(q.push(Signal{{user("a")}, std::to_string(i), 0}));
    q.flush();
    EXPECT_EQ(q.dropped_total(), 0u);
    EXPECT_EQ(q.queued_total(), 100u);
  }
  ASSERT_EQ(got.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[i], std::to_string(i));
}

TEST(SignalQueue, DropsAndCountsPastItsBound) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<size_t> handed{0};
  SignalQueue q(
      "t",
      [&](std::vector<Signal>& batch) {
        released.wait();  // the downstream is stuck: the queue fills up
        handed += batch.size();
      },
      4);
  ASSERT_TRUE(q.push(Signal{{user("a")}, "first", 0}));
  // The first may already be taken by the thread; at most 4 more fit, the rest are dropped.
  size_t accepted = 0;
  for (int i = 0; i < 20; ++i) accepted += q.push(Signal{{user("a")}, "x", 0}) ? 1 : 0;
  EXPECT_LE(accepted, 4u);
  EXPECT_GE(q.dropped_total(), 16u);
  EXPECT_EQ(q.dropped_total() + accepted, 20u);
  release.set_value();
  q.flush();
  EXPECT_EQ(handed.load(), accepted + 1);
  EXPECT_NE(q.metrics_text().find("qim_signals_dropped_total " + std::to_string(q.dropped_total())),
            std::string::npos);
}

struct RecordingSink final : SignalSink {
  std::mutex mu;
  std::vector<std::tuple<std::vector<UserId>, std::string, uint64_t>> got;
  void deliver_signal(std::span<const UserId> users, std::shared_ptr<const std::string> frame,
                      uint64_t except) override {
    std::lock_guard lock(mu);
    got.emplace_back(std::vector<UserId>(users.begin(), users.end()), *frame, except);
  }
};

TEST(LocalSignalBus, DeliversToTheAttachedSinkOnly) {
  RecordingSink sink;
  LocalSignalBus bus;
  std::vector<UserId> users{user("bob"), user("carol")};
  bus.send(users, "before");  // no sink yet: goes nowhere
  bus.flush();
  bus.attach(&sink);
  bus.send(users, "{\"type\":\"TYPING\"}", 7);
  bus.send({}, "nobody");  // no user: nothing queued
  bus.flush();
  bus.attach(nullptr);
  ASSERT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(std::get<0>(sink.got[0]), users);
  EXPECT_EQ(std::get<1>(sink.got[0]), "{\"type\":\"TYPING\"}");
  EXPECT_EQ(std::get<2>(sink.got[0]), 7u);
}

}  // namespace
}  // namespace qim
