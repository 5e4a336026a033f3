// The inbox end to end (issue 38, items 1-4 and 8; docs/protocol.md "Inbox"), on `qim up` and on the
// distributed deployments: read state that reaches a user's other devices, a conversation list that
// orders, pages and never shows what SYNC would not, unread counts equal to a scan of the mailbox after a
// MailboxNode killed mid-page and a fanout replay, DELIVERED from the recipient's mailbox only, receipts
// for members only, and receipts turned off.
//
// What the server shows is always compared with what SYNC returns (the mailbox is the truth): the unread
// of a conversation is its entries above the read mark not sent by the user and not system entries
// ('~' client ids).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "client/frames.h"
#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"
#include "node/crash_between_chunks.h"

namespace qim::e2e {
namespace {

using client::ConversationItem;

// Every conversation of the user, newest activity first, through pages of `limit`.
std::vector<ConversationItem> all_conversations(Client& c, uint32_t limit = 200) {
  std::vector<ConversationItem> out;
  std::optional<uint64_t> before;
  for (int pages = 0; pages < 100; ++pages) {
    auto page = c.conversations(before, limit);
    if (!page.ok()) {
      ADD_FAILURE() << "CONVERSATIONS: " << page.error().to_string();
      return out;
    }
    out.insert(out.end(), page->conversations.begin(), page->conversations.end());
    if (!page->next_before) return out;
    before = page->next_before;
  }
  ADD_FAILURE() << "CONVERSATIONS did not end in 100 pages";
  return out;
}

// The conversation list a scan of the mailbox gives: per conversation its latest entry and its unread
// count above `read_seq[c]`, sorted by the latest entry's seq, newest first.
struct Scanned {
  std::string conversation;
  Entry last;
  uint32_t unread = 0;
};
std::vector<Scanned> scan(const std::vector<Entry>& entries, const std::string& me,
                          const std::map<std::string, uint64_t>& read_seq) {
  std::map<std::string, Scanned> by;
  for (const Entry& e : entries) {
    Scanned& s = by[e.conversation];
    s.conversation = e.conversation;
    if (e.seq > s.last.seq) s.last = e;
    auto r = read_seq.find(e.conversation);
    const uint64_t mark = r == read_seq.end() ? 0 : r->second;
    if (e.seq > mark && e.sender != me && !e.client_msg_id.starts_with("~")) ++s.unread;
  }
  std::vector<Scanned> out;
  for (auto& [c, s] : by) out.push_back(s);
  std::sort(out.begin(), out.end(),
            [](const Scanned& a, const Scanned& b) { return a.last.seq > b.last.seq; });
  return out;
}

// CONVERSATIONS agrees with a SYNC scan of the same mailbox (read marks taken from CONVERSATIONS itself,
// the scan checks everything else): the same conversations in the same order, each with the scan's last
// entry and unread count, nothing above the frontier SYNC reports.
void expect_list_matches_scan(Client& c, const std::string& me, const std::string& who) {
  auto entries = sync_all(c);
  ASSERT_TRUE(entries) << who;
  auto list = all_conversations(c, 3);  // small pages: paging is part of what is checked
  std::map<std::string, uint64_t> marks;
  for (const auto& item : list) marks[item.conversation] = item.read_seq;
  auto expected = scan(*entries, me, marks);
  ASSERT_EQ(list.size(), expected.size()) << who;
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(list[i].conversation, expected[i].conversation) << who << " at " << i;
    EXPECT_EQ(list[i].last.seq, expected[i].last.seq) << who << " " << list[i].conversation;
    EXPECT_EQ(list[i].last.message_id, expected[i].last.message_id) << who << " " << list[i].conversation;
    EXPECT_EQ(list[i].unread, std::min<uint32_t>(expected[i].unread, 999))
        << who << " " << list[i].conversation;
    EXPECT_EQ(list[i].unread_capped, expected[i].unread > 999) << who;
  }
}

bool is(const ServerFrame& f, std::string_view type, const std::string& conversation) {
  return f.type == type && f.conversation == conversation;
}

// I1. A conversation read on one device shows 0 unread on the other: READ_STATE is pushed to the other
//     device (not to the one that read), CONVERSATIONS agrees on both, the peer gets RECEIPT; a READ above
//     what was shown is clamped, a repeated READ pushes nothing.
TEST(E2E, I01_ReadOnOneDeviceIsReadOnTheOther) {
  auto& qim = shared_qim();
  const auto a = user("i01", "alice"), b = user("i01", "bob");
  const std::string c = conv(a, b);
  auto alice = login(qim, a);
  auto phone = login(qim, b, "phone");
  auto laptop = login(qim, b, "laptop");
  ASSERT_TRUE(alice && phone && laptop);
  uint64_t last_id = 0;
  for (int i = 0; i < 3; ++i) {
    auto ack = alice->send(b, "m" + std::to_string(i), "hello " + std::to_string(i));
    ASSERT_TRUE(ack.ok()) << ack.error().to_string();
    last_id = ack->message_id;
  }
  auto shown = sync_until(*phone, [](const auto& e) { return e.size() == 3; });
  ASSERT_EQ(shown.size(), 3u);
  auto before = all_conversations(*laptop);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].conversation, c);
  EXPECT_EQ(before[0].kind, "direct");
  EXPECT_EQ(before[0].peer, a);
  EXPECT_EQ(before[0].unread, 3u);
  EXPECT_EQ(before[0].last.message_id, last_id);
  EXPECT_EQ(before[0].last.body, "hello 2");

  // Read through the second message: one left.
  auto partial = phone->read(c, shown[1].seq);
  ASSERT_TRUE(partial.ok()) << partial.error().to_string();
  EXPECT_EQ(partial->read_seq, shown[1].seq);
  EXPECT_EQ(partial->unread, 1u);
  auto state = laptop->wait_for([&](const ServerFrame& f) { return is(f, "READ_STATE", c); }, kWait);
  ASSERT_TRUE(state.ok()) << state.error().to_string();
  EXPECT_EQ(state->read_seq, shown[1].seq);
  EXPECT_EQ(state->unread, 1u);
  auto receipt = alice->wait_for([&](const ServerFrame& f) { return is(f, "RECEIPT", c); }, kWait);
  ASSERT_TRUE(receipt.ok()) << receipt.error().to_string();
  EXPECT_EQ(receipt->user, b);
  EXPECT_EQ(receipt->read_through, shown[1].message_id);

  // Read "through everything" with a seq far above the frontier: clamped to the last entry shown.
  auto all = phone->read(c, shown[2].seq + 1'000'000);
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  EXPECT_EQ(all->read_seq, shown[2].seq);
  EXPECT_EQ(all->unread, 0u);
  state = laptop->wait_for([&](const ServerFrame& f) { return is(f, "READ_STATE", c); }, kWait);
  ASSERT_TRUE(state.ok()) << state.error().to_string();
  EXPECT_EQ(state->read_seq, shown[2].seq);
  EXPECT_EQ(state->unread, 0u);
  EXPECT_FALSE(state->unread_capped);
  // The device that read hears READ_OK only.
  EXPECT_EQ(phone->wait_for([&](const ServerFrame& f) { return is(f, "READ_STATE", c); }, kQuiet).code(),
            Errc::kTimeout);
  for (Client* device : {phone.get(), laptop.get()}) {
    auto page = device->conversations(std::nullopt, 50);
    ASSERT_TRUE(page.ok()) << page.error().to_string();
    ASSERT_EQ(page->conversations.size(), 1u);
    EXPECT_EQ(page->conversations[0].unread, 0u);
    EXPECT_EQ(page->conversations[0].read_seq, shown[2].seq);
    EXPECT_EQ(page->unread_conversations, 0u);
  }
  // The sender's list shows the peer's receipt.
  auto alices = all_conversations(*alice);
  ASSERT_EQ(alices.size(), 1u);
  EXPECT_EQ(alices[0].peer_read_through, last_id);
  EXPECT_EQ(alices[0].unread, 0u);  // her own messages never count

  // A lower or repeated READ changes nothing and pushes nothing.
  auto again = phone->read(c, shown[0].seq);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->read_seq, shown[2].seq);
  EXPECT_EQ(laptop->wait_for([&](const ServerFrame& f) { return is(f, "READ_STATE", c); }, kQuiet).code(),
            Errc::kTimeout);
}

