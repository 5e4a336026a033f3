// A message's life after SEND (issue 39 items 1, 2 and 8; docs/protocol.md "Editing and recalling"), on
// `qim up`: an edit and a recall seen by the other member live (DELIVER) and afterwards (HISTORY, SYNC);
// every refusal a documented code that appends nothing; a fanout replay from before the SEND keeps the
// tombstone; a group's owner recalls a member's message and a removed member gets no event after removal.
//
// EDIT and RECALL are served where the message state store is (the embedded deployment, decision 90):
// on another deployment these scenarios check that they are refused with UNAVAILABLE, and stop.
#include <gtest/gtest.h>

#include "e2e/e2e_env.h"
#include "e2e/qim_process.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

std::string code(const Result<ServerFrame>& r) {
  if (r.ok()) return r->type;
  const std::string& m = r.error().message();
  return m.substr(0, m.find(':'));
}

// True (and the test should stop) when this deployment does not serve EDIT/RECALL.
bool unserved(Client& c, const std::string& conversation, uint64_t id) {
  // An edit of an id past the partition's end: UNKNOWN_MESSAGE where served (and nothing appended).
  const uint64_t nowhere = (id & ~((uint64_t{1} << 48) - 1)) | ((uint64_t{1} << 48) - 1);
  auto r = c.edit(conversation, nowhere, "probe-unserved", "x");
  if (code(r) != "UNAVAILABLE") {
    EXPECT_EQ(code(r), "UNKNOWN_MESSAGE");
    return false;
  }
  EXPECT_NE(r.error().message().find("not served"), std::string::npos) << r.error().message();
  return true;
}

// Entries of `conversation` whose client id is `cmid` ("~edit", "~recall", or a chat message's).
size_t count_cmid(const std::vector<Entry>& entries, const std::string& cmid) {
  return static_cast<size_t>(
      std::count_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.client_msg_id == cmid; }));
}

// The HISTORY entry of message `id` (fails the test if absent).
std::optional<Entry> in_history(Client& c, const std::string& conversation, uint64_t id) {
  auto page = c.history(conversation, std::nullopt, 50);
  if (!page.ok()) {
    ADD_FAILURE() << "HISTORY: " << page.error().to_string();
    return std::nullopt;
  }
  for (const Entry& e : page->entries) {
    if (e.message_id == id) return e;
  }
  ADD_FAILURE() << "message " << id << " is not in HISTORY";
  return std::nullopt;
}

