#pragma once
// The daily upload budget (attachments/upload_budget.h) in the routing Redis every gateway of a distributed
// deployment shares (delivery/redis/routing_options.h; docs/adr/0158). One hash per user and UTC day, on
// the user's routing instance:
//   <prefix>attach:<day>:<user>   "bytes" -> the bytes granted that day; "u:<upload id>" -> its bytes, one
//                                 field per upload granted (their count is the day's uploads)
// One Lua script per charge decides and writes atomically: an upload id already in the hash answers
// kRepeated and adds nothing (so a retried charge is counted once, and no counter is ever incremented
// without its upload's field); else both limits are checked against the hash and, if they hold, the field
// and "bytes" are written together. The hash expires kBudgetGraceMs after the end of its day (by the
// charging gateway's clock, as a TTL from now: Redis's own clock decides when it goes): a gateway whose
// clock is behind by less than the grace still finds the day it charges.
//   <prefix>attach-claim:<user>:<client upload id>   "<declaration> <attachment> <expires_at ms>": a client's
//                                 claim (charge_claimed, docs/adr/0161), on the same instance as the user's
//                                 day, so one script decides the claim and the charge together; it expires
//                                 kBudgetGraceMs after the claim's expires_at (the script also compares
//                                 expires_at with the caller's now).
// A Redis that does not answer: Transport or Timeout (RoutingRedis), and an error reply (e.g. out of memory)
// is Transport. Thread-safe.

#include <memory>

#include "attachments/upload_budget.h"
#include "delivery/redis/routing_redis.h"

namespace qim::attachments {

inline constexpr int64_t kBudgetGraceMs = 3'600'000;

class RedisUploadBudget final : public UploadBudget {
 public:
  // `redis` must outlive the budget.
  explicit RedisUploadBudget(RoutingRedis& redis) : redis_(redis) {}
  // The same over routing instances of its own (a gateway without routed delivery, tests). Config for bad
  // endpoints; connects lazily.
  static Result<std::unique_ptr<RedisUploadBudget>> create(const RoutingOptions& options);

  Result<BudgetCharge> charge(const UserId& user, std::string_view upload, uint64_t bytes, int64_t now_ms,
                              const UploadLimits& limits) override;

  Result<BudgetCharge> charge_claimed(const UserId& user, const UploadClaim& claim, std::string_view upload,
                                      uint64_t bytes, int64_t now_ms, const UploadLimits& limits) override;

  // The key of `user`'s claim of `client_id` (tests, operators).
  std::string claim_key(const UserId& user, std::string_view client_id) const;
  // The hash of `user`'s UTC day `day` (for tests and operators: HGETALL shows the day's uploads).
  std::string key(const UserId& user, int64_t day) const;
  size_t instance_of(const UserId& user) const { return redis_.instance_of_user(user); }

 private:
  std::unique_ptr<RoutingRedis> owned_;
  RoutingRedis& redis_;
};

}  // namespace qim::attachments
