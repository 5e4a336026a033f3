// Fanout of group conversations: membership decided at each Outbox offset, durably, so a replay from any
// earlier offset (by a fresh fanout over a freshly opened group store) yields the same dispatch records.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "fanout/dispatch_plan.h"
#include "fanout/fanout.h"
#include "groups/embedded/rocks_group_store.h"
#include "groups/membership.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "mailbox/message_codec.h"
#include "node/quarantine.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kShards = 4;

UserId u(const std::string& s) {
  return UserId::parse(s).value();
}

class GroupFanoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outbox_ = testing::open_test_log(dir_.sub("outbox"), 1, "outbox");
    mailbox_log_ = testing::open_test_log(dir_.sub("mailbox"), kShards, "mailbox");
    reopen_store();
  }
  void reopen_store() {
    store_.reset();
    store_ = RocksGroupStore::open(dir_.sub("groups")).value();
  }
  Offset append(OutboxRecord r) {
    r.conversation = ConversationId::parse("g:team").value();
    r.server_time_ms = 1'700'000'000'000;
    if (r.group_op) {
      r.client_msg_id = "~group:" + std::string(group_op_name(r.group_op->kind));
      r.body = group_op_body(*r.group_op, r.sender);
    }
    return outbox_->append_sync(0, r.conversation.str(), encode_outbox_record(r)).value();
  }
  Offset op(const std::string& actor, GroupOpKind kind, std::vector<UserId> members = {}) {
    OutboxRecord r;
    r.sender = u(actor);
    r.group_op = GroupOp{kind, std::move(members), "team", GroupRole::kMember};
    return append(std::move(r));
  }
  Offset say(const std::string& from, const std::string& body) {
    OutboxRecord r;
    r.sender = u(from);
    r.client_msg_id = "c" + std::to_string(sent_++);
    r.body = body;
    return append(std::move(r));
  }
  FanoutMetrics run_to_end(uint32_t chunk_entries = 256, Log* quarantine = nullptr,
                           std::chrono::milliseconds limit = 60s) {
    FanoutOptions o;
    o.consumer.poll_wait = 10ms;
    o.consumer.retry_max = 100ms;
    o.groups = store_.get();
    o.group_max_members = 10'000;
    o.chunk_entries = chunk_entries;
    o.quarantine = quarantine;
    o.messages = messages_.get();
    Fanout f(*outbox_, *mailbox_log_, ShardMap::create(kShards).value(), o);
    EXPECT_TRUE(f.start().ok());
    Status drained = f.drain(limit);
    EXPECT_TRUE(drained.ok()) << drained.error().to_string();
    return f.metrics();
  }
  // A direct message on the same (only) Outbox partition as the group.
  Offset say_direct(const std::string& from, const std::string& to, const std::string& body) {
    OutboxRecord r;
    r.conversation = direct_conversation(u(from), u(to)).value();
    r.sender = u(from);
    r.client_msg_id = "d" + std::to_string(sent_++);
    r.server_time_ms = 1'700'000'000'000;
    r.body = body;
    return outbox_->append_sync(0, r.conversation.str(), encode_outbox_record(r)).value();
  }
  // The dispatch records on the mailbox log, in log order per shard, as raw bytes.
  std::vector<std::string> raw_dispatches() {
    std::vector<std::string> out;
    for (uint32_t s = 0; s < kShards; ++s) {
      const std::vector<LogRecord> records = mailbox_log_->read(s, Offset{0}, 100'000, 0ms).value();
      for (const auto& rec : records) out.push_back(rec.value);
    }
    return out;
  }
  // Who received the message at `offset` (every chunk of every shard's record).
  std::set<std::string> recipients_of(Offset offset) {
    std::set<std::string> out;
    for (const auto& bytes : raw_dispatches()) {
      auto d = decode_dispatch_record(bytes).value();
      if (d.message.id != message_id_of(0, offset)) continue;
      for (const auto& chunk : d.chunks)
        for (const auto& user : chunk) out.insert(user.str());
    }
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<EmbeddedLog> outbox_, mailbox_log_;
  std::unique_ptr<RocksGroupStore> store_;
  std::unique_ptr<MessageStateStore> messages_ = make_memory_message_state_store();
  int sent_ = 0;
};

TEST_F(GroupFanoutTest, MembersAtEachOffsetReceiveAndAReplayChangesNothing) {
  const Offset create = op("alice", GroupOpKind::kCreate, {u("bob")});
  const Offset hello = say("bob", "hello");
  const Offset add = op("alice", GroupOpKind::kAdd, {u("carol")});
  const Offset welcome = say("alice", "welcome carol");
  const Offset remove = op("alice", GroupOpKind::kRemove, {u("bob")});
  const Offset after = say("carol", "bob is gone");
  const Offset outsider = say("bob", "let me back");                   // no longer a member: not dispatched
  const Offset refused = op("carol", GroupOpKind::kAdd, {u("dave")});  // a member may not add
  const Offset last = say("alice", "still no dave");

  const FanoutMetrics m = run_to_end();
  EXPECT_EQ(m.group_ops, 4u);
  EXPECT_EQ(m.group_refused, 2u);
  EXPECT_EQ(m.group_loads, 1u);
  using S = std::set<std::string>;
  EXPECT_EQ(recipients_of(create), (S{"alice", "bob"}));
  EXPECT_EQ(recipients_of(hello), (S{"alice", "bob"}));
  EXPECT_EQ(recipients_of(add), (S{"alice", "bob", "carol"}));  // carol gets her own add
  EXPECT_EQ(recipients_of(welcome), (S{"alice", "bob", "carol"}));
  EXPECT_EQ(recipients_of(remove), (S{"alice", "bob", "carol"}));  // bob learns he was removed
  EXPECT_EQ(recipients_of(after), (S{"alice", "carol"}));
  EXPECT_TRUE(recipients_of(outsider).empty());
  EXPECT_TRUE(recipients_of(refused).empty());
  EXPECT_EQ(recipients_of(last), (S{"alice", "carol"}));
  const std::vector<std::string> first = raw_dispatches();

  // A replay from the start by a new fanout over a freshly opened store: the same records, byte for byte.
  ASSERT_TRUE(rewind_fanout(*outbox_, {}, Offset{0}).ok());
  reopen_store();
  const FanoutMetrics again = run_to_end();
  EXPECT_EQ(again.group_refused, 2u);
  std::vector<std::string> all = raw_dispatches();
  ASSERT_EQ(all.size(), 2 * first.size());
  std::multiset<std::string> a(first.begin(), first.end()), b;
  for (const auto& r : all) b.insert(r);
  for (const auto& r : a) EXPECT_EQ(b.count(r), 2u);
  // And the state read back is what the first pass wrote.
  auto state = store_->load(GroupId::parse("team").value()).value();
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->meta()->member_count, 2u);
  EXPECT_EQ(state->ops().size(), 4u);
}

