#include "delivery/redis/redis_send_dedup.h"

#include <spdlog/spdlog.h>
#include <xxhash.h>

#include "core/bytes.h"
#include "core/thread_name.h"

namespace qim {

namespace {

// KEYS[1]: the entry. ARGV: our claim, its TTL (ms). The entry if there is one, else nil with our claim set.
constexpr const char* kBeginScript = R"lua(
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
)lua";

// KEYS[1]: the entry. ARGV[1]: our claim. Deletes the entry only while it is still our claim.
constexpr const char* kReleaseScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
)lua";

constexpr size_t kBatch = 500;

}  // namespace

std::string encode_sent_message(const SentMessage& sent) {
  ByteWriter w;
  w.u8('D');
  w.u64(sent.id.value);
  w.str(sent.conversation.str());
  w.i64(sent.server_time_ms);
  w.u64(sent.fingerprint);
  return w.take();
}

Result<SentMessage> decode_sent_message(std::string_view bytes) {
  ByteReader r(bytes, "send dedup entry");
  QIM_ASSIGN_OR_RETURN(uint8_t tag, r.u8("tag"));
  if (tag != 'D') return r.corrupt("tag", "not a done entry");
  SentMessage s;
  QIM_ASSIGN_OR_RETURN(s.id.value, r.u64("message id"));
  QIM_ASSIGN_OR_RETURN(std::string conversation, r.str("conversation", ConversationId::kMaxBytes));
  auto c = ConversationId::parse(conversation);
  if (!c.ok()) return r.corrupt("conversation", c.error().message());
  s.conversation = std::move(c).value();
  QIM_ASSIGN_OR_RETURN(s.server_time_ms, r.i64("server time"));
  QIM_ASSIGN_OR_RETURN(s.fingerprint, r.u64("fingerprint"));
  QIM_RETURN_IF_ERROR(r.finish());
  return s;
}

RedisSendDedup::RedisSendDedup(RoutingRedis& redis, RedisSendDedupOptions options)
    : redis_(redis), options_(options) {
  thread_ = std::thread([this] {
    set_thread_name("send-dedup");
    run();
  });
}

RedisSendDedup::RedisSendDedup(std::unique_ptr<RoutingRedis> owned, RedisSendDedupOptions options)
    : RedisSendDedup(*owned, options) {
  owned_redis_ = std::move(owned);
}

Result<std::unique_ptr<RedisSendDedup>> RedisSendDedup::create(const RoutingOptions& routing,
                                                               RedisSendDedupOptions options) {
  QIM_ASSIGN_OR_RETURN(auto redis, RoutingRedis::create(routing));
  return std::unique_ptr<RedisSendDedup>(new RedisSendDedup(std::move(redis), options));
}

RedisSendDedup::~RedisSendDedup() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

size_t RedisSendDedup::instance_of(const std::string& key) const {
  return XXH3_64bits(key.data(), key.size()) % redis_.size();
}

std::string RedisSendDedup::claim_token() {
  std::lock_guard lock(mu_);
  return "P" + redis_.options().gateway_id + ":" + std::to_string(++next_claim_);
}

