// A SEND's deadline (decision 105): a SEND whose Outbox append is not durable within
// GatewayOptions::send_ack_deadline_ms is answered UNAVAILABLE ("deadline exceeded") instead of a late
// SEND_ACK; the append is not withdrawn, and the retry with the same client_msg_id is deduplicated (one
// record, the first's message id). The Outbox is the in-memory FakeLog holding its appends back: a disk
// whose fsync does not return until the test says so. Nothing here depends on how fast the machine is: the
// held append never completes before the test releases it, and the deadline is the gateway's own timer.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "client/client.h"
#include "gateway/tests/gateway_harness.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSecret = "send-deadline-test-secret";
constexpr auto kWait = 10s;

class SendDeadlineTest : public testing::GatewayHarness {
 protected:
  SendDeadlineTest() : GatewayHarness(kSecret) {}

  // Waits (bounded) until the log holds `n` appends back.
  bool held(size_t n) {
    for (auto until = std::chrono::steady_clock::now() + kWait; std::chrono::steady_clock::now() < until;) {
      if (log_.held() == n) return true;
      std::this_thread::sleep_for(1ms);
    }
    return log_.held() == n;
  }
};

TEST_F(SendDeadlineTest, ASendNotDurableByItsDeadlineIsRefusedUnavailableAndItsRetryIsDeduplicated) {
  start([](GatewayOptions& o) { o.send_ack_deadline_ms = 100; });
  auto alice = login("alice");
  log_.hold(true);  // the disk's fsync does not return

  alice->send_text(client::send_frame("bob", "c1", "hello", "s1"));
  auto late = alice->wait_ref("s1", kWait);
  ASSERT_TRUE(late.ok()) << "no answer while the append was stuck: " << late.error().to_string();
  EXPECT_EQ(late->type, "ERROR") << late->raw;
  EXPECT_EQ(late->code, "UNAVAILABLE") << late->raw;
  EXPECT_NE(late->message.find("deadline exceeded"), std::string::npos) << late->raw;
  EXPECT_NE(late->message.find("same client_msg_id"), std::string::npos) << late->raw;
  ASSERT_TRUE(held(1)) << "the append was withdrawn or never made";

  // The client retries while the first append is still stuck: the retry waits for that append (no second
  // record) and is bounded by its own deadline too.
  alice->send_text(client::send_frame("bob", "c1", "hello", "s2"));
  auto again = alice->wait_ref("s2", kWait);
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(again->code, "UNAVAILABLE") << again->raw;
  EXPECT_NE(again->message.find("deadline exceeded"), std::string::npos) << again->raw;
  EXPECT_EQ(log_.held(), 1u) << "the retry appended a second record";

  // The disk is fast again: the first append becomes durable, and is answered to nobody (its SEND was
  // refused); the next retry gets its message id, once.
  log_.hold(false);
  log_.release();
  auto ack = alice->send("bob", "c1", "hello");
  ASSERT_TRUE(ack.ok()) << ack.error().to_string();
  EXPECT_EQ(ack->type, "SEND_ACK") << ack->raw;
  EXPECT_TRUE(ack->duplicate) << ack->raw;
  auto records = log_.all_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(ack->message_id, message_id_of(records[0].partition, records[0].offset).value);
  // Nothing else was queued to alice for s1 or s2 (the durable append answered nobody).
  EXPECT_EQ(alice->wait_ref("s1", 300ms).code(), Errc::kTimeout);
}

TEST_F(SendDeadlineTest, ASendDurableWithinItsDeadlineIsAcknowledged) {
  // A deadline far beyond anything a loaded machine takes: the SEND_ACK comes, the timer is cancelled (the
  // gateway stops at once, not at the deadline: stop() would otherwise wait on the connection).
  start([](GatewayOptions& o) { o.send_ack_deadline_ms = 600'000; });
  auto alice = login("alice");
  auto ack = alice->send("bob", "c1", "hello");
  ASSERT_TRUE(ack.ok()) << ack.error().to_string();
  EXPECT_EQ(ack->type, "SEND_ACK") << ack->raw;
  EXPECT_FALSE(ack->duplicate);
  EXPECT_EQ(log_.total_records(), 1u);
}

TEST_F(SendDeadlineTest, WithoutADeadlineAStuckAppendIsAnsweredWhenItCompletes) {
  start([](GatewayOptions& o) { o.send_ack_deadline_ms = 0; });
  auto alice = login("alice");
  log_.hold(true);
  alice->send_text(client::send_frame("bob", "c1", "hello", "s1"));
  ASSERT_TRUE(held(1));
  EXPECT_EQ(alice->wait_ref("s1", 300ms).code(), Errc::kTimeout);  // waits for the disk, however long
  log_.release();
  auto ack = alice->wait_ref("s1", kWait);
  ASSERT_TRUE(ack.ok()) << ack.error().to_string();
  EXPECT_EQ(ack->type, "SEND_ACK") << ack->raw;
}

}  // namespace
}  // namespace qim
