// Blocking, mute and delete for me end to end (issue 39, items 6, 7, 3; docs/protocol.md "Blocking",
// "Mute", "Delete for me"), on `qim up` and on the distributed deployments: each user's devices on both
// gateways where there are two, so what a device learns from another travels the signal path.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

std::string code_of(const Error& e) {
  const auto colon = e.message().find(':');
  return e.message().substr(0, colon);
}

// HISTORY of `c` until it holds `n` messages (the archiver writes it after the ACK), or kWait.
std::vector<Entry> history_of(Client& client, const std::string& c, size_t n) {
  const auto until = std::chrono::steady_clock::now() + kWait;
  std::vector<Entry> got;
  do {
    auto page = client.history(c, std::nullopt, 50);
    if (!page.ok()) {
      ADD_FAILURE() << "HISTORY: " << page.error().to_string();
      return {};
    }
    got = page->entries;
    if (got.size() >= n) return got;
    std::this_thread::sleep_for(50ms);
  } while (std::chrono::steady_clock::now() < until);
  return got;
}

const client::ConversationItem* item_of(const ServerFrame& page, const std::string& c) {
  for (const auto& it : page.conversations)
    if (it.conversation == c) return &it;
  return nullptr;
}

// B01. A direct SEND from a blocked user is refused BLOCKED and appends nothing; the block list reaches the
// blocker's other device at once (BLOCK_CHANGED), is listed there and removable; after UNBLOCK the SEND
// goes through.
TEST(E2E, B01_BlockedUsersDirectSendRefusedListSyncedAndRemovable) {
  auto& qim = shared_qim();
  const auto a = user("b01", "alice"), b = user("b01", "bob"), c = user("b01", "carol");
  auto alice = login_at(first_gateway(qim), a, "d1");
  auto alice2 = login_at(last_gateway(qim), a, "d2");
  auto bob = login_at(last_gateway(qim), b);
  ASSERT_TRUE(alice && alice2 && bob);
  ASSERT_TRUE(bob->send(a, "before", "hi").ok());

  auto blocked = alice->block(b);
  ASSERT_TRUE(blocked.ok()) << blocked.error().to_string();
  EXPECT_EQ(blocked->type, "BLOCK_OK");
  EXPECT_TRUE(blocked->blocked);
  auto pushed = next(*alice2, "BLOCK_CHANGED", b);
  ASSERT_TRUE(pushed.ok()) << pushed.error().to_string();
  EXPECT_TRUE(pushed->blocked);
  auto list = alice2->blocks();
  ASSERT_TRUE(list.ok()) << list.error().to_string();
  EXPECT_EQ(list->users, std::vector<std::string>{b});

  auto refused = bob->send(a, "after", "are you there?");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(code_of(refused.error()), "BLOCKED") << refused.error().to_string();
  ASSERT_TRUE(bob->send(c, "to-carol", "hello").ok()) << "only the blocker refuses";
  // Pipelined direct SENDs share their block check (one pool slot, not one each): 100 in a row, over the
  // connection's 32 requests in progress, are all acknowledged.
  for (int i = 0; i < 100; ++i) {
    bob->send_text(R"({"type":"SEND","ref":"p)" + std::to_string(i) + R"(","to":")" + c +
                   R"(","client_msg_id":"pipe-)" + std::to_string(i) + R"(","body":"x"})");
  }
  for (int i = 0; i < 100; ++i) {
    auto ack = bob->wait_ref("p" + std::to_string(i), kWait);
    ASSERT_TRUE(ack.ok()) << i << ": " << ack.error().to_string();
    EXPECT_EQ(ack->type, "SEND_ACK") << i << ": " << ack->raw;
  }
  // Nothing of the refused SEND anywhere: not in alice's mailbox, not in bob's own (both read once what
  // was sent around it is there).
  auto mine = sync_until(*alice2, [](const auto& e) { return has_cmid(e, "before"); });
  EXPECT_TRUE(has_cmid(mine, "before"));
  EXPECT_FALSE(has_cmid(mine, "after"));
  auto his = sync_until(*bob, [](const auto& e) { return has_cmid(e, "before") && has_cmid(e, "to-carol"); });
  EXPECT_TRUE(has_cmid(his, "to-carol"));
  EXPECT_FALSE(has_cmid(his, "after"));
  EXPECT_EQ(alice->block(a).error().message().substr(0, 16), "INVALID_ARGUMENT") << "blocking oneself";

  auto unblocked = alice2->block(b, false);
  ASSERT_TRUE(unblocked.ok());
  EXPECT_FALSE(unblocked->blocked);
  EXPECT_TRUE(next(*alice, "BLOCK_CHANGED", R"("blocked":false)").ok());
  EXPECT_TRUE(alice->blocks()->users.empty());
  EXPECT_TRUE(bob->send(a, "after-unblock", "back").ok());
}

