#pragma once
// The SEND idempotency table shared by the gateways of a deployment, in the routing Redis instances
// (docs/protocol.md "Idempotent send"): a retry through ANOTHER gateway with the same (sender,
// client_msg_id) gets the same message_id.
//
// One key per (sender, client_msg_id), on the instance chosen by hashing it:
//   "P<gateway id>:<n>"  a claim: that gateway is appending the first SEND (TTL `claim_ttl`);
//   "D<message>"         done: the message it was acknowledged as (TTL the dedup window).
// begin(): one round trip (a script: GET, or SET the claim if there is nothing). Nothing: kFirst (the
// claim is ours). Done: kDone. A claim: kWaiting; a thread polls the key every `poll_interval` until
// it is done (the waiter gets the original), or vanishes (the first failed and released it, or its
// gateway died mid-append and the claim expired: the waiter gets Transport, UNAVAILABLE on the wire, and
// the client's retry appends anew), or `claim_ttl` + `poll_interval` passed (Timeout).
// complete(): done -> SET D (retried while Redis fails, up to the claim TTL); failed -> the claim is
// deleted if it is still ours.
//
// The window this leaves (documented): a gateway that dies after its append was durable but before the
// done entry was written leaves a claim that expires; a retry after that appends the message again (a
// second message_id). The in-memory table does not have this window (it is rebuilt from the Outbox), the
// shared one trades it for retries across gateways. If Redis is unreachable, begin() answers kWaiting
// and the waiter gets the error at once (SEND_ACK is never given without the table's say).
//
// begin() blocks the caller for one round trip (the gateway's io thread; loopback Redis: well under a
// millisecond); after a failure, begin() fails fast for `down_backoff` instead of waiting on Redis.
// Thread-safe.

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "delivery/redis/routing_redis.h"
#include "gateway/send_dedup.h"

namespace qim {

struct RedisSendDedupOptions {
  int64_t window_ms = 86'400'000;                // how long a client_msg_id stays a duplicate
  std::chrono::milliseconds claim_ttl{10'000};   // longest an append may take before a retry may redo it
  std::chrono::milliseconds poll_interval{5};    // how often a waiting duplicate looks again
  std::chrono::milliseconds down_backoff{1000};  // after a Redis failure, fail fast this long
};

// The value of a done entry, and back (CorruptEntry for anything else).
std::string encode_sent_message(const SentMessage& sent);
Result<SentMessage> decode_sent_message(std::string_view bytes);

class RedisSendDedup final : public SendDedup {
 public:
  // `redis` must outlive this object (its gateway id names the claims). Starts the worker thread.
  RedisSendDedup(RoutingRedis& redis, RedisSendDedupOptions options = {});
  // The same over routing instances of its own (what `qim gateway` wires: GatewayDeps::send_dedup, with
  // window_ms = the gateway's dedup window). Config error for bad endpoints; connects lazily.
  static Result<std::unique_ptr<RedisSendDedup>> create(const RoutingOptions& routing,
                                                        RedisSendDedupOptions options = {});
  // Writes what is queued (as far as Redis answers), answers the remaining waiters with an error, stops.
  ~RedisSendDedup() override;
  RedisSendDedup(const RedisSendDedup&) = delete;
  RedisSendDedup& operator=(const RedisSendDedup&) = delete;

  Begin begin(const std::string& key, int64_t now_ms, Waiter waiter) override;
  void complete(const std::string& key, const Result<SentMessage>& outcome) override;
  void record(const std::string& key, const SentMessage& sent) override;

  // Returns once every complete() and record() queued before the call was written (or given up).
  void flush();
  uint64_t waits() const;           // begins that waited for another's claim
  uint64_t claims_expired() const;  // waits that ended because the claim vanished without an outcome

 private:
  struct Write {
    std::string key;
    std::optional<SentMessage> done;  // set: write the done entry; unset: release our claim
    std::string token;                // our claim (to release it)
    bool only_if_absent = false;      // record(): never overwrite
    std::chrono::steady_clock::time_point give_up;
  };
  struct Waiting {
    std::string key;
    Waiter waiter;
    std::chrono::steady_clock::time_point deadline;
  };
  RedisSendDedup(std::unique_ptr<RoutingRedis> owned, RedisSendDedupOptions options);
  std::string redis_key(const std::string& key) const { return redis_.keys().send(key); }
  size_t instance_of(const std::string& key) const;
  std::string claim_token();
  void run();
  void write_batch(std::vector<Write>& writes);
  void poll_waiting(std::vector<Waiting>& waiting);

  std::unique_ptr<RoutingRedis> owned_redis_;  // set by create()
  RoutingRedis& redis_;
  const RedisSendDedupOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Write> writes_;
  std::vector<Waiting> new_waiting_;
  std::unordered_map<std::string, std::string> claims_;  // our claims in flight: key -> token
  uint64_t next_claim_ = 0;
  int64_t down_until_ms_ = 0;
  size_t writing_ = 0;  // writes taken by the worker and not finished
  bool stopping_ = false;
  uint64_t waits_ = 0, expired_ = 0;
  std::thread thread_;
};

}  // namespace qim