// Decision 160: a recall names, in each shard's record, the members who received the SEND or an edit it
// names and were removed before it (bob got the SEND, dave only the edit; erin, added after the edit,
// got neither). They are no recipients of it. A shard where none of the recall's recipients is gets a
// record with no chunk. A replay from before the SEND plans the same bytes.
TEST_F(GroupFanoutTest, ARecallNamesTheRemovedMembersWhoReceivedTheMessageInTheirShardsRecord) {
  const ShardMap shards = ShardMap::create(kShards).value();
  auto named = [&](const std::string& prefix, auto wanted) {
    for (int i = 0;; ++i) {
      if (UserId c = u(prefix + std::to_string(i)); wanted(shards.shard_of(c).value)) return c;
    }
  };
  const uint32_t sa = shards.shard_of(u("alice")).value, sc = shards.shard_of(u("carol")).value;
  const UserId bob = named("bob", [&](uint32_t s) { return s != sa && s != sc; });  // alone in his shard
  const UserId dave = named("dave", [&](uint32_t s) { return s == sa; });           // with alice
  const UserId erin = named("erin", [](uint32_t) { return true; });
  op("alice", GroupOpKind::kCreate, {bob, u("carol")});
  const Offset send = say("alice", "the secret");
  op("alice", GroupOpKind::kAdd, {dave});
  auto event = [&](MessageEventKind kind, const std::string& body) {
    OutboxRecord r;
    r.sender = u("alice");
    r.client_msg_id = "e" + std::to_string(sent_++);
    r.body = body;
    r.event = MessageEvent{kind, message_id_of(0, send)};
    return append(std::move(r));
  };
  const Offset edit = event(MessageEventKind::kEdit, "the secret, edited");
  op("alice", GroupOpKind::kAdd, {erin});
  op("alice", GroupOpKind::kRemove, {bob, dave, erin});
  const Offset recall = event(MessageEventKind::kRecall, "");
  run_to_end();
  using S = std::set<std::string>;
  EXPECT_EQ(recipients_of(edit), (S{"alice", bob.str(), "carol", dave.str()}));
  EXPECT_EQ(recipients_of(recall), (S{"alice", "carol"}));
  auto recall_records = [&] {
    std::map<uint32_t, DispatchRecord> out;  // by shard
    for (uint32_t s = 0; s < kShards; ++s) {
      const std::vector<LogRecord> records = mailbox_log_->read(s, Offset{0}, 100'000, 0ms).value();
      for (const auto& rec : records) {
        DispatchRecord d = decode_dispatch_record(rec.value).value();
        if (d.message.id == message_id_of(0, recall)) out[s] = std::move(d);
      }
    }
    return out;
  };
  const std::map<uint32_t, DispatchRecord> first = recall_records();
  ASSERT_TRUE(first.count(shards.shard_of(bob).value));
  const DispatchRecord& bobs = first.at(shards.shard_of(bob).value);
  EXPECT_TRUE(bobs.chunks.empty()) << "no recipient of the recall in bob's shard";
  EXPECT_EQ(bobs.former_recipients, std::vector<UserId>{bob});
  EXPECT_EQ(bobs.identity, make_identity(bobs.identity.id, bobs.message, {}, bobs.former_recipients));
  EXPECT_EQ(bobs.identity.id.str(),
            dispatch_id_for(message_id_of(0, recall), ShardId{shards.shard_of(bob).value}).str());
  const DispatchRecord& alices = first.at(sa);
  EXPECT_FALSE(alices.chunks.empty());
  EXPECT_EQ(alices.former_recipients, std::vector<UserId>{dave});
  std::vector<UserId> former;
  for (const auto& [shard, d] : first) {
    former.insert(former.end(), d.former_recipients.begin(), d.former_recipients.end());
  }
  std::sort(former.begin(), former.end());
  EXPECT_EQ(former, (std::vector<UserId>{bob, dave})) << "erin received neither the SEND nor the edit";

  // A replay from the start by a new fanout over a freshly opened group store: the same recall records.
  const size_t before = raw_dispatches().size();
  ASSERT_TRUE(rewind_fanout(*outbox_, {}, Offset{0}).ok());
  reopen_store();
  run_to_end();
  ASSERT_EQ(raw_dispatches().size(), 2 * before);
  for (uint32_t s = 0; s < kShards; ++s) {
    std::vector<std::string> bytes;
    const std::vector<LogRecord> records = mailbox_log_->read(s, Offset{0}, 100'000, 0ms).value();
    for (const auto& rec : records) {
      if (decode_dispatch_record(rec.value)->message.id == message_id_of(0, recall)) {
        bytes.push_back(rec.value);
      }
    }
    ASSERT_EQ(bytes.size(), first.count(s) * 2) << s;
    if (!bytes.empty()) {
      EXPECT_EQ(bytes[0], bytes[1]) << "shard " << s;
    }
  }
}

TEST_F(GroupFanoutTest, TenThousandMembersSpanSeveralChunksPerShardAndLoadOnce) {
  std::vector<UserId> batch;
  op("owner", GroupOpKind::kCreate);
  for (int i = 0; i < 9'999; ++i) {
    batch.push_back(u("m" + std::to_string(i)));
    if (batch.size() == kMaxUsersPerGroupOp || i == 9'998) {
      op("owner", GroupOpKind::kAdd, std::move(batch));
      batch.clear();
    }
  }
  const Offset msg = say("m42", "hello everyone");
  const Offset full = op("owner", GroupOpKind::kAdd, {u("one-too-many")});
  const FanoutMetrics m = run_to_end(256);
  EXPECT_EQ(m.group_loads, 1u);
  EXPECT_EQ(m.group_refused, 1u);  // the 10,001st member
  size_t entries = 0, records = 0;
  for (const auto& bytes : raw_dispatches()) {
    auto d = decode_dispatch_record(bytes).value();
    if (d.message.id != message_id_of(0, msg)) continue;
    ++records;
    EXPECT_GT(d.chunks.size(), 1u);  // ~2,500 recipients per shard in chunks of 256
    for (const auto& chunk : d.chunks) {
      EXPECT_LE(chunk.size(), 256u);
      entries += chunk.size();
    }
  }
  EXPECT_EQ(records, kShards);
  EXPECT_EQ(entries, 10'000u);
  EXPECT_TRUE(recipients_of(full).empty());
}

// Issue 36, item 1: a group whose row does not decode used to fail every batch holding one of its records,
// for good: every conversation of its Outbox partition stalled behind it. The record is now quarantined
// (durably, before the position passes it) and the partition goes on.
TEST_F(GroupFanoutTest, ARecordOfAGroupWithACorruptRowIsQuarantinedAndThePartitionGoesOn) {
  auto quarantine_log = testing::open_test_log(dir_.sub("quarantine"), 1, "quarantine");
  op("alice", GroupOpKind::kCreate, {u("bob")});
  say("bob", "before");
  run_to_end(256, quarantine_log.get());
  const std::string bad_key = "m" + std::string("team") + std::string(1, '\0') + "bob";
  ASSERT_TRUE(store_->raw_db().Put(rocksdb::WriteOptions(), bad_key, "not a member row").ok());
  reopen_store();

  const Offset poisoned = say("alice", "after the corruption");
  const Offset direct = say_direct("carol", "dave", "a conversation of the same partition");
  const FanoutMetrics m = run_to_end(256, quarantine_log.get(), 10s);
  EXPECT_EQ(m.quarantined, 1u);
  EXPECT_TRUE(recipients_of(poisoned).empty());
  EXPECT_EQ(recipients_of(direct), (std::set<std::string>{"carol", "dave"}));
  auto listed = read_quarantine(*quarantine_log, Offset{0}, 10);
  ASSERT_TRUE(listed.ok()) << listed.error().to_string();
  ASSERT_EQ(listed->size(), 1u);
  const QuarantinedRecord& r = (*listed)[0].record;
  EXPECT_EQ(r.source, QuarantineSource::kOutbox);
  EXPECT_EQ(r.shard.value, 0u);  // the Outbox partition
  EXPECT_EQ(r.offset, poisoned);
  EXPECT_EQ(r.code, Errc::kCorruptEntry);
  EXPECT_NE(r.message.find("'team'"), std::string::npos) << r.message;
  EXPECT_EQ(decode_outbox_record(r.raw).value().body, "after the corruption");
}

// The other permanent error: a dispatch record the mailbox log refuses (over its record bound). The Outbox
// record is quarantined before any of its dispatch records is appended; the next one goes through.
TEST_F(GroupFanoutTest, AMessageWhoseDispatchRecordTheLogRefusesIsQuarantinedWhole) {
  auto quarantine_log = testing::open_test_log(dir_.sub("quarantine"), 1, "quarantine");
  EmbeddedLogOptions small;
  small.dir = dir_.sub("small-mailbox");
  small.name = "mailbox";
  small.partitions = kShards;
  small.max_record_bytes = 2048;
  mailbox_log_ = EmbeddedLog::open(small).value();
  op("alice", GroupOpKind::kCreate, {u("bob"), u("carol")});
  const Offset big = say("bob", std::string(4096, 'x'));
  const Offset next = say("bob", "small");
  const FanoutMetrics m = run_to_end(256, quarantine_log.get(), 10s);
  EXPECT_EQ(m.quarantined, 1u);
  EXPECT_TRUE(recipients_of(big).empty()) << "a message is dispatched whole or not at all";
  EXPECT_EQ(recipients_of(next), (std::set<std::string>{"alice", "bob", "carol"}));
  auto listed = read_quarantine(*quarantine_log, Offset{0}, 10).value();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].record.offset, big);
  EXPECT_EQ(listed[0].record.code, Errc::kInvalidArgument);
  EXPECT_NE(listed[0].record.message.find("over the mailbox log's bound"), std::string::npos)
      << listed[0].record.message;
}

}  // namespace
}  // namespace qim