// B02. A blocked user cannot put the blocker in a group (GROUP_CREATE or GROUP_ADD: BLOCKED); in a group
// both are in, the blocked user's messages still arrive, flagged from_blocked for the blocker only
// (DELIVER, SYNC, HISTORY).
TEST(E2E, B02_BlockedUserCannotAddTheBlockerAndGroupMessagesAreFlagged) {
  auto& qim = shared_qim();
  const auto a = user("b02", "alice"), b = user("b02", "bob"), c = user("b02", "carol");
  auto alice = login_at(first_gateway(qim), a);
  auto bob = login_at(last_gateway(qim), b);
  auto carol = login_at(first_gateway(qim), c);
  ASSERT_TRUE(alice && bob && carol);
  ASSERT_TRUE(alice->block(b).ok());

  auto create = bob->group("GROUP_CREATE", {.members = {c, a}, .name = "nope"});
  ASSERT_FALSE(create.ok());
  EXPECT_EQ(code_of(create.error()), "BLOCKED") << create.error().to_string();
  auto own = bob->group("GROUP_CREATE", {.members = {c}, .name = "bobs"});
  ASSERT_TRUE(own.ok()) << own.error().to_string();
  auto add = bob->group("GROUP_ADD", {.group = own->group, .members = {a}});
  ASSERT_FALSE(add.ok());
  EXPECT_EQ(code_of(add.error()), "BLOCKED") << add.error().to_string();

  // The blocker may still be in a group with them (here: she adds him).
  auto shared = alice->group("GROUP_CREATE", {.members = {b, c}, .name = "shared"});
  ASSERT_TRUE(shared.ok()) << shared.error().to_string();
  const std::string g = shared->group;
  ASSERT_TRUE(bob->send_to_conversation(g, "from-bob", "hello all").ok());
  ASSERT_TRUE(carol->send_to_conversation(g, "from-carol", "hi").ok());
  // Pushed: the DELIVER encoded for alice flags bob's message (her gateway holds her block list).
  auto pushed = next(*alice, "DELIVER", R"("client_msg_id":"from-bob")");
  ASSERT_TRUE(pushed.ok()) << pushed.error().to_string();
  for (const Entry& e : pushed->entries)
    EXPECT_EQ(e.from_blocked, e.client_msg_id == "from-bob") << e.client_msg_id;
  auto seen = sync_until(*alice, [](const std::vector<Entry>& e) {
    return has_cmid(e, "from-bob") && has_cmid(e, "from-carol");
  });
  for (const Entry& e : seen) {
    if (e.client_msg_id == "from-bob") {
      EXPECT_TRUE(e.from_blocked) << "alice blocks bob";
    }
    if (e.client_msg_id == "from-carol") {
      EXPECT_FALSE(e.from_blocked);
    }
  }
  for (const Entry& e : sync_until(*carol, [](const auto& e) { return has_cmid(e, "from-bob"); }))
    EXPECT_FALSE(e.from_blocked) << "carol blocks nobody";
  const auto history = history_of(*alice, g, 2);
  ASSERT_TRUE(has_cmid(history, "from-bob"));
  for (const Entry& e : history) EXPECT_EQ(e.from_blocked, e.client_msg_id == "from-bob") << e.client_msg_id;
}

