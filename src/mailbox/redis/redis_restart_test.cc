// Redis going away under the store: a crash (SIGKILL) in the middle of a stream of records loses nothing a
// frontier advance acknowledged, calls made while Redis is down or stuck fail with Transport or Timeout
// instead of hanging, and the store reconnects (and reloads its scripts) once Redis is back.
//
// The test runs its own redis-server (found on PATH; skipped if absent) on a free loopback port with
// appendonly yes + appendfsync always: every write is fsynced before Redis answers, which is the setting
// under which an acknowledged frontier survives a crash (see docs/redis-store.md).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "mailbox/contract_store.h"
#include "mailbox/redis/redis_backend.h"
#include "mailbox/redis/redis_connection.h"
#include "mailbox/redis/redis_test_env.h"

namespace qim {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr milliseconds kConnectTimeout{500};
constexpr milliseconds kCommandTimeout{1000};

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

// A redis-server child of this test process, durable (AOF fsync on every write), on loopback only.
class ChildRedis {
 public:
  ChildRedis(std::string binary, int port, fs::path dir)
      : binary_(std::move(binary)), port_(port), dir_(std::move(dir)) {}
  ~ChildRedis() {
    crash();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }

  void start() {
    const std::string port = std::to_string(port_), dir = dir_.string(), log = (dir_ / "redis.log").string();
    pid_ = ::fork();
    if (pid_ == 0) {
      const int null = ::open("/dev/null", O_RDWR);  // never hold the test's stdout open
      ::dup2(null, 0), ::dup2(null, 1), ::dup2(null, 2);
      ::execl(binary_.c_str(), binary_.c_str(), "--port", port.c_str(), "--bind", "127.0.0.1", "--dir",
              dir.c_str(), "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize",
              "no", "--logfile", log.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }

  // Waits (bounded) until PING answers PONG, i.e. the AOF is loaded.
  bool wait_ready() {
    for (int i = 0; i < 200; ++i) {
      auto conn = RedisConnection::open(*RedisEndpoint::parse(endpoint()), RedisTimeouts{});
      if (conn.ok()) {
        auto pong = (*conn)->run({"PING"});
        if (pong.ok() && pong->str == "PONG") return true;
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    return false;
  }

  // SIGKILL: no shutdown, no final flush; only what was fsynced survives.
  void crash() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  void pause() { ::kill(pid_, SIGSTOP); }
  void resume() { ::kill(pid_, SIGCONT); }

 private:
  std::string binary_;
  int port_;
  fs::path dir_;
  pid_t pid_ = -1;
};

MailboxSeq seq(uint64_t offset) {
  return *compose(Epoch{1}, Offset{offset});
}

template <typename T>
Status status_of(const Result<T>& r) {
  return r.ok() ? Status{} : Status(r.error());
}

bool is_down_error(Errc code) {
  return code == Errc::kTransport || code == Errc::kTimeout;
}

class RedisRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto binary = find_on_path("redis-server");
    if (!binary) GTEST_SKIP() << "redis-server is not on PATH (Debian package redis-server)";
    char dir_template[] = "/tmp/qim-redis-restart-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    redis_ = std::make_unique<ChildRedis>(*binary, unused_loopback_port(), dir_template);
    redis_->start();
    ASSERT_TRUE(redis_->wait_ready()) << "redis-server did not come up on " << redis_->endpoint();
    context_.shards = *ShardMap::create(1);
    context_.clock = std::make_shared<SystemClock>();
    for (int i = 0; i < 10; ++i) users_.push_back(*UserId::parse("user" + std::to_string(i)));
  }

  std::unique_ptr<ContractStore> open_store() {
    RedisStoreOptions options;
    options.endpoints = {redis_->endpoint()};
    options.key_prefix = "restart:";
    options.connect_timeout = kConnectTimeout;
    options.command_timeout = kCommandTimeout;
    auto backend = open_redis_backend(context_, options);
    EXPECT_TRUE(backend.ok()) << backend.error().to_string();
    if (!backend.ok()) return nullptr;
    return std::make_unique<ContractStore>(std::move(backend).value(), context_, std::nullopt);
  }

  // Record `offset`: one message to two users, as the shard worker runs it.
  struct Record {
    Message message;
    std::vector<std::vector<UserId>> chunks;
    DispatchIdentity identity;
  };
  Record record(uint64_t offset) const {
    Record r;
    r.message.id = MessageId{offset};
    r.message.conversation = *ConversationId::parse("d:user0:user1");
    r.message.sender = users_[0];
    r.message.server_time_ms = start_ms_;  // fixed: a replay must carry the same digest
    r.message.body = "message " + std::to_string(offset);
    r.chunks = {{users_[offset % 10], users_[(offset + 3) % 10]}};
    r.identity = make_identity(*DispatchId::parse("d" + std::to_string(offset)), r.message, r.chunks);
    return r;
  }
  Status begin_and_write(MailboxStore& store, const Record& r, uint64_t offset) {
    QIM_ASSIGN_OR_RETURN(BeginOutcome begun,
                         store.begin_dispatch(ShardId{0}, Epoch{1}, r.identity, Offset{offset}));
    if (!begun.needs_entries) return {};
    const ChunkWrite chunk{r.identity.id, 0, &r.message, r.chunks[0]};
    return store.write_chunks(ShardId{0}, Epoch{1}, std::span(&chunk, 1));
  }
  Status process(MailboxStore& store, uint64_t offset) {
    const Record r = record(offset);
    QIM_RETURN_IF_ERROR(begin_and_write(store, r, offset));
    QIM_ASSIGN_OR_RETURN(auto lanes, store.lane_watermarks(ShardId{0}, Epoch{1}));
    QIM_RETURN_IF_ERROR(
        store.finish_dispatch(ShardId{0}, Epoch{1}, r.identity.id, uniform_advances(lanes[0], seq(offset))));
    return {};
  }
  // The worker's retry: replay the record from begin_dispatch until it is finished (bounded).
  void process_until_done(MailboxStore& store, uint64_t offset) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      Status s = process(store, offset);
      if (s.ok()) return;
      ASSERT_TRUE(is_down_error(s.code())) << s.error().to_string();
      std::this_thread::sleep_for(milliseconds(50));
    }
    FAIL() << "record " << offset << " never finished";
  }

