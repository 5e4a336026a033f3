#pragma once
// A bounded pool of blocking connections to one Redis instance. At most `size` connections exist; a
// caller that finds them all busy waits (a queue on a condition variable) up to the command timeout.
// Broken connections are dropped on return, and a new one is opened on demand: that is how the store
// reconnects once Redis is back.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mailbox/redis/redis_connection.h"

namespace qim {

class RedisPool {
 public:
  // A connection on loan; returned to the pool (or dropped if broken) when destroyed.
  class Lease {
   public:
    Lease(RedisPool* pool, std::unique_ptr<RedisConnection> conn) : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    RedisConnection& operator*() const { return *conn_; }
    RedisConnection* operator->() const { return conn_.get(); }

   private:
    RedisPool* pool_;
    std::unique_ptr<RedisConnection> conn_;
  };

  RedisPool(RedisEndpoint endpoint, RedisTimeouts timeouts, uint32_t size);
  RedisPool(const RedisPool&) = delete;
  RedisPool& operator=(const RedisPool&) = delete;

  // An idle connection, a new one if fewer than `size` exist, or the next one returned. Timeout if
  // none frees up within the command timeout; Transport or Timeout if a new connection cannot be opened.
  Result<Lease> acquire();

  const RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  void release(std::unique_ptr<RedisConnection> conn);

  const RedisEndpoint endpoint_;
  const RedisTimeouts timeouts_;
  const uint32_t size_;
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<RedisConnection>> idle_;
  uint32_t open_ = 0;  // connections that exist, idle or on loan, or being opened
};

// One pool per "host:port" of `endpoints`, each pinged once, so a wrong address fails at start rather than
// at the first command. Config for a malformed endpoint; Transport or Timeout naming one that does not
// answer.
Result<std::vector<std::unique_ptr<RedisPool>>> open_pinged_pools(const std::vector<std::string>& endpoints,
                                                                  RedisTimeouts timeouts, uint32_t size);

}  // namespace qim