// B03. The blocker hears none of the blocked user's typing (direct and in a group) and sees them offline
// without a last seen; once unblocked, their presence comes back at once (a push).
TEST(E2E, B03_BlockerGetsNoTypingNorPresence) {
  auto& qim = shared_qim();
  const auto a = user("b03", "alice"), b = user("b03", "bob"), c = user("b03", "carol");
  auto alice = login_at(first_gateway(qim), a);
  auto bob = login_at(last_gateway(qim), b);
  auto carol = login_at(last_gateway(qim), c);
  ASSERT_TRUE(alice && bob && carol);
  ASSERT_TRUE(alice->block(b).ok());
  auto g = alice->group("GROUP_CREATE", {.members = {b, c}, .name = "typing"});
  ASSERT_TRUE(g.ok()) << g.error().to_string();

  bob->send_text(R"({"type":"TYPING","conversation":")" + conv(a, b) + R"("})");
  bob->send_text(R"({"type":"TYPING","conversation":")" + g->group + R"("})");
  carol->send_text(R"({"type":"TYPING","conversation":")" + conv(a, c) + R"("})");
  // Carol's typing arrives (the path works); bob's group typing reaches carol, not alice.
  EXPECT_TRUE(next(*alice, "TYPING", c).ok());
  EXPECT_TRUE(next(*carol, "TYPING", b).ok());
  EXPECT_FALSE(next(*alice, "TYPING", b, kQuiet).ok()) << "alice blocks bob";

  alice->send_text(R"({"type":"PRESENCE_SUBSCRIBE","ref":"p1","users":[")" + b + R"(",")" + c + R"("]})");
  auto state = alice->wait_ref("p1", kWait);
  ASSERT_TRUE(state.ok()) << state.error().to_string();
  EXPECT_NE(state->raw.find(R"({"user":")" + b + R"(","status":"offline","last_seen":null})"),
            std::string::npos)
      << state->raw;
  EXPECT_NE(state->raw.find(R"({"user":")" + c + R"(","status":"online")"), std::string::npos) << state->raw;

  ASSERT_TRUE(alice->block(b, false).ok());
  auto back = next(*alice, "PRESENCE", R"(")" + b + R"(","status":"online")");
  EXPECT_TRUE(back.ok()) << "unblocked: bob's presence is pushed again";
}

// B04. A muted conversation is no badge in unread_conversations (its own count still shown, with
// muted_until), on the muting user's other device too; UNMUTE brings the badge back.
TEST(E2E, B04_MuteTakesTheBadgeOnEveryDevice) {
  auto& qim = shared_qim();
  const auto a = user("b04", "alice"), b = user("b04", "bob"), c = user("b04", "carol");
  auto alice = login_at(first_gateway(qim), a, "d1");
  auto alice2 = login_at(last_gateway(qim), a, "d2");
  auto bob = login_at(last_gateway(qim), b);
  auto carol = login_at(first_gateway(qim), c);
  ASSERT_TRUE(alice && alice2 && bob && carol);
  ASSERT_TRUE(bob->send(a, "m1", "one").ok());
  ASSERT_TRUE(carol->send(a, "m2", "two").ok());
  sync_until(*alice2, [](const auto& e) { return has_cmid(e, "m1") && has_cmid(e, "m2"); });
  auto before = alice2->conversations(std::nullopt);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->unread_conversations, 2u);

  const std::string ab = conv(a, b);
  auto muted = alice->mute(ab);
  ASSERT_TRUE(muted.ok()) << muted.error().to_string();
  EXPECT_TRUE(muted->muted);
  EXPECT_FALSE(muted->muted_until) << "for ever";
  auto pushed = next(*alice2, "MUTE_CHANGED", ab);
  ASSERT_TRUE(pushed.ok()) << pushed.error().to_string();
  auto page = alice2->conversations(std::nullopt);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->unread_conversations, 1u) << "the muted one is no badge";
  const auto* it = item_of(*page, ab);
  ASSERT_NE(it, nullptr);
  ASSERT_NE(item_of(*page, conv(a, c)), nullptr);
  EXPECT_TRUE(it->muted);
  EXPECT_EQ(it->unread, 1u) << "its count is still shown";
  EXPECT_FALSE(item_of(*page, conv(a, c))->muted);
  sync_until(*bob, [](const auto& e) { return has_cmid(e, "m1"); });  // his own copy
  auto bobs = bob->conversations(std::nullopt);
  ASSERT_TRUE(bobs.ok());
  ASSERT_NE(item_of(*bobs, ab), nullptr);
  EXPECT_FALSE(item_of(*bobs, ab)->muted) << "bob's view is his own";

  auto past = alice->mute(ab, true, 1'000);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(code_of(past.error()), "INVALID_ARGUMENT");
  ASSERT_TRUE(alice2->mute(ab, false).ok());
  EXPECT_EQ(alice->conversations(std::nullopt)->unread_conversations, 2u);
}