SendDedup::Begin RedisSendDedup::begin(const std::string& key, int64_t now_ms, Waiter waiter) {
  {
    std::lock_guard lock(mu_);
    if (routing_now_ms() < down_until_ms_) {
      waiter(Error(Errc::kTransport, "the shared SEND table (routing Redis) is unreachable; retry"));
      return Begin{Kind::kWaiting, std::nullopt};
    }
  }
  const std::string token = claim_token();
  const size_t instance = instance_of(key);
  RedisCommand cmd{"EVAL",         kBeginScript, "1",
                   redis_key(key), token,        std::to_string(options_.claim_ttl.count())};
  auto replies = redis_.run(instance, std::span(&cmd, 1));
  if (!replies.ok() || replies->front().is_error()) {
    Error e = replies.ok() ? Error(Errc::kTransport, "redis " + redis_.endpoint(instance).to_string() + ": " +
                                                         replies->front().str)
                           : replies.error();
    {
      std::lock_guard lock(mu_);
      down_until_ms_ = routing_now_ms() + options_.down_backoff.count();
    }
    spdlog::warn("send dedup: {}", e.to_string());
    waiter(e);
    return Begin{Kind::kWaiting, std::nullopt};
  }
  const RedisReply& r = replies->front();
  if (r.is_nil()) {
    std::lock_guard lock(mu_);
    claims_[key] = token;
    return Begin{Kind::kFirst, std::nullopt};
  }
  if (!r.str.empty() && r.str[0] == 'D') {
    auto sent = decode_sent_message(r.str);
    if (!sent.ok()) {
      waiter(sent.error());
      return Begin{Kind::kWaiting, std::nullopt};
    }
    if (now_ms - sent->server_time_ms <= options_.window_ms) return Begin{Kind::kDone, *sent};
    // Outside the window: a new message (as in memory). Our claim replaces the old entry.
    RedisCommand claim{"SET", redis_key(key), token, "PX", std::to_string(options_.claim_ttl.count())};
    auto set = redis_.run(instance, std::span(&claim, 1));
    if (!set.ok() || set->front().is_error()) {
      waiter(set.ok() ? Error(Errc::kTransport, set->front().str) : set.error());
      return Begin{Kind::kWaiting, std::nullopt};
    }
    std::lock_guard lock(mu_);
    claims_[key] = token;
    return Begin{Kind::kFirst, std::nullopt};
  }
  // Somebody's claim: wait for its outcome.
  std::lock_guard lock(mu_);
  waits_++;
  new_waiting_.push_back(
      Waiting{key, std::move(waiter),
              std::chrono::steady_clock::now() + options_.claim_ttl + options_.poll_interval});
  cv_.notify_all();
  return Begin{Kind::kWaiting, std::nullopt};
}

void RedisSendDedup::complete(const std::string& key, const Result<SentMessage>& outcome) {
  std::lock_guard lock(mu_);
  Write w;
  w.key = key;
  if (outcome.ok()) w.done = *outcome;
  if (auto it = claims_.find(key); it != claims_.end()) {
    w.token = it->second;
    claims_.erase(it);
  }
  w.give_up = std::chrono::steady_clock::now() + options_.claim_ttl;
  writes_.push_back(std::move(w));
  cv_.notify_all();
}

void RedisSendDedup::record(const std::string& key, const SentMessage& sent) {
  std::lock_guard lock(mu_);
  Write w;
  w.key = key;
  w.done = sent;
  w.only_if_absent = true;
  w.give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  writes_.push_back(std::move(w));
  cv_.notify_all();
}

void RedisSendDedup::flush() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return writes_.empty() && writing_ == 0; });
}

uint64_t RedisSendDedup::waits() const {
  std::lock_guard lock(mu_);
  return waits_;
}

uint64_t RedisSendDedup::claims_expired() const {
  std::lock_guard lock(mu_);
  return expired_;
}

void RedisSendDedup::write_batch(std::vector<Write>& writes) {
  std::vector<std::vector<Write*>> by_instance(redis_.size());
  for (auto& w : writes) by_instance[instance_of(w.key)].push_back(&w);
  const std::string window = std::to_string(options_.window_ms);
  std::vector<Write> retry;
  for (size_t i = 0; i < by_instance.size(); ++i) {
    for (size_t start = 0; start < by_instance[i].size(); start += kBatch) {
      const size_t end = std::min(by_instance[i].size(), start + kBatch);
      std::vector<RedisCommand> cmds;
      for (size_t k = start; k < end; ++k) {
        const Write& w = *by_instance[i][k];
        if (w.done) {
          RedisCommand set{"SET", redis_key(w.key), encode_sent_message(*w.done), "PX", window};
          if (w.only_if_absent) set.push_back("NX");
          cmds.push_back(std::move(set));
        } else {
          cmds.push_back({"EVAL", kReleaseScript, "1", redis_key(w.key), w.token});
        }
      }
      auto replies = redis_.run(i, cmds);
      bool failed = !replies.ok();
      for (size_t k = 0; !failed && k < replies->size(); ++k) failed = (*replies)[k].is_error();
      if (!failed) continue;
      const auto now = std::chrono::steady_clock::now();
      for (size_t k = start; k < end; ++k) {
        Write& w = *by_instance[i][k];
        if (now < w.give_up) {
          retry.push_back(std::move(w));
        } else if (w.done && !w.only_if_absent) {
          // The claim expires: a retry after that appends again (the documented window).
          spdlog::error("send dedup: the outcome of a SEND was not recorded in the shared table: {}",
                        replies.ok() ? "error reply" : replies.error().to_string());
        }
      }
    }
  }
  if (!retry.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // Redis is away: do not spin
    std::lock_guard lock(mu_);
    for (auto& w : retry) writes_.push_front(std::move(w));
  }
}

