#include "delivery/redis/routing_test_env.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "mailbox/redis/redis_connection.h"
#include "mailbox/redis/redis_test_env.h"

namespace qim::testing {

namespace fs = std::filesystem;

std::vector<std::string> test_routing_endpoints() {
  std::vector<std::string> out;
  const char* env = std::getenv(std::string(kTestRoutingRedisVariable).c_str());
  if (env == nullptr) return out;
  std::string_view rest(env);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return out;
}

ChildRedis::ChildRedis() {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const fs::path candidate = fs::path(std::string(rest.substr(0, colon))) / "redis-server";
    if (::access(candidate.c_str(), X_OK) == 0) {
      binary_ = candidate.string();
      break;
    }
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  port_ = unused_loopback_port();
  dir_ = fs::temp_directory_path() /
         ("qim-routing-redis-" + std::to_string(::getpid()) + "-" + std::to_string(port_));
  fs::create_directories(dir_);
}

ChildRedis::~ChildRedis() {
  crash();
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

bool ChildRedis::start() {
  if (binary_.empty()) return false;
  const std::string port = std::to_string(port_), dir = dir_.string(), log = (dir_ / "redis.log").string();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::execl(binary_.c_str(), binary_.c_str(), "--port", port.c_str(), "--bind", "127.0.0.1", "--dir",
            dir.c_str(), "--save", "", "--appendonly", "no", "--logfile", log.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    auto conn = RedisConnection::open(*RedisEndpoint::parse(endpoint()), RedisTimeouts{});
    if (conn.ok()) {
      auto pong = (*conn)->run({"PING"});
      if (pong.ok() && pong->str == "PONG") return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void ChildRedis::crash() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::vector<UserId> users_of_shard_zero(const ShardMap& shards, size_t n) {
  std::vector<UserId> out;
  for (int i = 0; out.size() < n; ++i) {
    UserId u = UserId::parse("user" + std::to_string(i)).value();
    if (shards.shard_of(u).value == 0) out.push_back(u);
  }
  return out;
}

}  // namespace qim::testing
