// End-to-end scenarios 1-9 of SYSTEM.md section 5 (auth, acks and delivery), over real WebSockets against a
// real `qim up`. Scenarios 10-14 are in scenarios_operations_test.cc, 15-16 in scenarios_bad_input_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "auth/token.h"
#include "e2e/e2e_env.h"
#include "e2e/history_support.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

// 1. auth: a valid token is accepted; a bad or expired one is refused with a clear error.
TEST(E2E, S01_Auth) {
  auto& qim = shared_qim();
  const auto alice = user("s01", "alice");
  auto ok = connect_to(qim)->auth(token_for(alice, "phone"));
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ(ok->user, alice);
  EXPECT_EQ(ok->device, "phone");

  auto garbage = connect_to(qim);
  auto r1 = garbage->auth("not-a-token");
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.error().message().rfind("UNAUTHENTICATED: token malformed", 0), 0u) << r1.error().message();

  SystemClock wall;
  auto forged = mint_token("some-other-secret", *UserId::parse(alice), *DeviceId::parse("d"), 60'000, wall);
  auto r2 = connect_to(qim)->auth(*forged);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.error().message().find("signature does not match"), std::string::npos);

  ManualClock two_hours_ago(wall.now_ms() - 2 * 3'600'000);
  auto expired = mint_token(kSecret, *UserId::parse(alice), *DeviceId::parse("d"), 3'600'000, two_hours_ago);
  auto r3 = connect_to(qim)->auth(*expired);
  ASSERT_FALSE(r3.ok());
  EXPECT_NE(r3.error().message().find("token expired"), std::string::npos) << r3.error().message();
  // A refused connection is closed: nothing else can be done on it.
  EXPECT_EQ(garbage->wait_type("never", kWait).code(), Errc::kTransport);
}

// 2. SEND_ACK carries the server message id and time, and is sent only once the Outbox append is durable:
//    a crash right after the ack loses nothing.
TEST(E2E, S02_SendAckIsDurable) {
  auto& qim = shared_qim();
  const auto a = user("s02", "a"), b = user("s02", "b");
  auto ack = login(qim, a)->send(b, "m1", "durable?");
  ASSERT_TRUE(ack.ok()) << ack.error().to_string();
  EXPECT_EQ(ack->type, "SEND_ACK");
  EXPECT_EQ(ack->client_msg_id, "m1");
  EXPECT_GT(ack->server_time, 0);
  EXPECT_EQ(ack->conversation, conv(a, b));
  EXPECT_FALSE(ack->duplicate);

  qim.kill();  // SIGKILL right after the ack: no drain, no flush
  auto st = qim.start();
  ASSERT_TRUE(st.ok()) << st.error().to_string();
  auto bob = login(qim, b);
  auto entries = sync_until(*bob, [](const auto& e) { return !e.empty(); });
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].message_id, ack->message_id);
  EXPECT_EQ(entries[0].server_time, ack->server_time);
  EXPECT_EQ(entries[0].body, "durable?");
  EXPECT_EQ(entries[0].sender, a);
}

// 3. idempotent send: the same client message id twice gives one message id and one delivery.
TEST(E2E, S03_IdempotentSend) {
  auto& qim = shared_qim();
  const auto a = user("s03", "a"), b = user("s03", "b");
  auto alice = login(qim, a);
  auto first = alice->send(b, "same-id", "hello once");
  auto second = alice->send(b, "same-id", "hello once");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->message_id, second->message_id);
  EXPECT_TRUE(second->duplicate);
  // A retry from a fresh connection (as after a network failure) too.
  auto third = login(qim, a, "d1")->send(b, "same-id", "hello once");
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->message_id, first->message_id);
  ASSERT_TRUE(alice->send(b, "marker", "after").ok());

  auto bob = login(qim, b);
  auto entries = sync_until(*bob, [](const auto& e) { return has_cmid(e, "marker"); });
  ASSERT_TRUE(has_cmid(entries, "marker"));
  EXPECT_EQ(std::count_if(entries.begin(), entries.end(),
                          [](const Entry& e) { return e.client_msg_id == "same-id"; }),
            1);
}

// 4. online delivery: a connected recipient gets the message pushed, with its mailbox_seq.
TEST(E2E, S04_OnlineDelivery) {
  auto& qim = shared_qim();
  const auto a = user("s04", "a"), b = user("s04", "b");
  auto bob = login(qim, b);
  auto ack = login(qim, a)->send(b, "m1", "are you there?");
  ASSERT_TRUE(ack.ok());
  auto got = collect_delivered(*bob, 1, kWait);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message_id, ack->message_id);
  EXPECT_GT(got[0].seq, 0u);
  EXPECT_EQ(got[0].body, "are you there?");
  EXPECT_EQ(got[0].sender, a);
  EXPECT_EQ(got[0].conversation, conv(a, b));
  // The push and the mailbox agree on the sequence.
  auto synced = sync_all(*bob);
  ASSERT_TRUE(synced && synced->size() == 1u);
  EXPECT_EQ((*synced)[0].seq, got[0].seq);
}

// 5. offline delivery: a recipient who connects later gets it with SYNC.
TEST(E2E, S05_OfflineDelivery) {
  auto& qim = shared_qim();
  const auto a = user("s05", "a"), b = user("s05", "b");
  auto ack = login(qim, a)->send(b, "m1", "while you were out");
  ASSERT_TRUE(ack.ok());
  auto bob = login(qim, b);
  auto entries = sync_until(*bob, [](const auto& e) { return !e.empty(); });
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].message_id, ack->message_id);
  EXPECT_EQ(entries[0].body, "while you were out");
}

