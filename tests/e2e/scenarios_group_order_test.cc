// End-to-end: a connection's SENDs reach the Outbox in the order it sent them, also to a group, whose
// membership check is a store read on the gateway's pool (issue 36, item 2; docs/protocol.md "Sending").
// Runs on every deployment of the e2e phases: `qim up`, and the distributed one with the redis and the CQL
// group stores.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/frames.h"
#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

std::vector<std::string> chat_ids(const std::vector<Entry>& entries, const std::string& group) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    if (e.conversation == group && e.client_msg_id.rfind("~group:", 0) != 0) out.push_back(e.client_msg_id);
  }
  return out;
}

// The group's chat messages `c` may read in HISTORY, oldest first, once `count` of them are archived (the
// archiver writes history asynchronously), or what there is after kWait.
std::vector<std::string> history_ids(Client& c, const std::string& group, size_t count) {
  std::vector<std::string> ids;
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (std::chrono::steady_clock::now() < deadline) {
    ids.clear();
    std::optional<uint64_t> before;
    while (true) {
      auto page = c.history(group, before, 200);
      if (!page.ok()) {
        ADD_FAILURE() << page.error().to_string();
        return {};
      }
      for (const auto& e : page->entries) {
        if (e.client_msg_id.rfind("~group:", 0) != 0) ids.push_back(e.client_msg_id);
      }
      if (!page->more || page->entries.empty()) break;
      before = page->entries.back().message_id;
    }
    if (ids.size() >= count) break;
    std::this_thread::sleep_for(100ms);
  }
  std::reverse(ids.begin(), ids.end());
  return ids;
}

// Success when `got` is `sent`; else where they first differ.
::testing::AssertionResult in_send_order(const std::vector<std::string>& got,
                                         const std::vector<std::string>& sent) {
  for (size_t i = 0; i < std::min(got.size(), sent.size()); ++i) {
    if (got[i] != sent[i])
      return ::testing::AssertionFailure()
             << "at " << i << ": " << got[i] << " where " << sent[i] << " was sent";
  }
  if (got.size() != sent.size())
    return ::testing::AssertionFailure() << got.size() << " messages listed, " << sent.size() << " sent";
  return ::testing::AssertionSuccess();
}

// G09. 500 SENDs to a group pipelined on one connection without waiting for their acks (paced under the
// frame rate, 200 a second): acknowledged with ids that increase in send order, and every member's SYNC and
// HISTORY list them in send order.
TEST(E2E, G09_PipelinedGroupSendsAreStoredInSendOrder) {
  auto& qim = shared_qim();
  const auto a = user("g07", "alice"), b = user("g07", "bob"), c = user("g07", "carol");
  auto alice = login(qim, a);
  auto created = alice->group("GROUP_CREATE", {.members = {b, c}, .name = "pipelined"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;

  constexpr int kSends = 500, kBurst = 100;
  std::vector<std::string> sent;
  for (int i = 0; i < kSends; ++i) {
    sent.push_back("p" + std::to_string(i));
    alice->send_text(
        client::send_to_conversation_frame(g, sent.back(), "message " + sent.back(), sent.back()));
    if (i % kBurst == kBurst - 1) std::this_thread::sleep_for(600ms);  // 100 frames per 0.6 s: under the rate
  }
  uint64_t last_id = 0;
  std::vector<std::string> stored;  // acknowledged; a SEND answered UNAVAILABLE (an engine slow under load:
                                    // the client would retry it, later) was not stored and is left out
  for (const auto& id : sent) {
    auto ack = alice->wait_ref(id, kWait);
    ASSERT_TRUE(ack.ok()) << id << ": " << ack.error().to_string();
    if (ack->type == "ERROR" && ack->code == "UNAVAILABLE") continue;
    ASSERT_EQ(ack->type, "SEND_ACK") << ack->raw;
    EXPECT_GT(ack->message_id, last_id) << id << " got an id below an earlier SEND's";
    last_id = ack->message_id;
    stored.push_back(id);
  }
  ASSERT_GE(stored.size(), sent.size() * 9 / 10) << "most SENDs were answered UNAVAILABLE";

  auto bob = login(qim, b);
  auto carol = login(qim, c);
  for (auto* member : {alice.get(), bob.get(), carol.get()}) {
    auto synced = sync_until(*member, [&](const auto& e) { return chat_ids(e, g).size() >= stored.size(); });
    EXPECT_TRUE(in_send_order(chat_ids(synced, g), stored)) << "SYNC";
    EXPECT_TRUE(in_send_order(history_ids(*member, g, stored.size()), stored)) << "HISTORY";
  }
}

}  // namespace
}  // namespace qim::e2e
