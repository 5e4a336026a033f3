#include "bench/load/group_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace qim::load {
namespace {

std::vector<std::string> users(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("u" + std::to_string(i));
  return out;
}

TEST(GroupReport, EveryMemberListensWhenTheSampleIsLargeEnough) {
  auto shards = *ShardMap::create(4);
  auto members = users(30);
  members.push_back("u3");         // repeated
  members.push_back("not:valid");  // not a user id
  const auto all = choose_listeners(members, shards, 8, 100);
  ASSERT_EQ(all.size(), 30u);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_EQ(std::count(all.begin(), all.end(), "u3"), 1);
}

TEST(GroupReport, TheSampleHoldsEveryShardsLastMemberAndTheLastShardsLastChunk) {
  auto shards = *ShardMap::create(8);
  const uint32_t chunk = 5;
  const auto members = users(400);
  // Independently: each shard's members sorted, as fanout cuts them into chunks.
  std::map<uint32_t, std::vector<std::string>> by_shard;
  for (const auto& m : members) by_shard[shards.shard_of(UserId::unchecked(m)).value].push_back(m);
  for (auto& [s, v] : by_shard) std::sort(v.begin(), v.end());
  ASSERT_EQ(by_shard.size(), 8u);  // 400 users spread over 8 shards: every shard has some

  const auto sample = choose_listeners(members, shards, chunk, 40);
  ASSERT_EQ(sample.size(), 40u);
  const std::set<std::string> in(sample.begin(), sample.end());
  EXPECT_EQ(in.size(), sample.size()) << "no member twice";
  for (const auto& [s, v] : by_shard) EXPECT_TRUE(in.contains(v.back())) << "shard " << s << " " << v.back();
  const auto& last = by_shard.rbegin()->second;
  for (size_t i = (last.size() - 1) / chunk * chunk; i < last.size(); ++i)
    EXPECT_TRUE(in.contains(last[i])) << last[i] << " of the last chunk";
  for (const auto& m : sample) EXPECT_TRUE(std::find(members.begin(), members.end(), m) != members.end());

  // Fewer listeners than shards: the last shards' last members come first.
  const auto three = choose_listeners(members, shards, chunk, 3);
  ASSERT_EQ(three.size(), 3u);
  auto it = by_shard.rbegin();
  for (size_t i = 0; i < 3; ++i, ++it) EXPECT_EQ(three[i], it->second.back());
}

TEST(GroupReport, LatencySummaryIsNearestRank) {
  std::vector<double> v;
  for (int i = 200; i >= 1; --i) v.push_back(i);
  const auto s = summarize(v);
  EXPECT_EQ(s.samples, 200u);
  EXPECT_EQ(s.p50_ms, 100);
  EXPECT_EQ(s.p99_ms, 198);
  EXPECT_EQ(s.max_ms, 200);
  EXPECT_EQ(summarize({}).samples, 0u);
  EXPECT_EQ(summarize({}).max_ms, 0);
}

GroupResult measured() {
  GroupResult r;
  r.config = "embedded";
  r.members = 1000;
  r.listeners = 120;
  r.messages = 20;
  r.acked = 20;
  r.ack = {20, 1.5, 3.0, 3.2};
  r.first = {20, 4.0, 9.0, 9.5};
  r.last = {20, 1250.0, 2400.0, 2500.0};
  r.verified_members = 879;
  r.inserts_per_entry = 2.05;
  r.updates_per_entry = 0.001;
  r.reads_per_entry = 0.0126;
  r.lwts_per_entry = 0;
  r.group_reads_per_msg = 1;
  r.group_loads_per_msg = 0;
  return r;
}

TEST(GroupReport, MissingDeliveriesMakeTheRunIncompleteAndShowInTheTable) {
  GroupResult r = measured();
  EXPECT_EQ(r.entries(), 20'000u);
  EXPECT_TRUE(r.complete());
  r.listener_missing = 3;
  EXPECT_FALSE(r.complete());
  r.listener_missing = 0;
  r.verify_missing = 1;
  EXPECT_FALSE(r.complete());
  r.verify_missing = 0;
  r.acked = 19;
  EXPECT_FALSE(r.complete());

  GroupResult missing = measured();
  missing.listener_missing = 7;
  missing.verify_missing = 40;
  const std::string md = group_markdown({missing});
  EXPECT_NE(md.find("| embedded | 1000 | 120 | 20 | one at a time |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1.25 s / 2.40 s / 2.50 s | 7 | 879: 40 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2.050 / 0.001 / 0.013 / 0.000 | 1.000 / 0.000 |"), std::string::npos) << md;
  const std::string c = group_csv({missing});
  EXPECT_NE(c.find(",7,879,40,20000,2.0500,"), std::string::npos) << c;
  EXPECT_EQ(c.substr(c.size() - 4), ",no\n") << c;
}

TEST(GroupReport, UnmeasuredFiguresAreDashesNotZeros) {
  GroupResult r = measured();
  r.rate = 5;
  r.verified_members.reset();
  r.inserts_per_entry.reset();
  r.updates_per_entry.reset();
  r.reads_per_entry.reset();
  r.lwts_per_entry.reset();
  r.group_reads_per_msg.reset();
  r.group_loads_per_msg.reset();
  const std::string md = group_markdown({r, measured()});
  EXPECT_NE(md.find("| 5 msg/s |"), std::string::npos) << md;
  EXPECT_NE(md.find("| not checked | - | - / - |"), std::string::npos) << md;
  const std::string c = group_csv({r, measured()});
  EXPECT_EQ(std::count(c.begin(), c.end(), '\n'), 3);
  EXPECT_NE(c.find(",0,,0,20000,,,,,,,0,yes\n"), std::string::npos) << c;
}

}  // namespace
}  // namespace qim::load