void RedisSendDedup::poll_waiting(std::vector<Waiting>& waiting) {
  if (waiting.empty()) return;
  std::vector<std::vector<size_t>> by_instance(redis_.size());
  for (size_t k = 0; k < waiting.size(); ++k) by_instance[instance_of(waiting[k].key)].push_back(k);
  std::vector<std::optional<Result<SentMessage>>> outcome(waiting.size());
  const auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < by_instance.size(); ++i) {
    if (by_instance[i].empty()) continue;
    std::vector<RedisCommand> cmds;
    for (size_t k : by_instance[i]) cmds.push_back({"GET", redis_key(waiting[k].key)});
    auto replies = redis_.run(i, cmds);
    for (size_t n = 0; n < by_instance[i].size(); ++n) {
      const size_t k = by_instance[i][n];
      const bool late = now > waiting[k].deadline;
      if (!replies.ok() || (*replies)[n].is_error()) {
        if (late)
          outcome[k] = Result<SentMessage>(replies.ok() ? Error(Errc::kTransport, (*replies)[n].str)
                                                        : replies.error());
        continue;
      }
      const RedisReply& r = (*replies)[n];
      if (r.is_nil()) {
        std::lock_guard lock(mu_);
        expired_++;
        outcome[k] = Result<SentMessage>(
            Error(Errc::kTransport,
                  "the first SEND with this client_msg_id did not complete (it failed, or its gateway "
                  "stopped mid-append); send it again"));
      } else if (!r.str.empty() && r.str[0] == 'D') {
        outcome[k] = decode_sent_message(r.str);
      } else if (late) {
        outcome[k] = Result<SentMessage>(Error(
            Errc::kTimeout, "the first SEND with this client_msg_id is still being stored; retry later"));
      }
    }
  }
  std::vector<Waiting> still;
  for (size_t k = 0; k < waiting.size(); ++k) {
    if (outcome[k]) {
      waiting[k].waiter(*outcome[k]);
    } else {
      still.push_back(std::move(waiting[k]));
    }
  }
  waiting = std::move(still);
}

void RedisSendDedup::run() {
  std::vector<Waiting> waiting;
  while (true) {
    std::vector<Write> writes;
    bool stopping = false;
    {
      std::unique_lock lock(mu_);
      auto work = [&] { return stopping_ || !writes_.empty() || !new_waiting_.empty(); };
      if (waiting.empty()) {
        cv_.wait(lock, work);  // idle: nothing to poll
      } else {
        cv_.wait_for(lock, options_.poll_interval, work);
      }
      stopping = stopping_;
      while (!writes_.empty()) {
        writes.push_back(std::move(writes_.front()));
        writes_.pop_front();
      }
      writing_ = writes.size();
      for (auto& w : new_waiting_) waiting.push_back(std::move(w));
      new_waiting_.clear();
    }
    if (stopping) {
      // Last chance for what is queued; no retries.
      for (auto& w : writes) w.give_up = std::chrono::steady_clock::now();
    }
    write_batch(writes);
    {
      std::lock_guard lock(mu_);
      writing_ = 0;
      if (stopping) writes_.clear();
    }
    cv_.notify_all();
    poll_waiting(waiting);
    if (stopping) {
      for (auto& w : waiting) w.waiter(Error(Errc::kTransport, "the gateway is stopping; send it again"));
      return;
    }
  }
}

}  // namespace qim