// I2. The list orders by activity, pages, and never shows above the frontier: it equals a scan of SYNC.
TEST(E2E, I02_ConversationListOrdersPagesAndMatchesTheMailbox) {
  auto& qim = shared_qim();
  const auto me = user("i02", "me");
  auto mine = login(qim, me);
  ASSERT_TRUE(mine);
  std::vector<std::string> peers;
  size_t seen = 0;
  for (int i = 0; i < 5; ++i) {
    peers.push_back(user("i02", "p" + std::to_string(i)));
    auto p = login(qim, peers.back());
    ASSERT_TRUE(p);
    ASSERT_TRUE(p->send(me, "m", "from " + std::to_string(i)).ok());
    // Each visible before the next is sent: the mailbox's order is the send order.
    auto now = sync_until(*mine, [&](const auto& e) { return e.size() == seen + 1; });
    ASSERT_EQ(now.size(), ++seen);
  }
  auto first = mine->conversations(std::nullopt, 2);
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  ASSERT_EQ(first->conversations.size(), 2u);
  EXPECT_EQ(first->conversations[0].peer, peers[4]);
  EXPECT_EQ(first->conversations[1].peer, peers[3]);
  EXPECT_EQ(first->unread_conversations, 5u);  // the whole list's, not the page's
  ASSERT_TRUE(first->next_before);
  auto second = mine->conversations(first->next_before, 2);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->conversations.size(), 2u);
  EXPECT_EQ(second->conversations[0].peer, peers[2]);
  EXPECT_EQ(second->conversations[1].peer, peers[1]);
  auto third = mine->conversations(second->next_before, 2);
  ASSERT_TRUE(third.ok());
  ASSERT_EQ(third->conversations.size(), 1u);
  EXPECT_EQ(third->conversations[0].peer, peers[0]);
  EXPECT_FALSE(third->next_before);

  // New activity moves a conversation to the top; my own message counts as activity, not as unread.
  ASSERT_TRUE(login(qim, peers[1])->send(me, "again", "me again").ok());
  sync_until(*mine, [&](const auto& e) { return has_cmid(e, "again"); });
  ASSERT_TRUE(mine->send(peers[0], "reply", "hi p0").ok());
  sync_until(*mine, [&](const auto& e) { return has_cmid(e, "reply"); });
  auto list = all_conversations(*mine);
  ASSERT_EQ(list.size(), 5u);
  EXPECT_EQ(list[0].peer, peers[0]);
  EXPECT_EQ(list[0].unread, 1u);
  EXPECT_EQ(list[0].last.sender, me);
  EXPECT_EQ(list[1].peer, peers[1]);
  EXPECT_EQ(list[1].unread, 2u);
  expect_list_matches_scan(*mine, me, me);
}

