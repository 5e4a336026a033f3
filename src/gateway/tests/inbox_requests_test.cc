// The gateway's inbox door (inbox_requests.h, issue 38 items 1-4): each frame answered from Inbox over a
// memory mailbox written through a real ContractStore, the signals a READ sends (a fake SignalBus records
// them), membership from a fake group store, and every refusal's code.
#include "gateway/inbox_requests.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "client/frames.h"
#include "gateway/blocked_by_cache.h"
#include "gateway/tests/fake_log.h"
#include "inbox/tests/inbox_suite.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using test::InboxSuite;

struct Signal {
  std::vector<std::string> users;
  client::ServerFrame frame;  // empty for a signal that is no client frame (raw holds it)
  std::string raw;
  uint64_t except = 0;
};

class FakeSignalBus final : public SignalBus {
 public:
  void send(std::span<const UserId> users, std::string frame, uint64_t except_connection) override {
    std::lock_guard lock(mu);
    Signal s;
    for (const auto& u : users) s.users.push_back(u.str());
    s.raw = frame;
    if (auto parsed = client::parse_server_frame(frame); parsed.ok()) s.frame = *std::move(parsed);
    s.except = except_connection;
    sent.push_back(std::move(s));
  }
  std::vector<Signal> of_type(std::string_view type) {
    std::lock_guard lock(mu);
    std::vector<Signal> out;
    for (const auto& s : sent)
      if (s.frame.type == type) out.push_back(s);
    return out;
  }
  std::mutex mu;
  std::vector<Signal> sent;
};

// Groups by hand: meta and current members.
class FakeGroupStore final : public GroupStore {
 public:
  void put(const GroupId& g, std::string name, std::vector<UserId> members) {
    GroupMeta meta{g, std::move(name), members.front(), 0, static_cast<uint32_t>(members.size())};
    std::vector<GroupMemberRecord> rows;
    for (const auto& u : members)
      rows.push_back(GroupMemberRecord{u, GroupRole::kMember, {{1, kOpenInterval}}});
    groups_.insert_or_assign(g, GroupState(meta, rows, {}));
  }
  Status apply(const GroupChange&) override { return Error(Errc::kInvariant, "read only"); }
  Result<std::optional<GroupState>> load(const GroupId& g) override {
    auto it = groups_.find(g);
    if (it == groups_.end()) return std::optional<GroupState>();
    return std::optional(it->second);
  }
  Result<std::optional<GroupMeta>> meta(const GroupId& g) override {
    auto it = groups_.find(g);
    if (it == groups_.end()) return std::optional<GroupMeta>();
    return it->second.meta();
  }
  Result<std::optional<GroupMemberRecord>> member(const GroupId& g, const UserId& u) override {
    auto it = groups_.find(g);
    if (it == groups_.end()) return std::optional<GroupMemberRecord>();
    auto m = it->second.members().find(u);
    if (m == it->second.members().end()) return std::optional<GroupMemberRecord>();
    return std::optional(m->second);
  }
  Result<std::optional<GroupOpOutcome>> outcome(const GroupId&, uint64_t) override {
    return std::optional<GroupOpOutcome>();
  }
  Result<std::vector<GroupId>> groups_of(const UserId&) override { return std::vector<GroupId>(); }
  OpCounts op_counts() const override { return {}; }

 private:
  std::map<GroupId, GroupState> groups_;
};

class InboxRequestsTest : public InboxSuite {
 protected:
  InboxRequestDeps deps() {
    return InboxRequestDeps{&session_->inbox(), &groups_, &bus_, clock_.get(), nullptr};
  }
  client::ServerFrame ask(const UserId& who, const InboxFrame& frame, uint64_t connection = 7) {
    auto text = answer_inbox_frame(deps(), "r", InboxCaller{who, connection}, frame);
    auto parsed = client::parse_server_frame(text);
    EXPECT_TRUE(parsed.ok()) << text;
    return parsed.ok() ? *parsed : client::ServerFrame{};
  }
  std::string name(const UserId& u) { return u.str(); }

  FakeSignalBus bus_;
  FakeGroupStore groups_;
};

