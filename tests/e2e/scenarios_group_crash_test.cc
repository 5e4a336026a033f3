// G6 (issue 12, item 3): a MailboxNode that dies between two chunks of a group message. The crash is put
// exactly there by QIM_TEST_NODE_CRASH_BETWEEN_CHUNKS (node/crash_between_chunks.h): the node writes the
// first chunk of the record and exits, with no finish and no log commit. The node started again reads the
// record from the mailbox log, finds it begun and incomplete, writes it whole and advances the frontier:
// every member then shows the message exactly once, in order with what came before and after it.
//
// On `qim up` the node is the whole process; on the distributed deployment it is mailbox-1 (half of the
// shards), while mailbox-2 keeps serving its own half.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "client/frames.h"
#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"
#include "node/crash_between_chunks.h"

namespace qim::e2e {
namespace {

using client::GroupRequestFields;

// How often `cmid` shows in `entries`.
size_t copies_of(const std::vector<Entry>& entries, const std::string& cmid) {
  return static_cast<size_t>(
      std::count_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.client_msg_id == cmid; }));
}

TEST(E2E, G06_ANodeKilledBetweenChunksOfAGroupMessageShowsItOnceAfterItsRestart) {
  auto qim = new_deployment("g06-crash");
  // 4 recipients a chunk: 150 members make records of 2 or more chunks on every shard (2 to 4 over the
  // distributed deployment's 16 shards, more over a new embedded data directory's one per CPU). Given
  // to every start (fanout is in `qim up`, and a process's variables are those of its start).
  const Env chunks = {{"QIM_FANOUT_CHUNK_ENTRIES", "4"}};
  Env crash = chunks;
  crash["QIM_TEST_NODE_CRASH_BETWEEN_CHUNKS"] = "1";
  ASSERT_TRUE(qim->start(chunks).ok()) << qim->log_tail();
  const bool single = deployment_under_test() != "distributed";
  const std::string node = single ? "qim" : "mailbox-1";

  const auto owner = user("g06", "owner");
  std::vector<std::string> members;
  for (int i = 0; i < 149; ++i) members.push_back(user("g06", "m" + std::to_string(i)));
  auto o = login(*qim, owner);
  ASSERT_TRUE(o);
  auto created = o->group("GROUP_CREATE", {.members = members, .name = "crash"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  ASSERT_TRUE(o->send_to_conversation(g, "before", "before the crash").ok());
  members.push_back(owner);
  // Everything so far is materialised (no record of the group is left to the node that will crash).
  for (const auto& m : members) {
    auto c = login(*qim, m);
    ASSERT_TRUE(c);
    auto seen = sync_until(*c, [](const auto& e) { return has_cmid(e, "before"); });
    ASSERT_TRUE(has_cmid(seen, "before")) << m;
  }

  ASSERT_TRUE(qim->kill_process(node).ok());
  ASSERT_TRUE(qim->start_process(node, crash).ok()) << qim->log_tail();
  if (single) o = login(*qim, owner);
  ASSERT_TRUE(o);
  auto crash_me = o->send_to_conversation(g, "crash-me", "the record the node dies in");
  // In `qim up` the node's exit ends the gateway too, and it may do so before the SEND_ACK of the record
  // the node dies in is written (the record is durable by then: the node only reads appended records). A
  // client without its SEND_ACK sends again with the same client_msg_id once the server is back (below);
  // across processes the gateway outlives the node and answers.
  if (!single) {
    ASSERT_TRUE(crash_me.ok()) << crash_me.error().to_string();
  }
  auto code = qim->wait_process_exit(node, std::chrono::seconds(60));
  ASSERT_TRUE(code.ok()) << code.error().to_string();
  ASSERT_EQ(*code, kCrashBetweenChunksExit) << "the node did not stop between two chunks\n"
                                            << qim->log_tail();
  EXPECT_NE(qim->log_tail(200'000).find("stops before chunk 1"), std::string::npos) << qim->log_tail();

  if (!single) {
    // mailbox-2's half shows the message; mailbox-1's half does not: its frontier did not move.
    size_t shown = 0;
    for (const auto& m : members) {
      auto c = login(*qim, m);
      ASSERT_TRUE(c);
      auto now = sync_all(*c);
      ASSERT_TRUE(now);
      shown += has_cmid(*now, "crash-me");
    }
    EXPECT_LT(shown, members.size())
        << "every member shows the message although its node died before finishing";
  }

  ASSERT_TRUE(qim->start_process(node, chunks).ok()) << qim->log_tail();
  if (single) o = login(*qim, owner);
  ASSERT_TRUE(o);
  if (!crash_me.ok()) {
    // The retry of a SEND already in the Outbox is answered from it, not appended again: shown once below.
    auto retried = o->send_to_conversation(g, "crash-me", "the record the node dies in");
    ASSERT_TRUE(retried.ok()) << retried.error().to_string();
  }
  ASSERT_TRUE(o->send_to_conversation(g, "after", "after the restart").ok());
  for (const auto& m : members) {
    auto c = login(*qim, m);
    ASSERT_TRUE(c);
    auto seen = sync_until(*c, [](const auto& e) { return has_cmid(e, "after"); });
    ASSERT_TRUE(has_cmid(seen, "after")) << m << " never received the message after the restart";
    EXPECT_EQ(copies_of(seen, "crash-me"), 1u) << m << ": the interrupted message lost or shown twice";
    EXPECT_EQ(copies_of(seen, "before"), 1u) << m;
    std::vector<std::string> order;
    for (const auto& e : seen)
      if (e.conversation == g && e.client_msg_id.rfind("~group:", 0) != 0) order.push_back(e.client_msg_id);
    EXPECT_EQ(order, (std::vector<std::string>{"before", "crash-me", "after"})) << m;
    expect_strictly_increasing(seen);
  }
  EXPECT_EQ(qim->stop(), 0) << qim->log_tail();
}

}  // namespace
}  // namespace qim::e2e