// I3. Counts stay exact across a MailboxNode killed in the middle of a page (between two chunks of a group
//     message, node/crash_between_chunks.h) and a fanout replay of everything: every member's list equals
//     a scan of their mailbox.
TEST(E2E, I03_CountsStayExactAcrossANodeKillMidPageAndAReplay) {
  auto qim = new_deployment("i03-inbox");
  // 4 recipients a chunk and 150 members: records of 2 or more chunks on every shard (the distributed
  // deployment's and `qim up`'s 16 on a shared store as well as a new embedded data directory's one per
  // CPU), so the node that is to crash has a multi-chunk record whichever shards it owns (as E2E.G06).
  const Env chunks = {{"QIM_FANOUT_CHUNK_ENTRIES", "4"}};
  Env crash = chunks;
  crash["QIM_TEST_NODE_CRASH_BETWEEN_CHUNKS"] = "1";
  ASSERT_TRUE(qim->start(chunks).ok()) << qim->log_tail();
  const bool single = deployment_under_test() != "distributed";
  const std::string node = single ? "qim" : "mailbox-1";

  const auto owner = user("i03", "owner");
  std::vector<std::string> members;
  for (int i = 0; i < 149; ++i) members.push_back(user("i03", "m" + std::to_string(i)));
  auto o = login(*qim, owner);
  ASSERT_TRUE(o);
  auto created = o->group("GROUP_CREATE", {.members = members, .name = "counts"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(o->send_to_conversation(g, "g" + std::to_string(i), "hi").ok());
  ASSERT_TRUE(o->send(members[0], "d0", "direct").ok());
  members.push_back(owner);
  // Everyone sees the group's messages; half of them read the first one.
  for (size_t i = 0; i < members.size(); ++i) {
    auto c = login(*qim, members[i]);
    ASSERT_TRUE(c);
    auto seen = sync_until(*c, [](const auto& e) { return has_cmid(e, "g2"); });
    ASSERT_TRUE(has_cmid(seen, "g2")) << members[i];
    if (i % 2 == 0) {
      for (const auto& e : seen) {
        if (e.client_msg_id == "g0") {
          ASSERT_TRUE(c->read(g, e.seq).ok()) << members[i];
        }
      }
    }
  }

  ASSERT_TRUE(qim->kill_process(node).ok());
  ASSERT_TRUE(qim->start_process(node, crash).ok()) << qim->log_tail();
  if (single) o = login(*qim, owner);
  ASSERT_TRUE(o);
  auto crash_me = o->send_to_conversation(g, "crash-me", "the record the node dies in");
  if (!single) {
    ASSERT_TRUE(crash_me.ok()) << crash_me.error().to_string();
  }
  auto code = qim->wait_process_exit(node, std::chrono::seconds(60));
  ASSERT_TRUE(code.ok()) << code.error().to_string();
  ASSERT_EQ(*code, kCrashBetweenChunksExit) << "the node did not stop between two chunks\n"
                                            << qim->log_tail();
  ASSERT_TRUE(qim->start_process(node, chunks).ok()) << qim->log_tail();
  if (single) o = login(*qim, owner);
  ASSERT_TRUE(o);
  if (!crash_me.ok()) {
    ASSERT_TRUE(o->send_to_conversation(g, "crash-me", "the record the node dies in").ok());
  }

  auto replay = http_request(qim->fanout_admin_port(), "POST", "/admin/fanout/replay?offset=0");
  ASSERT_EQ(replay.rfind("200", 0), 0u) << replay;
  ASSERT_TRUE(o->send_to_conversation(g, "after", "after the replay").ok());
  for (const auto& m : members) {
    auto c = login(*qim, m);
    ASSERT_TRUE(c);
    auto seen = sync_until(*c, [](const auto& e) { return has_cmid(e, "after"); });
    ASSERT_TRUE(has_cmid(seen, "after")) << m;
    expect_list_matches_scan(*c, m, m);
    auto page = c->conversations(std::nullopt, 50);
    ASSERT_TRUE(page.ok());
    for (const auto& item : page->conversations) {
      if (item.conversation != g) continue;
      EXPECT_EQ(item.kind, "group");
      EXPECT_EQ(item.name, "counts");
      // The owner sent every message of the group: none is unread to them. A member who read g0 has
      // g1, g2, crash-me and after; one who did not has g0 too (the scan above checked each exactly).
      if (m == owner) {
        EXPECT_EQ(item.unread, 0u);
      }
    }
  }
  EXPECT_EQ(qim->stop(), 0) << qim->log_tail();
}

// I4. DELIVERED comes from the recipient's mailbox: the sender hears it with the recipient's name and the
//     message's id (and reads it as peer_delivered_through), never for its own copy alone (a note to self).
TEST(E2E, I04_DeliveredComesFromTheRecipientsMailbox) {
  auto& qim = shared_qim();
  const auto a = user("i04", "alice"), b = user("i04", "bob");
  const std::string c = conv(a, b);
  auto alice = login(qim, a);
  ASSERT_TRUE(alice);
  auto ack = alice->send(b, "m1", "are you there?");  // bob is offline: his mailbox holds it anyway
  ASSERT_TRUE(ack.ok()) << ack.error().to_string();
  auto delivered = alice->wait_for([&](const ServerFrame& f) { return is(f, "DELIVERED", c); }, kWait);
  ASSERT_TRUE(delivered.ok()) << delivered.error().to_string();
  EXPECT_EQ(delivered->user, b);
  EXPECT_EQ(delivered->message_id, ack->message_id);
  // Bob's copy is what DELIVERED reports; alice's own copy is materialised by her shard's node, which on a
  // distributed deployment may be a moment behind: her list shows the conversation once it is.
  auto list = all_conversations(*alice);
  for (const auto deadline = std::chrono::steady_clock::now() + kWait;
       list.empty() && std::chrono::steady_clock::now() < deadline; list = all_conversations(*alice)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].peer_delivered_through, ack->message_id);
  EXPECT_FALSE(list[0].peer_read_through);

  // A note to self: only the sender's own copy exists; nobody's DELIVERED.
  const std::string self = conv(a, a);
  ASSERT_TRUE(alice->send(a, "note", "to myself").ok());
  sync_until(*alice, [](const auto& e) { return has_cmid(e, "note"); });
  EXPECT_EQ(alice->wait_for([&](const ServerFrame& f) { return is(f, "DELIVERED", self); }, kQuiet).code(),
            Errc::kTimeout);
}

// I5. Receipts are for members only: a non-member connected all along gets no RECEIPT of a group's read,
//     RECEIPTS is refused to it (FORBIDDEN, of a group and of another pair's conversation), and its READ
//     finds nothing; a member's RECEIPTS counts and names the readers.
TEST(E2E, I05_ANonMemberGetsNoReceiptAndRECEIPTSIsRefused) {
  auto& qim = shared_qim();
  const auto a = user("i05", "alice"), b = user("i05", "bob"), x = user("i05", "carol");
  auto alice = login(qim, a);
  auto bob = login(qim, b);
  auto carol = login(qim, x);
  ASSERT_TRUE(alice && bob && carol);
  auto created = alice->group("GROUP_CREATE", {.members = {b}, .name = "members only"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  auto ack = alice->send_to_conversation(g, "m1", "for members");
  ASSERT_TRUE(ack.ok());
  auto shown = sync_until(*bob, [](const auto& e) { return has_cmid(e, "m1"); });
  ASSERT_TRUE(has_cmid(shown, "m1"));
  ASSERT_TRUE(bob->read(g, shown.back().seq).ok());
  auto receipt = alice->wait_for([&](const ServerFrame& f) { return is(f, "RECEIPT", g); }, kWait);
  ASSERT_TRUE(receipt.ok()) << receipt.error().to_string();
  EXPECT_EQ(receipt->user, b);
  EXPECT_EQ(receipt->read_through, ack->message_id);
  EXPECT_EQ(carol->wait_for([&](const ServerFrame& f) { return f.type == "RECEIPT"; }, kQuiet).code(),
            Errc::kTimeout);

  auto counted = alice->receipts(g, ack->message_id);
  ASSERT_TRUE(counted.ok()) << counted.error().to_string();
  EXPECT_EQ(counted->read_count, 1u);
  EXPECT_EQ(counted->readers, (std::vector<std::string>{b}));
  for (const std::string& c : {g, conv(a, b)}) {
    auto refused = carol->receipts(c, ack->message_id);
    ASSERT_FALSE(refused.ok()) << c;
    EXPECT_EQ(refused.error().message().rfind("FORBIDDEN", 0), 0u) << refused.error().message();
  }
  auto nothing = carol->read(g, shown.back().seq);
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.error().message().rfind("NOT_FOUND", 0), 0u) << nothing.error().message();
  auto still = alice->receipts(g, ack->message_id);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->read_count, 1u) << "a non-member's READ made it a reader";
}

// I6. Receipts off: the peer gets no RECEIPT and sees no peer_read_through, the user's other device still
//     gets READ_STATE; SETTINGS answers what is stored.
TEST(E2E, I06_ReceiptsOffTellsOnlyTheUsersOwnDevices) {
  auto& qim = shared_qim();
  const auto a = user("i06", "alice"), b = user("i06", "bob");
  const std::string c = conv(a, b);
  auto alice = login(qim, a);
  auto phone = login(qim, b, "phone");
  auto laptop = login(qim, b, "laptop");
  ASSERT_TRUE(alice && phone && laptop);
  auto off = phone->settings({.receipts = "off"});
  ASSERT_TRUE(off.ok()) << off.error().to_string();
  EXPECT_EQ(off->settings.at("receipts"), "off");
  EXPECT_EQ(off->settings.at("presence"), "everyone");
  auto read_back = laptop->settings();
  ASSERT_TRUE(read_back.ok());
  EXPECT_EQ(read_back->settings.at("receipts"), "off");

  ASSERT_TRUE(alice->send(b, "m1", "read me").ok());
  auto shown = sync_until(*phone, [](const auto& e) { return has_cmid(e, "m1"); });
  ASSERT_TRUE(has_cmid(shown, "m1"));
  ASSERT_TRUE(phone->read(c, shown.back().seq).ok());
  auto state = laptop->wait_for([&](const ServerFrame& f) { return is(f, "READ_STATE", c); }, kWait);
  ASSERT_TRUE(state.ok()) << state.error().to_string();
  EXPECT_EQ(state->unread, 0u);
  EXPECT_EQ(alice->wait_for([&](const ServerFrame& f) { return is(f, "RECEIPT", c); }, kQuiet).code(),
            Errc::kTimeout);
  auto list = all_conversations(*alice);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_FALSE(list[0].peer_read_through);

  auto bad = phone->settings({.receipts = "maybe"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message().rfind("INVALID_ARGUMENT", 0), 0u) << bad.error().message();
}

}  // namespace
}  // namespace qim::e2e
