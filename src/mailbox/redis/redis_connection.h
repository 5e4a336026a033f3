#pragma once
// One blocking connection to one Redis instance (hiredis), with a connect and a command timeout so a
// down or stuck Redis gives a Transport or Timeout error instead of a hang. Not thread-safe: the pool
// hands each connection to one caller at a time.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

struct redisContext;

namespace qim {

// "host:port" of a Redis instance.
struct RedisEndpoint {
  std::string host;
  int port = 0;

  std::string to_string() const { return host + ":" + std::to_string(port); }
  // Config error naming the text unless it is host:port with a port in 1..65535.
  static Result<RedisEndpoint> parse(std::string_view text);
};

struct RedisTimeouts {
  std::chrono::milliseconds connect{1000};
  std::chrono::milliseconds command{2000};  // per read or write on the socket
};

// An owned copy of a reply, so replies outlive hiredis's buffers.
struct RedisReply {
  enum class Kind { kNil, kString, kStatus, kError, kInteger, kArray };
  Kind kind = Kind::kNil;
  std::string str;  // kString, kStatus, kError
  int64_t integer = 0;
  std::vector<RedisReply> elements;

  bool is_error() const { return kind == Kind::kError; }
  bool is_nil() const { return kind == Kind::kNil; }
};

// A command as its arguments, e.g. {"GET", key}. Arguments are binary-safe.
using RedisCommand = std::vector<std::string>;

class RedisConnection {
 public:
  // Transport (refused, unreachable) or Timeout (no answer within timeouts.connect) naming the endpoint.
  static Result<std::unique_ptr<RedisConnection>> open(const RedisEndpoint& endpoint, RedisTimeouts timeouts);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // For a connection in pub/sub mode (after a SUBSCRIBE sent with run()): the next message the server
  // pushed, waiting at most `wait`; nullopt if none came by then. Transport when the server closed the
  // connection or sent garbage (the connection is broken() from then on).
  Result<std::optional<RedisReply>> read_push(std::chrono::milliseconds wait);

  // Sends every command in one write and reads one reply per command, in order (pipelining: one round
  // trip). Error replies are returned as replies; a socket failure is Transport, a socket timeout
  // Timeout, and leaves the connection broken().
  Result<std::vector<RedisReply>> pipeline(std::span<const RedisCommand> commands);
  // One command: the pipeline of one.
  Result<RedisReply> run(const RedisCommand& command);

  // True once the socket failed; a broken connection is dropped, never reused.
  bool broken() const { return broken_; }
  // For an idle connection (no reply pending): false if the server closed it meanwhile (e.g. a Redis
  // restart), so the pool opens a fresh one instead of failing the caller's first command.
  bool still_open();
  const RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  RedisConnection(RedisEndpoint endpoint, redisContext* context)
      : endpoint_(std::move(endpoint)), c_(context) {}
  Error socket_error(std::string_view doing);

  RedisEndpoint endpoint_;
  redisContext* c_;
  bool broken_ = false;
};

}  // namespace qim
