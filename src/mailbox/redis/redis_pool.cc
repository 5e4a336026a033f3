#include "mailbox/redis/redis_pool.h"

#include <chrono>

#include "mailbox/redis/redis_scripts.h"

namespace qim {

RedisPool::Lease::~Lease() {
  if (conn_) pool_->release(std::move(conn_));
}

RedisPool::RedisPool(RedisEndpoint endpoint, RedisTimeouts timeouts, uint32_t size)
    : endpoint_(std::move(endpoint)), timeouts_(timeouts), size_(size == 0 ? 1 : size) {}

Result<RedisPool::Lease> RedisPool::acquire() {
  std::unique_lock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + timeouts_.command;
  while (idle_.empty() && open_ >= size_) {
    if (freed_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() && open_ >= size_) {
      return Error(Errc::kTimeout, "redis " + endpoint_.to_string() + ": all " + std::to_string(size_) +
                                       " connections stayed busy for " +
                                       std::to_string(timeouts_.command.count()) + " ms");
    }
  }
  while (!idle_.empty()) {
    auto conn = std::move(idle_.back());
    idle_.pop_back();
    if (conn->still_open()) return Lease(this, std::move(conn));
    --open_;  // closed by the server while idle: drop it and try the next, or open a new one
  }
  ++open_;  // reserve the slot, then connect without holding the lock
  lock.unlock();
  auto conn = RedisConnection::open(endpoint_, timeouts_);
  if (!conn.ok()) {
    lock.lock();
    --open_;
    freed_.notify_one();
    return conn.error();
  }
  return Lease(this, std::move(conn).value());
}

void RedisPool::release(std::unique_ptr<RedisConnection> conn) {
  std::lock_guard lock(mu_);
  if (conn->broken()) {
    --open_;  // dropped: the next acquire opens a fresh one
  } else {
    idle_.push_back(std::move(conn));
  }
  freed_.notify_one();
}

Result<std::vector<std::unique_ptr<RedisPool>>> open_pinged_pools(const std::vector<std::string>& endpoints,
                                                                  RedisTimeouts timeouts, uint32_t size) {
  std::vector<std::unique_ptr<RedisPool>> pools;
  for (const auto& text : endpoints) {
    QIM_ASSIGN_OR_RETURN(RedisEndpoint endpoint, RedisEndpoint::parse(text));
    auto pool = std::make_unique<RedisPool>(endpoint, timeouts, size);
    QIM_ASSIGN_OR_RETURN(auto conn, pool->acquire());
    QIM_ASSIGN_OR_RETURN(RedisReply pong, conn->run({"PING"}));
    if (pong.is_error()) return redis_reply_error(pong, endpoint);
    pools.push_back(std::move(pool));
  }
  return pools;
}

}  // namespace qim
