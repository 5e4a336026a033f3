// Groups at their limits (issue 36, item 1), on a real `qim up`: one group must never stop delivery for the
// Outbox partition it shares with other conversations.
//
// G7: a group of 20,000 members whose names (the longest a name may be) all hash to one shard, with
//     QIM_GROUP_MAX_MEMBERS raised: that shard's recipients no longer fit one dispatch record (about 15,000
//     such names fill the mailbox log's 1 MiB), so fanout cuts them into several; every op and the message
//     reach members of every part.
// G8: a group row that does not decode, planted through the engine (RocksDB, on the stopped instance): the
//     group's next message is quarantined (`qim quarantine list` names it, log "outbox") and a direct
//     conversation of the same Outbox partition keeps being delivered.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "client/frames.h"
#include "core/sharding.h"
#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"
#include "groups/embedded/rocks_group_store.h"
#include "outbox/outbox_record.h"

namespace qim::e2e {
namespace {

// A user of `scenario` whose id is exactly 64 bytes (the longest name), unique per `i`.
std::string long_user(const std::string& scenario, size_t i) {
  const std::string stem = "m" + std::to_string(i) + "-";
  const size_t around = user(scenario, "").size();
  return user(scenario, stem + std::string(UserId::kMaxBytes - around - stem.size(), 'x'));
}

// `qim <args>` against the deployment's data directory: its exit code, with stdout and stderr in `out`.
int run_qim(Deployment& qim, const std::string& args, std::string& out) {
  std::string command;
  for (const auto& [k, v] : qim.operator_env()) command += k + "='" + v + "' ";
  command += std::string(QIM_BINARY) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  out.clear();
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool embedded_qim_up() {
  return deployment_under_test() != "distributed" && backend_under_test() == "embedded";
}

TEST(E2E, G07_TwentyThousandMembersOnOneShardAreDeliveredInSeveralRecords) {
  if (!embedded_qim_up()) GTEST_SKIP() << "runs on `qim up` with the embedded store only";
  auto qim = new_deployment("g07-one-shard");
  const Env env = {{"QIM_GROUP_MAX_MEMBERS", "20000"}};
  ASSERT_TRUE(qim->start(env).ok()) << qim->log_tail();
  const ShardMap shards = ShardMap::create(qim->shard_count()).value();

  // 20,000 users of shard 0 (the owner among them), each name 64 bytes: ~1.36 MB of names for one shard.
  std::vector<std::string> users;
  for (size_t i = 0; users.size() < 20'000; ++i) {
    std::string u = long_user("g07", i);
    if (shards.shard_of(*UserId::parse(u)).value == 0) users.push_back(std::move(u));
  }
  const std::string owner = users.front();
  auto o = login(*qim, owner);
  ASSERT_TRUE(o);
  std::vector<std::string> batch(users.begin() + 1, users.begin() + 500);
  auto created = o->group("GROUP_CREATE", {.members = batch, .name = "one shard"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  for (size_t first = 500; first < users.size(); first += 500) {
    batch.assign(users.begin() + static_cast<std::ptrdiff_t>(first),
                 users.begin() + static_cast<std::ptrdiff_t>(std::min(users.size(), first + 500)));
    auto added = o->group("GROUP_ADD", {.group = g, .members = batch});
    // Before the fix the add that took shard 0 past a record's worth was appended to the Outbox but never
    // applied: fanout retried its too-large dispatch record forever (UNAVAILABLE here).
    ASSERT_TRUE(added.ok()) << "adding members " << first << "..: " << added.error().to_string() << "\n"
                            << qim->log_tail();
  }
  ASSERT_TRUE(o->send_to_conversation(g, "all", "to twenty thousand").ok());

  // Members of each record of shard 0 (recipients are cut in sorted order, 8,192 a record).
  std::vector<std::string> sorted = users;
  std::sort(sorted.begin(), sorted.end());
  // 20,000 entries and their inbox rows in one shard: with ctest running two e2e processes on two cores
  // it took over kWait once (R10, 2026-12-06; 8-10 s alone), so the first member waits longer; the others
  // then find it at once.
  for (size_t i : {size_t{0}, size_t{8'191}, size_t{8'192}, size_t{16'384}, sorted.size() - 1}) {
    auto c = login(*qim, sorted[i]);
    ASSERT_TRUE(c);
    auto seen = sync_until(
        *c, [](const auto& e) { return has_cmid(e, "all"); }, 0, 3 * kWait);
    EXPECT_TRUE(has_cmid(seen, "all")) << "member " << i << " of the sorted 20,000 never got the message";
  }
  auto members = o->group("GROUP_MEMBERS", {.group = g});
  ASSERT_TRUE(members.ok()) << members.error().to_string();
  EXPECT_EQ(members->items.size(), 20'000u);
  EXPECT_EQ(qim->stop(), 0) << qim->log_tail();
}

TEST(E2E, G08_ACorruptGroupRowIsQuarantinedAndItsOutboxPartitionKeepsDelivering) {
  if (!embedded_qim_up()) GTEST_SKIP() << "plants the row in the embedded group store (RocksDB)";
  auto qim = new_deployment("g08-corrupt");
  constexpr uint32_t kPartitions = 2;
  const Env env = {{"QIM_OUTBOX_PARTITIONS", std::to_string(kPartitions)}};
  ASSERT_TRUE(qim->start(env).ok()) << qim->log_tail();
  const auto alice = user("g08", "alice"), bob = user("g08", "bob");
  auto a = login(*qim, alice);
  ASSERT_TRUE(a);
  auto created = a->group("GROUP_CREATE", {.members = {bob}, .name = "doomed"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  ASSERT_TRUE(a->send_to_conversation(g, "before", "before the corruption").ok());
  ASSERT_TRUE(
      has_cmid(sync_until(*login(*qim, bob), [](const auto& e) { return has_cmid(e, "before"); }), "before"));
  a.reset();
  ASSERT_EQ(qim->stop(), 0) << qim->log_tail();

  // Through the engine: the store's own RocksDB, bob's member row (key layout of rocks_group_store.h).
  {
    auto store = RocksGroupStore::open(qim->data_dir() + "/groups");
    ASSERT_TRUE(store.ok()) << store.error().to_string();
    const std::string key = "m" + g.substr(2) + std::string(1, '\0') + bob;
    ASSERT_TRUE((*store)->raw_db().Put(rocksdb::WriteOptions(), key, "not a member row").ok());
  }
  ASSERT_TRUE(qim->start(env).ok()) << qim->log_tail();

  // A direct conversation on the group's Outbox partition.
  const uint32_t partition = outbox_partition_of(*ConversationId::parse(g), kPartitions);
  std::string carol, dave;
  for (int i = 0; carol.empty(); ++i) {
    const auto c = user("g08", "carol" + std::to_string(i)), d = user("g08", "dave");
    if (outbox_partition_of(*ConversationId::parse(conv(c, d)), kPartitions) == partition) {
      carol = c;
      dave = d;
    }
  }
  a = login(*qim, alice);
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->send_to_conversation(g, "poisoned", "the group's rows do not decode").ok());
  auto c = login(*qim, carol);
  ASSERT_TRUE(c);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(c->send(dave, "after" + std::to_string(i), "still delivered").ok());
  }
  auto d = login(*qim, dave);
  auto seen = sync_until(*d, [](const auto& e) { return has_cmid(e, "after2"); });
  EXPECT_TRUE(has_cmid(seen, "after0") && has_cmid(seen, "after2"))
      << "the partition stalled behind the group's record\n"
      << qim->log_tail();

  std::string out;
  EXPECT_EQ(run_qim(*qim, "quarantine list --json", out), 0) << out;
  EXPECT_NE(out.find("\"log\":\"outbox\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"partition\":" + std::to_string(partition)), std::string::npos) << out;
  EXPECT_NE(out.find("\"reason\":\"CorruptEntry\""), std::string::npos) << out;
  EXPECT_EQ(run_qim(*qim, "quarantine list", out), 0) << out;
  EXPECT_NE(out.find("outbox"), std::string::npos) << out;
  EXPECT_GE(metric(*qim, "qim_fanout_quarantined_records_total"), 1.0);
  EXPECT_EQ(qim->stop(), 0) << qim->log_tail();
}

}  // namespace
}  // namespace qim::e2e
