#include "fanout/dispatch_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "mailbox/message_codec.h"

namespace qim {
namespace {

UserId user(const std::string& s) {
  return UserId::parse(s).value();
}

// Two users on the same shard and one on another, found by search (the hash is fixed).
struct Users {
  UserId a, same_as_a, other;
};
Users find_users(const ShardMap& shards) {
  Users u{user("u0"), {}, {}};
  for (int i = 1; u.same_as_a.empty() || u.other.empty(); ++i) {
    UserId c = user("u" + std::to_string(i));
    if (shards.shard_of(c) == shards.shard_of(u.a)) {
      if (u.same_as_a.empty()) u.same_as_a = c;
    } else if (u.other.empty()) {
      u.other = c;
    }
  }
  return u;
}

OutboxRecord record(const UserId& from, const UserId& to, std::string body = "hi") {
  OutboxRecord r;
  r.conversation = direct_conversation(from, to).value();
  r.sender = from;
  r.sender_device = DeviceId::parse("d1").value();
  r.client_msg_id = "c1";
  r.server_time_ms = 1'700'000'000'000;
  r.body = std::move(body);
  return r;
}

TEST(DispatchPlanTest, OneRecordPerShardWithADeterministicId) {
  const ShardMap shards = ShardMap::create(16).value();
  const Users u = find_users(shards);
  auto plan = plan_dispatches(record(u.a, u.other), 3, Offset{42}, shards, 256);
  ASSERT_TRUE(plan.ok()) << plan.error().to_string();
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_LT((*plan)[0].shard, (*plan)[1].shard);
  const MessageId id = message_id_of(3, Offset{42});
  EXPECT_EQ(id.value, (uint64_t{3} << 48) | 42);
  for (const auto& d : *plan) {
    EXPECT_EQ(d.record.identity.id.str(),
              "m" + std::to_string(id.value) + "-s" + std::to_string(d.shard.value));
    EXPECT_EQ(d.record.message.id, id);
    ASSERT_EQ(d.record.chunks.size(), 1u);
    ASSERT_EQ(d.record.chunks[0].size(), 1u);
    EXPECT_EQ(shards.shard_of(d.record.chunks[0][0]), d.shard);
    EXPECT_EQ(d.record.identity.manifest.entry_counts, std::vector<uint32_t>{1});
  }
}

TEST(DispatchPlanTest, ARecordReplayedEncodesToTheSameBytes) {
  const ShardMap shards = ShardMap::create(16).value();
  const Users u = find_users(shards);
  auto first = plan_dispatches(record(u.other, u.a), 0, Offset{7}, shards, 256).value();
  auto again = plan_dispatches(record(u.other, u.a), 0, Offset{7}, shards, 256).value();
  ASSERT_EQ(first.size(), again.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(encode_dispatch_record(first[i].record), encode_dispatch_record(again[i].record));
  }
  auto moved = plan_dispatches(record(u.other, u.a), 0, Offset{8}, shards, 256).value();
  EXPECT_NE(moved[0].record.identity.id, first[0].record.identity.id);  // another Outbox record, another id
}

TEST(DispatchPlanTest, RecipientsOfOneShardShareARecordCutIntoChunks) {
  const ShardMap shards = ShardMap::create(16).value();
  const Users u = find_users(shards);
  auto plan = plan_dispatches(record(u.a, u.same_as_a), 0, Offset{1}, shards, 1).value();
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].record.chunks.size(), 2u);
  EXPECT_EQ(plan[0].record.identity.manifest.entry_counts, (std::vector<uint32_t>{1, 1}));
  auto whole = plan_dispatches(record(u.a, u.same_as_a), 0, Offset{1}, shards, 256).value();
  EXPECT_EQ(whole[0].record.chunks.size(), 1u);
  EXPECT_NE(whole[0].record.identity.digest, 0u);
}

TEST(DispatchPlanTest, RefusesWhatTheStoreWouldRefuse) {
  const ShardMap shards = ShardMap::create(4).value();
  EXPECT_EQ(plan_dispatches(record(user("a"), user("b"), std::string(kMaxBodyBytes + 1, 'x')), 0, Offset{0},
                            shards, 16)
                .code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(plan_dispatches(record(user("a"), user("b")), 0, Offset{kMaxOffset + 1}, shards, 16).code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(plan_dispatches(record(user("a"), user("b")), 0, Offset{0}, shards, 0).code(),
            Errc::kInvalidArgument);
}

// Issue 36, item 1: 20,000 recipients with the longest names on one shard used to make one record of
// 1.4 MB, over the mailbox log's bound: its append was refused and fanout retried it forever. They are now
// cut into records a log takes, each with its own deterministic id, every recipient in exactly one.
TEST(DispatchPlanTest, AShardWithMoreRecipientsThanARecordHoldsGetsSeveralRecords) {
  const ShardMap shards = ShardMap::create(2).value();
  std::vector<UserId> members;
  for (int i = 0; members.size() < 20'000; ++i) {
    std::string name = "m" + std::to_string(i) + "-";
    name += std::string(64 - name.size(), 'x');
    UserId u = user(name);
    if (shards.shard_of(u).value == 1) members.push_back(std::move(u));
  }
  std::sort(members.begin(), members.end());
  OutboxRecord r = record(members[0], members[1], std::string(kMaxBodyBytes, 'b'));
  r.conversation = ConversationId::parse("g:team").value();
  auto plan = plan_dispatches_to(r, 1, Offset{9}, shards, 256, members);
  ASSERT_TRUE(plan.ok()) << plan.error().to_string();
  ASSERT_EQ(plan->size(), 3u);  // 8,192 + 8,192 + 3,616
  const MessageId id = message_id_of(1, Offset{9});
  std::vector<UserId> all;
  for (size_t k = 0; k < plan->size(); ++k) {
    const ShardDispatch& d = (*plan)[k];
    EXPECT_EQ(d.shard.value, 1u);
    EXPECT_EQ(d.record.identity.id.str(),
              "m" + std::to_string(id.value) + "-s1" + (k == 0 ? std::string() : "-p" + std::to_string(k)));
    EXPECT_TRUE(validate_manifest(d.record.identity.manifest).ok());
    const std::string bytes = encode_dispatch_record(d.record);
    EXPECT_LT(bytes.size(), 1'000'000u) << "record " << k << " passes the Kafka log's bound";
    auto decoded = decode_dispatch_record(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.error().to_string();
    for (const auto& chunk : decoded->chunks) all.insert(all.end(), chunk.begin(), chunk.end());
  }
  EXPECT_EQ(all, members);  // each once, in order
  // A replay cuts the same way: the same ids and bytes.
  auto again = plan_dispatches_to(r, 1, Offset{9}, shards, 256, members).value();
  ASSERT_EQ(again.size(), plan->size());
  for (size_t k = 0; k < again.size(); ++k)
    EXPECT_EQ(encode_dispatch_record(again[k].record), encode_dispatch_record((*plan)[k].record));
  // One recipient a chunk: a record holds at most kMaxChunks chunks, so 20 records.
  auto small = plan_dispatches_to(r, 1, Offset{9}, shards, 1, members).value();
  EXPECT_EQ(small.size(), (20'000 + kMaxChunks - 1) / kMaxChunks);
  for (const auto& d : small) EXPECT_TRUE(validate_manifest(d.record.identity.manifest).ok());
}

}  // namespace
}  // namespace qim