// B05. DELETE_FOR_ME of a message hides it from the user's HISTORY and SYNC (a stub without a body) on
// their other device; of the conversation, from their list and HISTORY; the peer sees everything still.
TEST(E2E, B05_DeleteForMeHidesOnTheOtherDeviceOnly) {
  auto& qim = shared_qim();
  const auto a = user("b05", "alice"), b = user("b05", "bob");
  auto alice = login_at(first_gateway(qim), a, "d1");
  auto alice2 = login_at(last_gateway(qim), a, "d2");
  auto bob = login_at(last_gateway(qim), b);
  ASSERT_TRUE(alice && alice2 && bob);
  const std::string ab = conv(a, b);
  ASSERT_TRUE(bob->send(a, "k1", "keep").ok());
  auto second = bob->send(a, "k2", "secret");
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(history_of(*alice, ab, 2).size(), 2u);
  sync_until(*alice, [](const auto& e) { return has_cmid(e, "k2"); });

  auto deleted = alice->delete_for_me(ab, second->message_id);
  ASSERT_TRUE(deleted.ok()) << deleted.error().to_string();
  EXPECT_EQ(deleted->type, "DELETE_OK");
  ASSERT_TRUE(next(*alice2, "DELETED_FOR_ME", ab).ok());
  auto hist = history_of(*alice2, ab, 1);
  ASSERT_EQ(hist.size(), 1u);
  EXPECT_EQ(hist[0].client_msg_id, "k1");
  auto entries = sync_all(*alice2);
  ASSERT_TRUE(entries);
  bool stub = false;
  for (const Entry& e : *entries) {
    EXPECT_EQ(e.body.find("secret"), std::string::npos) << "a deleted body is never shown";
    if (e.message_id == second->message_id) stub = e.deleted_for_me;
  }
  EXPECT_TRUE(stub) << "its place in the mailbox is kept as a stub";
  EXPECT_EQ(history_of(*bob, ab, 2).size(), 2u) << "bob still sees both";
  auto bobs = sync_until(*bob, [](const auto& e) { return has_cmid(e, "k2"); });  // his own copies
  EXPECT_TRUE(has_cmid(bobs, "k2"));
  for (const Entry& e : bobs) EXPECT_FALSE(e.deleted_for_me);

  // The whole conversation: gone from alice's list and HISTORY, not from bob's.
  auto all = alice2->delete_for_me(ab);
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  EXPECT_EQ(all->through, second->message_id);
  ASSERT_TRUE(next(*alice, "DELETED_FOR_ME", R"("through")").ok());
  auto list = alice->conversations(std::nullopt);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(item_of(*list, ab), nullptr);
  EXPECT_TRUE(alice->history(ab, std::nullopt, 50)->entries.empty());
  EXPECT_NE(item_of(*bob->conversations(std::nullopt), ab), nullptr);
  // A new message brings the conversation back, alone.
  ASSERT_TRUE(bob->send(a, "k3", "again").ok());
  auto again = history_of(*alice, ab, 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].client_msg_id, "k3");
}

}  // namespace
}  // namespace qim::e2e
