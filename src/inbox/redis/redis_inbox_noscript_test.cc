// The inbox's scripts after Redis forgot them (a restart, SCRIPT FLUSH): a call answered NOSCRIPT loads
// its script again on that connection and is sent once more, so the caller never sees the error. Runs its
// own redis-server (found on PATH; skipped if absent) on a loopback port of this slice's range, so flushing
// scripts never disturbs the shared instances.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "inbox/redis/redis_inbox_backend.h"
#include "mailbox/redis/redis_connection.h"

namespace qim {
namespace {

namespace fs = std::filesystem;

constexpr int kPort = 42017;  // the inbox-redis slice's port range is 42000-42099

std::optional<std::string> find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const fs::path candidate = fs::path(std::string(rest.substr(0, colon))) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return std::nullopt;
}

// A redis-server child of this test process, without persistence, on loopback only; killed at the end.
class ChildRedis {
 public:
  ChildRedis(const std::string& binary, int port) : port_(port) {
    const std::string p = std::to_string(port);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 0), ::dup2(null, 1), ::dup2(null, 2);
      ::execl(binary.c_str(), binary.c_str(), "--port", p.c_str(), "--bind", "127.0.0.1", "--save", "",
              "--appendonly", "no", "--daemonize", "no", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~ChildRedis() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  // Bounded wait until PING answers PONG.
  bool wait_ready() const {
    for (int i = 0; i < 200; ++i) {
      auto conn = RedisConnection::open(*RedisEndpoint::parse(endpoint()), RedisTimeouts{});
      if (conn.ok()) {
        auto pong = (*conn)->run({"PING"});
        if (pong.ok() && pong->str == "PONG") return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

 private:
  int port_;
  pid_t pid_ = -1;
};

TEST(RedisInboxNoscriptTest, ScriptsFlushedMeanwhileAreLoadedAgain) {
  const auto binary = find_on_path("redis-server");
  if (!binary) GTEST_SKIP() << "redis-server is not on PATH";
  ChildRedis redis(*binary, kPort);
  ASSERT_TRUE(redis.wait_ready()) << "redis-server did not answer on " << redis.endpoint();

  BackendContext context;
  context.clock = std::make_shared<ManualClock>(20'000 * kDayMs);
  RedisInboxOptions options;
  options.endpoints = {redis.endpoint()};
  options.key_prefix = "noscript:";
  auto backend = open_redis_inbox_backend(context, options);
  ASSERT_TRUE(backend.ok()) << backend.error().to_string();

  const UserId alice = *UserId::parse("alice"), bob = *UserId::parse("bob");
  const ConversationId c = *ConversationId::parse("d:alice:bob");
  auto entry = [&](uint64_t offset) {
    Message m;
    m.id = MessageId{offset};
    m.conversation = c;
    m.sender = bob;
    m.sender_device = *DeviceId::parse("d1");
    m.client_msg_id = "c" + std::to_string(offset);
    m.server_time_ms = 20'000 * kDayMs;
    m.body = "hi";
    return MailboxEntry{alice, *compose(Epoch{1}, Offset{offset}), m};
  };
  const std::vector<MailboxEntry> first = {entry(1)};
  ASSERT_TRUE((*backend)->entries_written(ShardId{0}, Epoch{1}, first).ok());

  auto conn = RedisConnection::open(*RedisEndpoint::parse(redis.endpoint()), RedisTimeouts{});
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE((*conn)->run({"SCRIPT", "FLUSH"}).ok());

  const OpCounts before = (*backend)->counters().snapshot();
  const std::vector<MailboxEntry> second = {entry(2)};
  const auto written = (*backend)->entries_written(ShardId{0}, Epoch{1}, second);
  ASSERT_TRUE(written.ok()) << written.error().to_string();
  // The call answered NOSCRIPT, the load, the call again.
  EXPECT_EQ(((*backend)->counters().snapshot() - before).scripts, 3u);
  ASSERT_TRUE((*conn)->run({"SCRIPT", "FLUSH"}).ok());
  auto n = (*backend)->count_unread(alice, c, MailboxSeq(), MailboxSeq::from_raw(~uint64_t{0}), 999);
  ASSERT_TRUE(n.ok()) << n.error().to_string();
  EXPECT_EQ(*n, 2u);
  ASSERT_TRUE((*conn)->run({"SCRIPT", "FLUSH"}).ok());
  EXPECT_TRUE((*backend)->raise_read_mark(alice, c, *compose(Epoch{1}, Offset{2})).ok());
  EXPECT_EQ(*(*backend)->read_mark(alice, c), *compose(Epoch{1}, Offset{2}));
}

}  // namespace
}  // namespace qim
