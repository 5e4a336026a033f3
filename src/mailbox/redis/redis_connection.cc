#include "mailbox/redis/redis_connection.h"

#include <hiredis/hiredis.h>

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <cerrno>
#include <charconv>
#include <string_view>

namespace qim {

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  return timeval{static_cast<time_t>(ms.count() / 1000),
                 static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

// hiredis reports a socket timeout as an I/O error whose errno is EAGAIN (read/write) or ETIMEDOUT
// (connect); anything else on the socket is a transport failure.
bool is_timeout(int saved_errno, const redisContext* c) {
  if (c->err != REDIS_ERR_IO) return false;
  if (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK || saved_errno == ETIMEDOUT) return true;
  // errno may have been overwritten by cleanup after the failure; the message was taken from it first.
  const std::string_view what(c->errstr);
  return what.find("timed out") != what.npos || what.find("temporarily unavailable") != what.npos;
}

// hiredis writes with write(2): a server that closed the socket would raise SIGPIPE, whose default action
// ends the process. SIGPIPE from a write goes to the writing thread, so blocking it in this thread for
// the call (and consuming one we caused) turns it into the EPIPE error we report, without touching the
// process-wide disposition.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlock() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{0, 0};
        sigtimedwait(&pipe_, nullptr, &zero);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

RedisReply copy_reply(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.kind = RedisReply::Kind::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.kind = RedisReply::Kind::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.kind = RedisReply::Kind::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = RedisReply::Kind::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = RedisReply::Kind::kArray;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(copy_reply(r->element[i]));
      break;
    default:
      out.kind = RedisReply::Kind::kNil;
  }
  return out;
}

}  // namespace

Result<RedisEndpoint> RedisEndpoint::parse(std::string_view text) {
  const auto colon = text.rfind(':');
  auto bad = [&](const std::string& why) {
    return Error(Errc::kConfig,
                 "redis endpoint '" + std::string(text) + "': " + why + " (expected host:port)");
  };
  if (colon == std::string_view::npos || colon == 0) return bad("no host:port");
  int port = 0;
  const std::string_view digits = text.substr(colon + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port < 1 || port > 65535) {
    return bad("port '" + std::string(digits) + "' is not in 1..65535");
  }
  return RedisEndpoint{std::string(text.substr(0, colon)), port};
}

Result<std::unique_ptr<RedisConnection>> RedisConnection::open(const RedisEndpoint& endpoint,
                                                               RedisTimeouts timeouts) {
  errno = 0;
  redisContext* c =
      redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port, to_timeval(timeouts.connect));
  const int saved_errno = errno;
  if (c == nullptr) return Error(Errc::kTransport, "redis " + endpoint.to_string() + ": out of memory");
  if (c->err != 0) {
    const bool timeout = is_timeout(saved_errno, c);
    Error e(timeout ? Errc::kTimeout : Errc::kTransport,
            "redis " + endpoint.to_string() + ": cannot connect: " + c->errstr +
                (timeout ? " (connect timeout " + std::to_string(timeouts.connect.count()) + " ms)" : ""));
    redisFree(c);
    return e;
  }
  if (redisSetTimeout(c, to_timeval(timeouts.command)) != REDIS_OK) {
    Error e(Errc::kTransport,
            "redis " + endpoint.to_string() + ": cannot set the command timeout: " + c->errstr);
    redisFree(c);
    return e;
  }
  return std::unique_ptr<RedisConnection>(new RedisConnection(endpoint, c));
}

RedisConnection::~RedisConnection() {
  redisFree(c_);
}

Error RedisConnection::socket_error(std::string_view doing) {
  const int saved_errno = errno;
  broken_ = true;
  const bool timeout = is_timeout(saved_errno, c_);
  return Error(timeout ? Errc::kTimeout : Errc::kTransport,
               "redis " + endpoint_.to_string() + ": " + std::string(doing) + ": " +
                   (c_->errstr[0] ? c_->errstr : "connection lost") + (timeout ? " (command timeout)" : ""));
}

Result<std::vector<RedisReply>> RedisConnection::pipeline(std::span<const RedisCommand> commands) {
  if (broken_) return Error(Errc::kTransport, "redis " + endpoint_.to_string() + ": connection is broken");
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& cmd : commands) {
    argv.clear();
    lens.clear();
    for (const auto& a : cmd) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data()) != REDIS_OK) {
      return socket_error("cannot queue a command");
    }
  }
  std::vector<RedisReply> replies;
  replies.reserve(commands.size());
  const SigpipeBlock no_sigpipe;
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    errno = 0;
    if (redisGetReply(c_, &raw) != REDIS_OK || raw == nullptr) {
      return socket_error(commands[i].empty() ? "no reply" : "no reply to " + commands[i][0]);
    }
    auto* reply = static_cast<redisReply*>(raw);
    replies.push_back(copy_reply(reply));
    freeReplyObject(reply);
  }
  return replies;
}

bool RedisConnection::still_open() {
  if (broken_) return false;
  pollfd p{c_->fd, POLLIN, 0};
  // An idle connection has nothing to read; readable means EOF or a reset from the server.
  if (::poll(&p, 1, 0) != 0) broken_ = true;
  return !broken_;
}

Result<std::optional<RedisReply>> RedisConnection::read_push(std::chrono::milliseconds wait) {
  if (broken_) return Error(Errc::kTransport, "redis " + endpoint_.to_string() + ": connection is broken");
  void* raw = nullptr;
  if (redisReaderGetReply(c_->reader, &raw) != REDIS_OK) return socket_error("unreadable push");
  if (raw == nullptr) {
    pollfd p{c_->fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(wait.count()));
    if (n == 0 || (n < 0 && errno == EINTR)) return std::optional<RedisReply>();
    if (n < 0) return socket_error("poll");
    if (redisBufferRead(c_) != REDIS_OK) return socket_error("read");
    if (redisReaderGetReply(c_->reader, &raw) != REDIS_OK) return socket_error("unreadable push");
    if (raw == nullptr) return std::optional<RedisReply>();  // part of a message so far
  }
  auto* reply = static_cast<redisReply*>(raw);
  RedisReply out = copy_reply(reply);
  freeReplyObject(reply);
  return std::optional<RedisReply>(std::move(out));
}

Result<RedisReply> RedisConnection::run(const RedisCommand& command) {
  QIM_ASSIGN_OR_RETURN(auto replies, pipeline(std::span(&command, 1)));
  return std::move(replies.front());
}

}  // namespace qim
