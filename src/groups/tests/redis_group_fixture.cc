// The Redis group store under the contract suite, on the instances of QIM_TEST_REDIS=host:port[,...]:
// a key prefix per harness, deleted with it (never a FLUSHALL of a shared Redis).
#include "groups/redis/redis_group_store.h"
#include "groups/tests/group_store_fixture.h"
#include "mailbox/redis/redis_test_env.h"

namespace qim::test {

namespace {

class RedisHarness final : public GroupHarness {
 public:
  RedisHarness(std::vector<std::string> endpoints, std::string prefix)
      : endpoints_(std::move(endpoints)), prefix_(std::move(prefix)) {}
  ~RedisHarness() override { (void)delete_test_prefix(endpoints_, prefix_); }

  Result<std::unique_ptr<GroupStore>> open() override {
    RedisGroupOptions o;
    o.endpoints = endpoints_;
    o.key_prefix = prefix_;
    QIM_ASSIGN_OR_RETURN(auto store, RedisGroupStore::open(o));
    return std::unique_ptr<GroupStore>(std::move(store));
  }
  // A raw HSET into the group's members hash, on the group's instance (the store says which).
  Status plant_corrupt_member(GroupStore& current, const GroupId& group, const UserId& user) override {
    auto* redis = dynamic_cast<RedisGroupStore*>(&current);
    if (redis == nullptr) return Error(Errc::kInvalidArgument, "not a RedisGroupStore");
    QIM_ASSIGN_OR_RETURN(RedisEndpoint endpoint, RedisEndpoint::parse(endpoints_[redis->instance_of(group)]));
    QIM_ASSIGN_OR_RETURN(auto conn, RedisConnection::open(endpoint, RedisTimeouts{}));
    QIM_ASSIGN_OR_RETURN(
        RedisReply r, conn->run({"HSET", group_members_key(prefix_, group), user.str(), "not a member row"}));
    if (r.is_error()) return Error(Errc::kTransport, "plant corrupt member row: " + r.str);
    return {};
  }

 private:
  std::vector<std::string> endpoints_;
  std::string prefix_;
};

}  // namespace

GroupFixture group_fixture() {
  GroupFixture f;
  f.name = "redis";
  f.unavailable = []() -> std::optional<std::string> {
    if (test_redis_endpoints().empty()) return std::string(kTestRedisSkipMessage);
    return std::nullopt;
  };
  f.make_harness = []() -> Result<std::unique_ptr<GroupHarness>> {
    return std::unique_ptr<GroupHarness>(
        std::make_unique<RedisHarness>(test_redis_endpoints(), unique_test_prefix("groups")));
  };
  return f;
}

}  // namespace qim::test