TEST_P(InboxRequestsTest, ReadAnswersTheMarkAndTellsTheOtherDevicesAndThePeer) {
  const ConversationId c = direct(alice_, bob_);
  const MailboxSeq s1 = send(c, bob_, {alice_, bob_});
  const MailboxSeq s2 = send(c, bob_, {alice_, bob_});
  auto ok = ask(alice_, ReadFrame{c, s1}, 7);
  ASSERT_EQ(ok.type, "READ_OK") << ok.raw;
  EXPECT_EQ(ok.read_seq, s1.raw());
  EXPECT_EQ(ok.unread, 1u);
  auto states = bus_.of_type("READ_STATE");
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].users, std::vector<std::string>{name(alice_)});
  EXPECT_EQ(states[0].except, 7u) << "the device that read hears READ_OK, not READ_STATE";
  EXPECT_EQ(states[0].frame.read_seq, s1.raw());
  EXPECT_EQ(states[0].frame.unread, 1u);
  auto receipts = bus_.of_type("RECEIPT");
  ASSERT_EQ(receipts.size(), 1u);
  EXPECT_EQ(receipts[0].users, std::vector<std::string>{name(bob_)});
  EXPECT_EQ(receipts[0].frame.user, name(alice_));
  EXPECT_EQ(receipts[0].frame.read_through, 1u);  // the message at the mark (ids count from 1)

  // Above the frontier: clamped to the last visible entry. Repeated: answered, nothing sent.
  ok = ask(alice_, ReadFrame{c, MailboxSeq::from_raw(s2.raw() + 1000)});
  EXPECT_EQ(ok.read_seq, s2.raw());
  EXPECT_EQ(ok.unread, 0u);
  EXPECT_EQ(bus_.of_type("READ_STATE").size(), 2u);
  ok = ask(alice_, ReadFrame{c, s2});
  EXPECT_EQ(ok.read_seq, s2.raw());
  ok = ask(alice_, ReadFrame{c, s1});
  EXPECT_EQ(ok.read_seq, s2.raw()) << "a mark never goes down";
  EXPECT_EQ(bus_.of_type("READ_STATE").size(), 2u) << "a READ that moved nothing pushed something";
  EXPECT_EQ(bus_.of_type("RECEIPT").size(), 2u);
}

TEST_P(InboxRequestsTest, ReceiptsOffStillTellsTheUsersOwnDevices) {
  const ConversationId c = direct(alice_, bob_);
  const MailboxSeq s1 = send(c, bob_, {alice_, bob_});
  auto set = ask(alice_, SettingsFrame{"off", std::nullopt});
  ASSERT_EQ(set.type, "SETTINGS_OK") << set.raw;
  EXPECT_EQ(set.settings.at("receipts"), "off");
  EXPECT_EQ(set.settings.at("presence"), "everyone");
  EXPECT_EQ(ask(alice_, SettingsFrame{}).settings.at("receipts"), "off");
  EXPECT_EQ(ask(alice_, ReadFrame{c, s1}).type, "READ_OK");
  EXPECT_EQ(bus_.of_type("READ_STATE").size(), 1u);
  EXPECT_TRUE(bus_.of_type("RECEIPT").empty());
  auto page = ask(bob_, ConversationsFrame{std::nullopt, 10});
  ASSERT_EQ(page.conversations.size(), 1u);
  EXPECT_FALSE(page.conversations[0].peer_read_through);
}