// L1. alice edits then recalls; bob, online, receives each change as it happens (~edit, ~recall entries
//     naming the message), HISTORY shows the current body with its edit count, then the tombstone, and a
//     later SYNC holds the events in order after the message.
TEST(E2E, L01_EditAndRecallSeenLiveAndInHistory) {
  auto& qim = shared_qim();
  const auto a = user("l01", "alice"), b = user("l01", "bob");
  auto alice = login(qim, a);
  auto bob = login(qim, b);
  const std::string c = conv(a, b);
  auto sent = alice->send(b, "m1", "helo wrold");
  ASSERT_TRUE(sent.ok()) << sent.error().to_string();
  const uint64_t id = sent->message_id;
  ASSERT_EQ(collect_delivered(*bob, 1, kWait).size(), 1u);
  if (unserved(*alice, c, id)) return;

  auto edited = alice->edit(c, id, "e1", "hello world");
  ASSERT_TRUE(edited.ok()) << edited.error().to_string();
  EXPECT_EQ(edited->type, "EDIT_ACK");
  EXPECT_EQ(edited->target, id);
  EXPECT_NE(edited->message_id, id);  // the event's own position in the Outbox
  auto live_edit = collect_delivered(*bob, 1, kWait);
  ASSERT_EQ(live_edit.size(), 1u);
  EXPECT_EQ(live_edit[0].client_msg_id, "~edit");
  EXPECT_EQ(live_edit[0].message_id, edited->message_id);
  EXPECT_NE(live_edit[0].body.find("\"message_id\":\"" + std::to_string(id) + "\""), std::string::npos)
      << live_edit[0].body;
  EXPECT_NE(live_edit[0].body.find("\"body\":\"hello world\""), std::string::npos) << live_edit[0].body;

  // HISTORY: the current body (once the archiver has it), the edit count and time.
  std::optional<Entry> h;
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  do {
    h = in_history(*bob, c, id);
  } while (h && h->body != "hello world" && std::chrono::steady_clock::now() < deadline &&
           (std::this_thread::sleep_for(50ms), true));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->body, "hello world");
  EXPECT_EQ(h->edit_count, 1u);
  EXPECT_EQ(h->edited_at, edited->server_time);
  EXPECT_FALSE(h->recalled);

  auto recalled = alice->recall(c, id, "r1");
  ASSERT_TRUE(recalled.ok()) << recalled.error().to_string();
  EXPECT_EQ(recalled->type, "RECALL_ACK");
  auto live_recall = collect_delivered(*bob, 1, kWait);
  ASSERT_EQ(live_recall.size(), 1u);
  EXPECT_EQ(live_recall[0].client_msg_id, "~recall");
  EXPECT_NE(live_recall[0].body.find("\"event\":\"recall\""), std::string::npos) << live_recall[0].body;

  const auto until = std::chrono::steady_clock::now() + kWait;
  do {
    h = in_history(*bob, c, id);
  } while (h && !h->recalled && std::chrono::steady_clock::now() < until &&
           (std::this_thread::sleep_for(50ms), true));
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->recalled);
  EXPECT_EQ(h->body, "");  // no body served again, not even the edited one
  EXPECT_EQ(h->sender, a);

  // A later SYNC (another device): the message, then its edit and its recall, in that order.
  auto phone = login(qim, b, "phone");
  auto all = sync_until(*phone, [](const auto& e) { return has_cmid(e, "~recall"); });
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].message_id, id);
  EXPECT_EQ(all[1].client_msg_id, "~edit");
  EXPECT_EQ(all[2].client_msg_id, "~recall");
  // Alice's own other device gets them too.
  auto alices = sync_until(*login(qim, a, "tablet"), [](const auto& e) { return has_cmid(e, "~recall"); });
  EXPECT_EQ(count_cmid(alices, "~recall"), 1u);
}

