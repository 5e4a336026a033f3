// The Redis history store under the contract suite, on the instances of QIM_TEST_REDIS=host:port[,...]:
// a key prefix per harness, deleted with it (never a FLUSHALL of a shared Redis).
#include "archiver/redis/redis_history_store.h"
#include "archiver/tests/history_fixture.h"
#include "mailbox/redis/redis_connection.h"
#include "mailbox/redis/redis_test_env.h"

namespace qim::test {

namespace {

class RedisHarness final : public HistoryHarness {
 public:
  RedisHarness(std::vector<std::string> endpoints, std::string prefix)
      : endpoints_(std::move(endpoints)), prefix_(std::move(prefix)) {}
  ~RedisHarness() override { (void)delete_test_prefix(endpoints_, prefix_); }

  Result<std::unique_ptr<HistoryStore>> open() override {
    RedisHistoryOptions o;
    o.endpoints = endpoints_;
    o.key_prefix = prefix_;
    QIM_ASSIGN_OR_RETURN(auto store, RedisHistoryStore::open(o));
    return std::unique_ptr<HistoryStore>(std::move(store));
  }
  // Raw HSET/ZADD on the conversation's instance (the store says which), in the store's key layout.
  Status plant_corrupt(HistoryStore& current, const ConversationId& conversation, MessageId id) override {
    auto* redis = dynamic_cast<RedisHistoryStore*>(&current);
    if (redis == nullptr) return Error(Errc::kInvalidArgument, "not a RedisHistoryStore");
    QIM_ASSIGN_OR_RETURN(RedisEndpoint endpoint,
                         RedisEndpoint::parse(endpoints_[redis->instance_of(conversation)]));
    QIM_ASSIGN_OR_RETURN(auto conn, RedisConnection::open(endpoint, RedisTimeouts{}));
    const std::string hex = history_id_hex(id);
    QIM_RETURN_IF_ERROR(
        conn->run({"HSET", history_messages_key(prefix_, conversation), hex, "not a message"}));
    QIM_RETURN_IF_ERROR(conn->run({"ZADD", history_index_key(prefix_, conversation), "0", hex}));
    return {};
  }
  // HGETALL of the conversation's message hash and ZRANGE of its index, on its instance.
  Result<bool> holds(HistoryStore& current, const ConversationId& conversation,
                     std::string_view bytes) override {
    auto* redis = dynamic_cast<RedisHistoryStore*>(&current);
    if (redis == nullptr) return Error(Errc::kInvalidArgument, "not a RedisHistoryStore");
    QIM_ASSIGN_OR_RETURN(RedisEndpoint endpoint,
                         RedisEndpoint::parse(endpoints_[redis->instance_of(conversation)]));
    QIM_ASSIGN_OR_RETURN(auto conn, RedisConnection::open(endpoint, RedisTimeouts{}));
    QIM_ASSIGN_OR_RETURN(RedisReply all, conn->run({"HGETALL", history_messages_key(prefix_, conversation)}));
    QIM_ASSIGN_OR_RETURN(RedisReply index,
                         conn->run({"ZRANGE", history_index_key(prefix_, conversation), "0", "-1"}));
    for (const RedisReply* r : {&all, &index}) {
      for (const RedisReply& e : r->elements) {
        if (e.str.find(bytes) != std::string::npos) return true;
      }
    }
    return false;
  }

 private:
  std::vector<std::string> endpoints_;
  std::string prefix_;
};

}  // namespace

HistoryFixture history_fixture() {
  HistoryFixture f;
  f.name = "redis";
  f.unavailable = []() -> std::optional<std::string> {
    if (test_redis_endpoints().empty()) return std::string(kTestRedisSkipMessage);
    return std::nullopt;
  };
  f.make_harness = []() -> Result<std::unique_ptr<HistoryHarness>> {
    return std::unique_ptr<HistoryHarness>(
        std::make_unique<RedisHarness>(test_redis_endpoints(), unique_test_prefix("history")));
  };
  return f;
}

}  // namespace qim::test
