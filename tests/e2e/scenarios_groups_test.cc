// End-to-end group scenarios (issue 12; docs/protocol.md "Groups"), over real WebSockets against the
// deployment under test: membership is decided where fanout reads the Outbox, so who receives what follows
// the order of the group's own conversation, also after a replay.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/frames.h"
#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

using client::GroupRequestFields;

bool is_system(const Entry& e) {
  return e.client_msg_id.rfind("~group:", 0) == 0;
}

std::vector<std::string> chat_bodies(const std::vector<Entry>& entries, const std::string& group) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    if (e.conversation == group && !is_system(e)) out.push_back(e.body);
  }
  return out;
}

std::vector<std::string> system_ops(const std::vector<Entry>& entries, const std::string& group) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    if (e.conversation == group && is_system(e)) out.push_back(e.client_msg_id.substr(7));
  }
  return out;
}

std::string code_of(const Result<client::ServerFrame>& r) {
  if (r.ok()) return r->type;
  const std::string& m = r.error().message();
  return m.substr(0, m.find(':'));
}

// G1. create, send, add and remove in order: each member receives exactly what came while it was a member
//     (its own add and its own removal included), as system entries in order with the chat.
TEST(E2E, G01_MembershipOrdersWhoReceivesWhat) {
  auto& qim = shared_qim();
  const auto a = user("g01", "alice"), b = user("g01", "bob"), c = user("g01", "carol");
  auto alice = login(qim, a);
  auto created = alice->group("GROUP_CREATE", {.members = {b}, .name = "team"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  EXPECT_EQ(created->type, "GROUP_OK");
  EXPECT_EQ(created->op, "create");
  const std::string g = created->group;
  ASSERT_EQ(g.rfind("g:", 0), 0u) << g;

  auto bob = login(qim, b);
  ASSERT_TRUE(bob->send_to_conversation(g, "b1", "hello team").ok());
  ASSERT_TRUE(alice->group("GROUP_ADD", {.group = g, .members = {c}}).ok());
  ASSERT_TRUE(alice->send_to_conversation(g, "a1", "welcome carol").ok());
  ASSERT_TRUE(alice->group("GROUP_REMOVE", {.group = g, .members = {b}}).ok());
  ASSERT_TRUE(alice->send_to_conversation(g, "a2", "bob is gone").ok());
  // bob is out: the gateway refuses him at once, nothing is appended.
  EXPECT_EQ(code_of(bob->send_to_conversation(g, "b2", "let me back")), "NOT_A_MEMBER");

  auto carol = login(qim, c);
  auto at_carol = sync_until(*carol, [&](const auto& e) { return chat_bodies(e, g).size() >= 2; });
  EXPECT_EQ(chat_bodies(at_carol, g), (std::vector<std::string>{"welcome carol", "bob is gone"}));
  EXPECT_EQ(system_ops(at_carol, g), (std::vector<std::string>{"add", "remove"}));
  auto at_alice = sync_until(*alice, [&](const auto& e) { return chat_bodies(e, g).size() >= 3; });
  EXPECT_EQ(chat_bodies(at_alice, g),
            (std::vector<std::string>{"hello team", "welcome carol", "bob is gone"}));
  EXPECT_EQ(system_ops(at_alice, g), (std::vector<std::string>{"create", "add", "remove"}));
  // bob saw everything up to and including his removal, then nothing.
  auto at_bob = sync_until(*bob, [&](const auto& e) { return system_ops(e, g).size() >= 3; });
  EXPECT_EQ(chat_bodies(at_bob, g), (std::vector<std::string>{"hello team", "welcome carol"}));
  EXPECT_EQ(system_ops(at_bob, g), (std::vector<std::string>{"create", "add", "remove"}));
  ASSERT_TRUE(alice->send_to_conversation(g, "a3", "marker").ok());
  sync_until(*carol, [&](const auto& e) { return has_cmid(e, "a3"); });
  auto bob_later = sync_all(*bob);
  ASSERT_TRUE(bob_later);
  EXPECT_EQ(chat_bodies(*bob_later, g).size(), 2u) << "a removed member received a later message";

  // The lists follow the membership.
  auto members = carol->group("GROUP_MEMBERS", {.group = g});
  ASSERT_TRUE(members.ok()) << members.error().to_string();
  std::set<std::string> names;
  for (const auto& m : members->items) names.insert(m.id);
  EXPECT_EQ(names, (std::set<std::string>{a, c}));
  auto mine = carol->group("GROUPS");
  ASSERT_TRUE(mine.ok()) << mine.error().to_string();
  ASSERT_EQ(mine->items.size(), 1u);
  EXPECT_EQ(mine->items[0].id, g);
  EXPECT_EQ(mine->items[0].role, "member");
  EXPECT_EQ(mine->items[0].members, 2u);
  auto bobs = bob->group("GROUPS");
  ASSERT_TRUE(bobs.ok());
  EXPECT_TRUE(bobs->items.empty());
}

// G2. a non-member can neither read nor write; rights by role; every refusal has its code and appends
//     nothing a member would see.
TEST(E2E, G02_RefusalsAreTyped) {
  auto& qim = shared_qim();
  const auto a = user("g02", "alice"), b = user("g02", "bob"), m = user("g02", "mallory");
  auto alice = login(qim, a);
  auto created = alice->group("GROUP_CREATE", {.members = {b}, .name = "private"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  auto mallory = login(qim, m);
  EXPECT_EQ(code_of(mallory->send_to_conversation(g, "x", "hi")), "NOT_A_MEMBER");
  EXPECT_EQ(code_of(mallory->history(g, std::nullopt, 10)), "NOT_A_MEMBER");
  EXPECT_EQ(code_of(mallory->group("GROUP_MEMBERS", {.group = g})), "NOT_A_MEMBER");
  EXPECT_EQ(code_of(mallory->group("GROUP_ADD", {.group = g, .members = {m}})), "NOT_A_MEMBER");
  auto bob = login(qim, b);
  EXPECT_EQ(code_of(bob->group("GROUP_ADD", {.group = g, .members = {m}})), "NOT_ALLOWED");
  EXPECT_EQ(code_of(bob->group("GROUP_REMOVE", {.group = g, .members = {a}})), "NOT_ALLOWED");
  EXPECT_EQ(code_of(alice->group("GROUP_LEAVE", {.group = g})), "NOT_ALLOWED");
  EXPECT_EQ(code_of(bob->group("GROUP_RENAME", {.group = g, .name = "mine"})), "NOT_ALLOWED");
  EXPECT_EQ(code_of(bob->send_to_conversation(g, "~group:add", "spoof")), "INVALID_ARGUMENT");
  EXPECT_EQ(code_of(alice->group("GROUP_ADD", {.group = "g:doesnotexist", .members = {m}})), "UNKNOWN_GROUP");
  EXPECT_EQ(code_of(alice->send_to_conversation("g:doesnotexist", "y", "hi")), "UNKNOWN_GROUP");
  // An owner's rights: make bob an admin, who may then add.
  ASSERT_TRUE(alice->group("GROUP_ROLE", {.group = g, .member = b, .role = "admin"}).ok());
  ASSERT_TRUE(bob->group("GROUP_ADD", {.group = g, .members = {m}}).ok());
  ASSERT_TRUE(mallory->send_to_conversation(g, "m1", "thanks bob").ok());
  auto at_alice = sync_until(*alice, [&](const auto& e) { return has_cmid(e, "m1"); });
  EXPECT_EQ(chat_bodies(at_alice, g), (std::vector<std::string>{"thanks bob"}));
  EXPECT_EQ(system_ops(at_alice, g), (std::vector<std::string>{"create", "set_role", "add"}));
}

// G3. HISTORY of a group: members only, and only from when they (last) joined.
TEST(E2E, G03_HistoryFromWhenTheMemberJoined) {
  auto& qim = shared_qim();
  const auto a = user("g03", "alice"), c = user("g03", "carol");
  auto alice = login(qim, a);
  auto created = alice->group("GROUP_CREATE", {.name = "history"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  ASSERT_TRUE(alice->send_to_conversation(g, "before", "before carol").ok());
  ASSERT_TRUE(alice->group("GROUP_ADD", {.group = g, .members = {c}}).ok());
  ASSERT_TRUE(alice->send_to_conversation(g, "after", "after carol").ok());
  auto carol = login(qim, c);
  std::vector<std::string> seen;
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (std::chrono::steady_clock::now() < deadline) {  // the archiver writes history asynchronously
    auto page = carol->history(g, std::nullopt, 50);
    ASSERT_TRUE(page.ok()) << page.error().to_string();
    seen.clear();
    for (const auto& e : page->entries) seen.push_back(e.body);
    if (!seen.empty()) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"after carol"}));
  auto alices = alice->history(g, std::nullopt, 50);
  ASSERT_TRUE(alices.ok());
  EXPECT_EQ(alices->entries.size(), 2u);
}

// G4. a fanout replay of the group's Outbox partition changes nothing: no entry twice, none new, and a
//     removed member still gets nothing of what followed its removal.
TEST(E2E, G04_AReplayChangesNothing) {
  auto& qim = shared_qim();
  const auto a = user("g04", "alice"), b = user("g04", "bob");
  auto alice = login(qim, a);
  auto created = alice->group("GROUP_CREATE", {.members = {b}, .name = "replay"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  ASSERT_TRUE(alice->send_to_conversation(g, "r1", "one").ok());
  ASSERT_TRUE(alice->group("GROUP_REMOVE", {.group = g, .members = {b}}).ok());
  ASSERT_TRUE(alice->send_to_conversation(g, "r2", "two").ok());
  auto bob = login(qim, b);
  auto before_alice = sync_until(*alice, [](const auto& e) { return has_cmid(e, "r2"); });
  auto before_bob = sync_until(*bob, [&](const auto& e) { return system_ops(e, g).size() >= 2; });
  const uint64_t partition = created->message_id >> 48;
  auto replay = http_request(qim.fanout_admin_port(), "POST",
                             "/admin/fanout/replay?offset=0&partition=" + std::to_string(partition));
  ASSERT_EQ(replay.rfind("200", 0), 0u) << replay;
  ASSERT_TRUE(alice->send_to_conversation(g, "marker", "after replay").ok());
  auto after_alice = sync_until(*alice, [](const auto& e) { return has_cmid(e, "marker"); });
  ASSERT_EQ(after_alice.size(), before_alice.size() + 1) << "a replayed entry showed twice (or one was lost)";
  for (size_t i = 0; i < before_alice.size(); ++i) {
    EXPECT_EQ(after_alice[i].seq, before_alice[i].seq);
    EXPECT_EQ(after_alice[i].message_id, before_alice[i].message_id);
  }
  auto after_bob = sync_all(*bob);
  ASSERT_TRUE(after_bob);
  EXPECT_EQ(after_bob->size(), before_bob.size()) << "the replay gave the removed member something";
  EXPECT_EQ(chat_bodies(*after_bob, g), (std::vector<std::string>{"one"}));
}

// G5. 10,000 members (the default limit): the group is built with GROUP_ADDs of 500, one message reaches
//     the first, a middle and the last member through multi-chunk dispatch records, and the 10,001st is
//     refused with GROUP_FULL.
TEST(E2E, G05_TenThousandMembers) {
  auto& qim = shared_qim();
  const auto owner = user("g05", "owner");
  auto o = login(qim, owner);
  auto created = o->group("GROUP_CREATE", {.name = "everyone"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  std::vector<std::string> all;
  for (int i = 0; i < 9'999; ++i) all.push_back(user("g05", "m" + std::to_string(i)));
  for (size_t i = 0; i < all.size(); i += 500) {
    GroupRequestFields add{.group = g};
    add.members.assign(all.begin() + static_cast<std::ptrdiff_t>(i),
                       all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), i + 500)));
    auto r = o->group("GROUP_ADD", add);
    ASSERT_TRUE(r.ok()) << i << ": " << r.error().to_string();
  }
  EXPECT_EQ(code_of(o->group("GROUP_ADD", {.group = g, .members = {user("g05", "one-too-many")}})),
            "GROUP_FULL");
  ASSERT_TRUE(o->send_to_conversation(g, "big", "hello ten thousand").ok());
  // Building the group put ~105,000 system entries (each add goes to every member at its offset) ahead of
  // the message on the mailbox log: a longer bound than kWait for the node to reach it.
  for (const std::string& who : {all.front(), all[all.size() / 2], all.back()}) {
    auto c = login(qim, who);
    bool got = false;
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    while (!got && std::chrono::steady_clock::now() < deadline) {
      auto e = sync_all(*c);
      ASSERT_TRUE(e);
      got = has_cmid(*e, "big");
      if (!got) std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(got) << who << " did not receive the message";
  }
  auto mine = o->group("GROUPS");
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->items.size(), 1u);
  EXPECT_EQ(mine->items[0].members, 10'000u);
}

}  // namespace
}  // namespace qim::e2e
