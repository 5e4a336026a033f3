// The redis backend under the contract suite, against the instances of QIM_TEST_REDIS=host:port[,...].
// Each harness is a key prefix of its own; destroying the harness deletes that prefix only (never a
// FLUSHALL of a shared Redis). A restart opens a new backend (new connections) over the same keys.
#include "mailbox/redis/redis_backend.h"
#include "mailbox/redis/redis_connection.h"
#include "mailbox/redis/redis_keys.h"
#include "mailbox/redis/redis_test_env.h"
#include "mailbox/tests/backend_fixture.h"

namespace qim::test {

namespace {

class RedisHarness final : public BackendHarness {
 public:
  RedisHarness(std::vector<std::string> endpoints, std::string prefix)
      : endpoints_(std::move(endpoints)), prefix_(std::move(prefix)) {}
  ~RedisHarness() override { (void)delete_test_prefix(endpoints_, prefix_); }  // best effort, prefix only

  Result<std::unique_ptr<StoreBackend>> open(const BackendContext& context) override {
    return open_redis_backend_with_prefix(context, endpoints_, prefix_);
  }

  // The proof key lives on one instance; deleting it everywhere needs no shard arithmetic here.
  Status drop_proof(StoreBackend&, const UserId& user, DayBucket bucket) override {
    const std::string key = RedisKeys(prefix_).proof(user, bucket);
    for (const auto& text : endpoints_) {
      QIM_ASSIGN_OR_RETURN(RedisEndpoint endpoint, RedisEndpoint::parse(text));
      QIM_ASSIGN_OR_RETURN(auto conn, RedisConnection::open(endpoint, RedisTimeouts{}));
      QIM_RETURN_IF_ERROR(conn->run({"DEL", key}));
    }
    return {};
  }

  // Every key of the prefix on every instance, with its values (a hash's fields and values, a sorted
  // set's members, a string).
  Result<bool> engine_holds(StoreBackend&, std::string_view bytes) override {
    auto has = [&](const RedisReply& r) {
      if (r.str.find(bytes) != std::string::npos) return true;
      for (const auto& e : r.elements) {
        if (e.str.find(bytes) != std::string::npos) return true;
      }
      return false;
    };
    for (const auto& text : endpoints_) {
      QIM_ASSIGN_OR_RETURN(RedisEndpoint endpoint, RedisEndpoint::parse(text));
      QIM_ASSIGN_OR_RETURN(auto conn, RedisConnection::open(endpoint, RedisTimeouts{}));
      std::string cursor = "0";
      do {
        QIM_ASSIGN_OR_RETURN(RedisReply page,
                             conn->run({"SCAN", cursor, "MATCH", prefix_ + "*", "COUNT", "1000"}));
        if (page.elements.size() != 2) return Error(Errc::kTransport, "unexpected SCAN reply");
        cursor = page.elements[0].str;
        for (const auto& key : page.elements[1].elements) {
          QIM_ASSIGN_OR_RETURN(RedisReply type, conn->run({"TYPE", key.str}));
          RedisCommand read = {"GET", key.str};
          if (type.str == "hash") read = {"HGETALL", key.str};
          if (type.str == "zset") read = {"ZRANGE", key.str, "0", "-1"};
          QIM_ASSIGN_OR_RETURN(RedisReply value, conn->run(read));
          if (has(value)) return true;
        }
      } while (cursor != "0");
    }
    return false;
  }

 private:
  std::vector<std::string> endpoints_;
  std::string prefix_;
};

}  // namespace

BackendFixture redis_fixture() {
  BackendFixture f;
  f.name = "redis";
  f.property_runs = 10;
  f.limits.no_clock_identity_ttl = "identity TTL is counted by Redis in real time (EX 31 days)";
  f.unavailable = []() -> std::optional<std::string> {
    if (test_redis_endpoints().empty()) return std::string(kTestRedisSkipMessage);
    return std::nullopt;
  };
  f.limits.no_writer_clock = "Redis applies writes in the order it gets them; none carries a time";
  f.make_harness = []() -> Result<std::unique_ptr<BackendHarness>> {
    return std::unique_ptr<BackendHarness>(
        std::make_unique<RedisHarness>(test_redis_endpoints(), unique_test_prefix("contract")));
  };
  return f;
}

}  // namespace qim::test
