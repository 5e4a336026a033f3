// The redis inbox under the inbox suites, beside the redis mailbox, against the instances of
// QIM_TEST_REDIS=host:port[,...]. Each harness is a key prefix of its own; destroying it deletes that
// prefix only (never a FLUSHALL of a shared Redis). A restart opens a new backend (new connections, its
// scripts loaded again) over the same keys; several may be open at once (a stale owner's beside the new
// owner's), as with the redis mailbox.
#include "inbox/redis/redis_inbox_backend.h"
#include "inbox/tests/inbox_fixture.h"
#include "mailbox/redis/redis_test_env.h"

namespace qim::test {

namespace {

class RedisInboxHarness final : public InboxHarness {
 public:
  RedisInboxHarness(std::vector<std::string> endpoints, std::string prefix)
      : endpoints_(std::move(endpoints)), prefix_(std::move(prefix)) {}
  ~RedisInboxHarness() override {
    (void)delete_test_prefix(endpoints_, prefix_);
  }  // best effort, prefix only

  Result<std::unique_ptr<InboxBackend>> open(const BackendContext& context) override {
    RedisInboxOptions options;
    options.endpoints = endpoints_;
    options.key_prefix = prefix_;
    return open_redis_inbox_backend(context, options);
  }

 private:
  std::vector<std::string> endpoints_;
  std::string prefix_;
};

}  // namespace

InboxFixture redis_inbox_fixture() {
  InboxFixture f;
  f.name = "redis";
  f.mailbox = redis_fixture();
  f.property_runs = 6;  // each history is thousands of round trips; QIM_PROPERTY_RUNS=30 for more
  f.unavailable = []() -> std::optional<std::string> {
    if (test_redis_endpoints().empty()) return std::string(kTestRedisSkipMessage);
    return std::nullopt;
  };
  f.make_harness = []() -> Result<std::unique_ptr<InboxHarness>> {
    return std::unique_ptr<InboxHarness>(
        std::make_unique<RedisInboxHarness>(test_redis_endpoints(), unique_test_prefix("inbox")));
  };
  return f;
}

}  // namespace qim::test
