// What the Redis group store promises beyond the contract: a change that meets a key of the wrong type
// writes nothing at all (the script checks every key before its first write; Redis would not undo it).
#include <gtest/gtest.h>

#include "groups/redis/redis_group_store.h"
#include "mailbox/redis/redis_test_env.h"

namespace qim::test {
namespace {

UserId u(const std::string& s) {
  return UserId::parse(s).value();
}

TEST(RedisGroupStoreTest, AChangeThatMeetsAKeyOfAnotherTypeWritesNothing) {
  const auto endpoints = test_redis_endpoints();
  if (endpoints.empty()) GTEST_SKIP() << kTestRedisSkipMessage;
  const std::string prefix = unique_test_prefix("groups-wrongtype");
  RedisGroupOptions o;
  o.endpoints = endpoints;
  o.key_prefix = prefix;
  auto store = RedisGroupStore::open(o);
  ASSERT_TRUE(store.ok()) << store.error().to_string();
  const GroupId team = GroupId::parse("team").value();
  // carol's index key (on the group's instance) holds a string, not a set.
  auto endpoint = RedisEndpoint::parse(endpoints[(*store)->instance_of(team)]).value();
  auto conn = RedisConnection::open(endpoint, RedisTimeouts{}).value();
  ASSERT_FALSE(conn->run({"SET", group_index_key(prefix, u("carol")), "not a set"}).value().is_error());

  GroupState g(team);
  GroupChange c = g.apply(GroupOp{GroupOpKind::kCreate, {u("bob"), u("carol")}, "team", GroupRole::kMember},
                          u("alice"), 1, 100);
  Status s = (*store)->apply(c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Errc::kTransport);
  EXPECT_NE(s.error().message().find("WRONGTYPE"), std::string::npos) << s.error().message();

  auto fresh = RedisGroupStore::open(o).value();
  EXPECT_FALSE(fresh->load(team).value().has_value());
  EXPECT_FALSE(fresh->outcome(team, 1).value().has_value());
  EXPECT_TRUE(fresh->groups_of(u("bob")).value().empty());  // bob's index was not written either
  (void)delete_test_prefix(endpoints, prefix);
}

}  // namespace
}  // namespace qim::test