  // A call while Redis is down: a clear Transport/Timeout error, reported with how long it took.
  void expect_down(Status s, const char* what, std::chrono::steady_clock::time_point t0) {
    const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0);
    ASSERT_FALSE(s.ok()) << what << " succeeded while Redis was down";
    EXPECT_TRUE(is_down_error(s.code())) << s.error().to_string();
    EXPECT_NE(s.error().message().find(redis_->endpoint()), std::string::npos) << s.error().message();
    std::printf("  %s while Redis was down: %s after %lld ms (command timeout %lld ms)\n", what,
                s.error().to_string().c_str(), static_cast<long long>(took.count()),
                static_cast<long long>(kCommandTimeout.count()));
  }

  // Every record 1..last is readable, once, in each recipient's mailbox.
  void expect_all_readable(MailboxStore& store, uint64_t last) {
    std::map<std::string, std::vector<MailboxSeq>> expected;
    for (uint64_t o = 1; o <= last; ++o) {
      const Record r = record(o);
      for (const auto& u : r.chunks[0]) expected[u.str()].push_back(seq(o));
    }
    size_t total = 0;
    for (const auto& u : users_) {
      auto page = store.read_mailbox(MailboxQuery{u, MailboxSeq{}, 1000});
      ASSERT_TRUE(page.ok()) << page.error().to_string();
      EXPECT_EQ(page->frontier, seq(last));
      std::vector<MailboxSeq> got;
      for (const auto& e : page->entries) got.push_back(e.seq);
      EXPECT_EQ(got, expected[u.str()]) << u.str();
      total += got.size();
    }
    EXPECT_EQ(total, 2 * last);
  }

  std::unique_ptr<ChildRedis> redis_;
  BackendContext context_;
  const int64_t start_ms_ = SystemClock().now_ms();
  std::vector<UserId> users_;
};

TEST_F(RedisRestartTest, ACrashMidStreamLosesNothingAcknowledgedAndDownIsAnErrorNotAHang) {
  constexpr uint64_t kRecords = 40;
  auto store = open_store();
  ASSERT_NE(store, nullptr);
  for (uint64_t offset = 1; offset <= kRecords; ++offset) {
    if (offset == 14) {  // crash between two records
      redis_->crash();
      const auto t0 = std::chrono::steady_clock::now();
      expect_down(process(*store, offset), "a record", t0);
      redis_->start();
      ASSERT_TRUE(redis_->wait_ready());
    }
    if (offset == 27) {  // crash after the entries were written, before the frontier advance
      ASSERT_TRUE(begin_and_write(*store, record(offset), offset).ok());
      redis_->crash();
      const auto t0 = std::chrono::steady_clock::now();
      expect_down(status_of(store->lane_watermarks(ShardId{0}, Epoch{1})), "lane_watermarks", t0);
      redis_->start();
      ASSERT_TRUE(redis_->wait_ready());
    }
    ASSERT_NO_FATAL_FAILURE(process_until_done(*store, offset));
  }
  expect_all_readable(*store, kRecords);

  // A crash right after the last acknowledgement: a new store over the restarted Redis sees it all.
  redis_->crash();
  redis_->start();
  ASSERT_TRUE(redis_->wait_ready());
  auto reopened = open_store();
  ASSERT_NE(reopened, nullptr);
  expect_all_readable(*reopened, kRecords);
  // And the old store carries on once its broken connections are replaced and scripts reloaded.
  ASSERT_NO_FATAL_FAILURE(process_until_done(*store, kRecords + 1));
  expect_all_readable(*reopened, kRecords + 1);
}

TEST_F(RedisRestartTest, AStuckRedisIsATimeoutAfterTheCommandTimeout) {
  auto store = open_store();
  ASSERT_NE(store, nullptr);
  ASSERT_NO_FATAL_FAILURE(process_until_done(*store, 1));
  redis_->pause();  // accepts connections in the kernel but never answers
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = status_of(store->read_mailbox(MailboxQuery{users_[1], MailboxSeq{}, 10}));
  redis_->resume();
  expect_down(s, "read_mailbox", t0);
  EXPECT_EQ(s.code(), Errc::kTimeout);
  ASSERT_NO_FATAL_FAILURE(process_until_done(*store, 2));
  expect_all_readable(*store, 2);
}

}  // namespace
}  // namespace qim