// L2. Every refusal is its documented code and appends nothing: bob's mailbox after them holds only the
//     marker sent afterwards.
TEST(E2E, L02_RefusalsAppendNothing) {
  auto& qim = shared_qim();
  const auto a = user("l02", "alice"), b = user("l02", "bob"), c3 = user("l02", "carol");
  auto alice = login(qim, a);
  auto bob = login(qim, b);
  const std::string c = conv(a, b);
  auto sent = alice->send(b, "m1", "mine");
  ASSERT_TRUE(sent.ok());
  const uint64_t id = sent->message_id;
  if (unserved(*alice, c, id)) return;
  auto elsewhere = alice->send(c3, "m2", "to carol");
  ASSERT_TRUE(elsewhere.ok());
  auto before = sync_until(*bob, [](const auto& e) { return has_cmid(e, "m1"); });
  ASSERT_EQ(before.size(), 1u);

  EXPECT_EQ(code(bob->edit(c, id, "b1", "not yours")), "NOT_ALLOWED");
  EXPECT_EQ(code(bob->recall(c, id, "b2")), "NOT_ALLOWED");
  EXPECT_EQ(code(alice->edit(c, id + 100'000, "a1", "no such")), "UNKNOWN_MESSAGE");
  EXPECT_EQ(code(alice->edit(c, elsewhere->message_id, "a2", "other conversation")), "UNKNOWN_MESSAGE");
  EXPECT_EQ(code(bob->recall(conv(a, c3), elsewhere->message_id, "b3")), "FORBIDDEN");
  ASSERT_EQ(code(alice->recall(c, id, "a3")), "RECALL_ACK");
  EXPECT_EQ(code(alice->edit(c, id, "a4", "after the recall")), "MESSAGE_RECALLED");
  EXPECT_EQ(code(alice->recall(c, id, "a5")), "MESSAGE_RECALLED");
  // The same client_msg_id again is the same RECALL: acknowledged again, appended once.
  auto again = alice->recall(c, id, "a3");
  EXPECT_EQ(code(again), "RECALL_ACK");

  ASSERT_TRUE(alice->send(b, "marker", "after the refusals").ok());
  auto after = sync_until(*bob, [](const auto& e) { return has_cmid(e, "marker"); });
  ASSERT_EQ(after.size(), 3u) << "a refused event was appended (or the recall twice)";
  EXPECT_EQ(after[1].client_msg_id, "~recall");
  EXPECT_EQ(after[2].client_msg_id, "marker");
}

// L3. A fanout replay from before the SEND: no entry twice, none new, the recall still applies (HISTORY
//     keeps the tombstone), and a new edit is still refused.
TEST(E2E, L03_FanoutReplayFromBeforeTheSendKeepsTheTombstone) {
  auto& qim = shared_qim();
  const auto a = user("l03", "alice"), b = user("l03", "bob");
  auto alice = login(qim, a);
  auto bob = login(qim, b);
  const std::string c = conv(a, b);
  auto sent = alice->send(b, "m1", "regrettable");
  ASSERT_TRUE(sent.ok());
  const uint64_t id = sent->message_id;
  if (unserved(*alice, c, id)) return;
  ASSERT_TRUE(alice->edit(c, id, "e1", "more regrettable").ok());
  ASSERT_TRUE(alice->recall(c, id, "r1").ok());
  auto before = sync_until(*bob, [](const auto& e) { return has_cmid(e, "~recall"); });
  ASSERT_EQ(before.size(), 3u);
  const uint64_t partition = id >> 48;
  const uint64_t offset = id & ((uint64_t{1} << 48) - 1);
  auto replay = http_request(
      qim.fanout_admin_port(), "POST",
      "/admin/fanout/replay?offset=" + std::to_string(offset) + "&partition=" + std::to_string(partition));
  ASSERT_EQ(replay.rfind("200", 0), 0u) << replay;
  ASSERT_TRUE(alice->send(b, "marker", "after the replay").ok());
  auto after = sync_until(*bob, [](const auto& e) { return has_cmid(e, "marker"); });
  ASSERT_EQ(after.size(), before.size() + 1) << "a replayed entry showed twice (or one was lost)";
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].seq, before[i].seq);
    EXPECT_EQ(after[i].message_id, before[i].message_id);
    EXPECT_EQ(after[i].body, before[i].body);
  }
  auto h = in_history(*bob, c, id);
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->recalled);
  EXPECT_EQ(h->body, "");
  EXPECT_EQ(code(alice->edit(c, id, "e2", "again")), "MESSAGE_RECALLED");
}

// L4. In a group: the owner recalls a member's message at any time; a member who is not the sender may
//     not; a member removed before the recall receives no event of it.
TEST(E2E, L04_GroupOwnerRecallsAndRemovedMembersGetNothing) {
  auto& qim = shared_qim();
  const auto o = user("l04", "owner"), b = user("l04", "bob"), c3 = user("l04", "carol");
  auto owner = login(qim, o);
  auto created = owner->group("GROUP_CREATE", {.members = {b, c3}, .name = "moderated"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  auto bob = login(qim, b);
  auto sent = bob->send_to_conversation(g, "spam", "buy now");
  ASSERT_TRUE(sent.ok()) << sent.error().to_string();
  if (unserved(*owner, g, sent->message_id)) return;
  auto carol = login(qim, c3);
  EXPECT_EQ(code(carol->recall(g, sent->message_id, "c1")), "NOT_ALLOWED");
  ASSERT_TRUE(owner->group("GROUP_REMOVE", {.group = g, .members = {c3}}).ok());
  auto recalled = owner->recall(g, sent->message_id, "o1");
  ASSERT_TRUE(recalled.ok()) << recalled.error().to_string();
  auto at_bob = sync_until(*bob, [](const auto& e) { return has_cmid(e, "~recall"); });
  EXPECT_EQ(count_cmid(at_bob, "~recall"), 1u);
  ASSERT_TRUE(owner->send_to_conversation(g, "marker", "after").ok());
  sync_until(*bob, [](const auto& e) { return has_cmid(e, "marker"); });
  auto at_carol = sync_all(*carol);
  ASSERT_TRUE(at_carol);
  EXPECT_EQ(count_cmid(*at_carol, "~recall"), 0u) << "a removed member received an event after removal";
  EXPECT_EQ(count_cmid(*at_carol, "spam"), 1u);
}

}  // namespace
}  // namespace qim::e2e