// A READ that moved the mark to a message appends one read receipt record to the conversation's Outbox
// partition (docs/adr/0147: the event webhook's message.read); a READ that moved nothing, and a reader whose
// receipts are off, append none.
TEST_P(InboxRequestsTest, AReadThatMovedTheMarkAppendsAReadReceiptToTheOutbox) {
  testing::FakeLog outbox(4);
  InboxRequestDeps d = deps();
  d.outbox = &outbox;
  const ConversationId c = direct(alice_, bob_);
  const MailboxSeq s1 = send(c, bob_, {alice_, bob_});
  auto read = [&](const UserId& who, MailboxSeq seq) {
    auto text =
        answer_inbox_frame(d, "r", InboxCaller{who, 7, DeviceId::parse("phone").value()}, ReadFrame{c, seq});
    auto parsed = client::parse_server_frame(text);
    EXPECT_TRUE(parsed.ok()) << text;
    return parsed.ok() ? parsed->type : std::string();
  };
  ASSERT_EQ(read(alice_, s1), "READ_OK");
  auto records = outbox.all_records();
  ASSERT_EQ(records.size(), 1u);
  auto r = decode_outbox_record(records[0].value);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(is_read_receipt(*r));
  EXPECT_EQ(r->conversation, c);
  EXPECT_EQ(r->sender, alice_);
  EXPECT_EQ(r->sender_device.str(), "phone");
  EXPECT_EQ(r->server_time_ms, clock_->now_ms());
  auto receipts = bus_.of_type("RECEIPT");
  ASSERT_EQ(receipts.size(), 1u);
  EXPECT_EQ(r->read_through->value, receipts[0].frame.read_through)
      << "the record names the RECEIPT's message";
  EXPECT_EQ(records[0].key, c.str());
  ASSERT_EQ(read(alice_, s1), "READ_OK");
  EXPECT_EQ(outbox.all_records().size(), 1u) << "a READ that moved nothing appended a receipt";

  ASSERT_EQ(ask(bob_, SettingsFrame{"off", std::nullopt}).type, "SETTINGS_OK");
  const MailboxSeq s2 = send(c, alice_, {alice_, bob_});
  const size_t states = bus_.of_type("READ_STATE").size();
  ASSERT_EQ(read(bob_, s2), "READ_OK");
  ASSERT_EQ(bus_.of_type("READ_STATE").size(), states + 1) << "bob's mark did not move";
  EXPECT_EQ(outbox.all_records().size(), 1u) << "a reader with receipts off appended a receipt";
}

TEST_P(InboxRequestsTest, ConversationsLabelsPeersAndGroupsAndPages) {
  const ConversationId d = direct(alice_, bob_);
  const ConversationId g = group("team");
  groups_.put(*GroupId::parse("team"), "the team", {alice_, bob_, carol_});
  send(d, bob_, {alice_, bob_});
  send(g, carol_, {alice_, bob_, carol_});
  auto page = ask(alice_, ConversationsFrame{std::nullopt, 1});
  ASSERT_EQ(page.type, "CONVERSATIONS_PAGE") << page.raw;
  ASSERT_EQ(page.conversations.size(), 1u);
  EXPECT_EQ(page.conversations[0].conversation, g.str());
  EXPECT_EQ(page.conversations[0].kind, "group");
  EXPECT_EQ(page.conversations[0].name, "the team");
  EXPECT_EQ(page.conversations[0].unread, 1u);
  EXPECT_EQ(page.unread_conversations, 2u);
  ASSERT_TRUE(page.next_before);
  auto next = ask(alice_, ConversationsFrame{MailboxSeq::from_raw(*page.next_before), 1});
  ASSERT_EQ(next.conversations.size(), 1u);
  EXPECT_EQ(next.conversations[0].kind, "direct");
  EXPECT_EQ(next.conversations[0].peer, name(bob_));
  EXPECT_EQ(next.conversations[0].peer_delivered_through, 1u) << "bob's mailbox holds message 1";
  EXPECT_FALSE(next.next_before);
}