// 6. order: 100 messages A->B arrive in send order with strictly increasing sequences; a device running
// the client loop of docs/protocol.md shows each exactly once, in order.
TEST(E2E, S06_Order) {
  auto& qim = shared_qim();
  const auto a = user("s06", "a"), b = user("s06", "b");
  auto bob = login(qim, b);
  auto bob_loop = login(qim, b, "loop");
  ASSERT_TRUE(bob_loop);
  client::MailboxFollower follower(*bob_loop, {});
  follower.start();
  auto alice = login(qim, a);
  // The run is also recorded as a history and judged by the checker (src/checker/checker.h).
  checker::HistoryRecorder h(history_path("e2e-s06-" + deployment_under_test() + "-" + backend_under_test()));
  for (int i = 0; i < 100; ++i) {
    h.invoke(a + "/d1", a, conv(a, b), "m" + std::to_string(i), std::to_string(i));
    alice->send_text(client::send_frame(b, "m" + std::to_string(i), std::to_string(i)));
  }
  for (int i = 0; i < 100; ++i) {
    auto ack = alice->wait_type("SEND_ACK", kWait);
    ASSERT_TRUE(ack.ok()) << i;
    h.ok(a + "/d1", a, ack->client_msg_id, ack->message_id);
  }
  auto pushed = collect_delivered(*bob, 100, kWait);
  ASSERT_EQ(pushed.size(), 100u);
  auto synced = sync_all(*bob);
  ASSERT_TRUE(synced);
  ASSERT_EQ(synced->size(), 100u);
  auto shown = follow(follower, 100, kWait);
  ASSERT_EQ(shown.size(), 100u);
  EXPECT_TRUE(follow(follower, 1, kQuiet).empty()) << "the loop showed an entry twice";
  h.shown(b + "/loop", b, shown);
  EXPECT_TRUE(record_final_mailbox(h, *bob, b));
  EXPECT_TRUE(record_final_mailbox(h, *alice, a));
  expect_history_ok(h);
  for (const auto* list : {&pushed, &*synced, &shown}) {
    for (int i = 0; i < 100; ++i) EXPECT_EQ((*list)[i].body, std::to_string(i));
    expect_strictly_increasing(*list);
  }
}

// 7. multi-device: both of B's devices get it; A's other device gets A's own message.
TEST(E2E, S07_MultiDevice) {
  auto& qim = shared_qim();
  const auto a = user("s07", "a"), b = user("s07", "b");
  auto b_phone = login(qim, b, "phone");
  auto b_laptop = login(qim, b, "laptop");
  auto a_laptop = login(qim, a, "laptop");
  auto a_phone = login(qim, a, "phone");
  auto ack = a_phone->send(b, "m1", "to every device");
  ASSERT_TRUE(ack.ok());
  for (auto* c : {b_phone.get(), b_laptop.get(), a_laptop.get()}) {
    auto got = collect_delivered(*c, 1, kWait);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].message_id, ack->message_id);
    EXPECT_EQ(got[0].sender, a);
    EXPECT_EQ(got[0].sender_device, "phone");
  }
}

// 8. cursor resume: reconnecting with the last cursor yields exactly what came after it.
TEST(E2E, S08_CursorResume) {
  auto& qim = shared_qim();
  const auto a = user("s08", "a"), b = user("s08", "b");
  auto alice = login(qim, a);
  uint64_t cursor = 0;
  {
    auto bob = login(qim, b);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(alice->send(b, "old" + std::to_string(i), "old").ok());
    auto got = collect_delivered(*bob, 3, kWait);
    ASSERT_EQ(got.size(), 3u);
    cursor = got.back().seq;
  }
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(alice->send(b, "new" + std::to_string(i), "new" + std::to_string(i)).ok());
  auto bob = login(qim, b);
  auto after = sync_until(
      *bob, [](const auto& e) { return e.size() >= 3; }, cursor);
  ASSERT_EQ(after.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(after[i].client_msg_id, "new" + std::to_string(i));
    EXPECT_GT(after[i].seq, cursor);
  }
}

// 9. history: the conversation's history pages back in order.
TEST(E2E, S09_History) {
  auto& qim = shared_qim();
  const auto a = user("s09", "a"), b = user("s09", "b");
  auto alice = login(qim, a);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 5; ++i) {
    auto ack = alice->send(b, "h" + std::to_string(i), "h" + std::to_string(i));
    ASSERT_TRUE(ack.ok());
    ids.push_back(ack->message_id);
  }
  const auto c = conv(a, b);
  auto bob = login(qim, b);
  // Wait until the archiver has all five.
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (std::chrono::steady_clock::now() < deadline) {
    auto all = bob->history(c, std::nullopt, 50);
    ASSERT_TRUE(all.ok()) << all.error().to_string();
    if (all->entries.size() == 5) break;
    std::this_thread::sleep_for(50ms);
  }
  std::vector<std::string> seen;
  std::optional<uint64_t> before;
  for (int page = 0; page < 5; ++page) {
    auto p = bob->history(c, before, 2);
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    for (const auto& m : p->entries) seen.push_back(m.body);
    if (!p->more) break;
    ASSERT_FALSE(p->entries.empty());
    before = p->entries.back().message_id;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"h4", "h3", "h2", "h1", "h0"}));
  auto newest = alice->history(c, std::nullopt, 1);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->entries.size(), 1u);
  EXPECT_EQ(newest->entries[0].message_id, ids.back());
  EXPECT_TRUE(newest->more);
}

}  // namespace
}  // namespace qim::e2e