TEST_P(InboxRequestsTest, GroupReceiptsForMembersOnly) {
  const GroupId team = *GroupId::parse("team");
  const ConversationId g = group("team");
  groups_.put(team, "team", {alice_, bob_});
  const MailboxSeq s1 = send(g, alice_, {alice_, bob_});
  ASSERT_EQ(ask(bob_, ReadFrame{g, s1}).type, "READ_OK");
  auto receipts = bus_.of_type("RECEIPT");
  ASSERT_EQ(receipts.size(), 1u);
  EXPECT_EQ(receipts[0].users, std::vector<std::string>{name(alice_)}) << "the other members only";

  auto page = ask(alice_, ReceiptsFrame{g, MessageId{1}});
  ASSERT_EQ(page.type, "RECEIPTS_PAGE") << page.raw;
  EXPECT_EQ(page.read_count, 1u);
  EXPECT_EQ(page.readers, std::vector<std::string>{name(bob_)});
  // carol is no member: FORBIDDEN, as for a group that does not exist and another pair's conversation.
  for (const ConversationId& c : {g, group("nosuch"), direct(alice_, bob_)}) {
    auto refused = ask(carol_, ReceiptsFrame{c, MessageId{1}});
    EXPECT_EQ(refused.type, "ERROR") << c.str();
    EXPECT_EQ(refused.code, "FORBIDDEN") << c.str() << ": " << refused.message;
  }
  // Her READ finds nothing of hers to read and makes her no reader.
  auto nothing = ask(carol_, ReadFrame{g, s1});
  EXPECT_EQ(nothing.code, "NOT_FOUND") << nothing.raw;
  EXPECT_EQ(ask(alice_, ReceiptsFrame{g, MessageId{1}}).read_count, 1u);
}

TEST_P(InboxRequestsTest, AGroupOverThePushBoundGetsNoReceiptPushed) {
  const GroupId big = *GroupId::parse("big");
  std::vector<UserId> members{alice_, bob_};
  for (uint32_t i = 0; i < kReceiptPushMaxMembers; ++i)
    members.push_back(*UserId::parse("extra" + std::to_string(i)));
  groups_.put(big, "big", members);
  const MailboxSeq s1 = send(group("big"), alice_, {alice_, bob_});
  ASSERT_EQ(ask(bob_, ReadFrame{group("big"), s1}).type, "READ_OK");
  EXPECT_EQ(bus_.of_type("READ_STATE").size(), 1u);
  EXPECT_TRUE(bus_.of_type("RECEIPT").empty());
  EXPECT_EQ(ask(alice_, ReceiptsFrame{group("big"), MessageId{1}}).read_count, 1u) << "pulled instead";
}

// A BLOCK (and an UNBLOCK) drops what this gateway keeps of who blocks the target before it answers, and
// signals the target's gateways ahead of the caller's devices' BLOCK_CHANGED (docs/adr/0166).
TEST_P(InboxRequestsTest, ABlockDropsTheTargetsKeptBlockersHereAndSignalsTheirGatewaysFirst) {
  BlockedByCache cache(600'000);
  auto kept = cache.lookup(bob_, 0);
  cache.store(bob_, kept.generation, std::make_shared<const std::set<UserId>>(), 0);
  ASSERT_TRUE(cache.lookup(bob_, 1).blockers);
  InboxRequestDeps d = deps();
  d.blocked_by = &cache;
  for (bool blocked : {true, false}) {
    bus_.sent.clear();
    auto text = answer_inbox_frame(d, "r", InboxCaller{alice_, 7}, PrivacyFrame{BlockFrame{bob_, blocked}});
    ASSERT_TRUE(text.find(R"("type":"BLOCK_OK")") != std::string::npos) << text;
    EXPECT_FALSE(cache.lookup(bob_, 2).blockers)
        << "bob's kept answer survived " << (blocked ? "" : "UN") << "BLOCK";
    ASSERT_EQ(bus_.sent.size(), 2u);
    EXPECT_EQ(bus_.sent[0].users, std::vector<std::string>{name(bob_)});
    EXPECT_EQ(bus_.sent[0].raw, encode_blocked_by_signal(bob_)) << "the target's gateways first";
    EXPECT_EQ(bus_.sent[1].frame.type, "BLOCK_CHANGED");
    EXPECT_EQ(bus_.sent[1].users, std::vector<std::string>{name(alice_)});
    kept = cache.lookup(bob_, 3);
    cache.store(bob_, kept.generation, std::make_shared<const std::set<UserId>>(), 3);
  }
}

INSTANTIATE_TEST_SUITE_P(Memory, InboxRequestsTest, ::testing::Values(test::memory_inbox_fixture()),
                         test::fixture_name);

}  // namespace
}  // namespace qim
