#include "attachments/redis/redis_upload_budget.h"

#include <algorithm>
#include <string>

#include "core/clock.h"

namespace qim::attachments {

namespace {

// KEYS[1]: the user's hash of the day. ARGV: the upload id, its bytes, the byte limit, the upload limit, the
// hash's TTL (ms). Answers {outcome, bytes used, uploads used}: 0 charged, 1 repeated, 2 over the bytes, 3
// over the uploads. Sizes and limits stay below 2^53, where Lua's numbers are exact.
constexpr const char* kChargeScript = R"lua(
local field = 'u:' .. ARGV[1]
local used = tonumber(redis.call('HGET', KEYS[1], 'bytes') or '0')
local uploads = redis.call('HLEN', KEYS[1]) - redis.call('HEXISTS', KEYS[1], 'bytes')
if redis.call('HEXISTS', KEYS[1], field) == 1 then return {1, used, uploads} end
local bytes = tonumber(ARGV[2])
if used + bytes > tonumber(ARGV[3]) then return {2, used, uploads} end
if uploads + 1 > tonumber(ARGV[4]) then return {3, used, uploads} end
redis.call('HSET', KEYS[1], field, ARGV[2])
used = redis.call('HINCRBY', KEYS[1], 'bytes', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {0, used, uploads + 1}
)lua";

// The same charge under a client's claim (docs/adr/0161). KEYS[1]: the user's hash of the day, KEYS[2]: the
// claim "<declaration> <attachment> <expires_at>". ARGV[1..5] as above, then the declaration, the attachment,
// the claim's expires_at, now (both ms, the gateway's clock) and the claim key's TTL (ms). Answers {outcome,
// bytes used, uploads used, attachment, expires_at} (4: conflict, nothing charged); the claim is written with
// the charge, never without it.
constexpr const char* kClaimedChargeScript = R"lua(
local used = tonumber(redis.call('HGET', KEYS[1], 'bytes') or '0')
local uploads = redis.call('HLEN', KEYS[1]) - redis.call('HEXISTS', KEYS[1], 'bytes')
local claim = redis.call('GET', KEYS[2])
if claim then
  local declaration, attachment, expires = string.match(claim, '^(%S+) (%S+) (%d+)$')
  if expires and tonumber(expires) > tonumber(ARGV[9]) then
    if declaration ~= ARGV[6] then return {4, used, uploads, '', '0'} end
    return {1, used, uploads, attachment, expires}
  end
end
local field = 'u:' .. ARGV[1]
local outcome = 0
if redis.call('HEXISTS', KEYS[1], field) == 1 then
  outcome = 1
else
  local bytes = tonumber(ARGV[2])
  if used + bytes > tonumber(ARGV[3]) then return {2, used, uploads, '', '0'} end
  if uploads + 1 > tonumber(ARGV[4]) then return {3, used, uploads, '', '0'} end
  redis.call('HSET', KEYS[1], field, ARGV[2])
  used = redis.call('HINCRBY', KEYS[1], 'bytes', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  uploads = uploads + 1
end
redis.call('SET', KEYS[2], ARGV[6] .. ' ' .. ARGV[7] .. ' ' .. ARGV[8], 'PX', ARGV[10])
return {outcome, used, uploads, ARGV[7], ARGV[8]}
)lua";

}  // namespace

Result<std::unique_ptr<RedisUploadBudget>> RedisUploadBudget::create(const RoutingOptions& options) {
  QIM_ASSIGN_OR_RETURN(auto redis, RoutingRedis::create(options));
  auto budget = std::make_unique<RedisUploadBudget>(*redis);
  budget->owned_ = std::move(redis);
  return budget;
}

std::string RedisUploadBudget::key(const UserId& user, int64_t day) const {
  return redis_.keys().prefix + "attach:" + std::to_string(day) + ":" + user.str();
}

std::string RedisUploadBudget::claim_key(const UserId& user, std::string_view client_id) const {
  return redis_.keys().prefix + "attach-claim:" + user.str() + ":" + std::string(client_id);
}

Result<BudgetCharge> RedisUploadBudget::charge(const UserId& user, std::string_view upload, uint64_t bytes,
                                               int64_t now_ms, const UploadLimits& limits) {
  QIM_RETURN_IF_ERROR(check_charge_arguments(upload, bytes));
  const int64_t day = now_ms / kDayMs;
  const int64_t ttl_ms = (day + 1) * kDayMs - now_ms + kBudgetGraceMs;
  const size_t instance = redis_.instance_of_user(user);
  const RedisCommand cmd{"EVAL",
                         kChargeScript,
                         "1",
                         key(user, day),
                         std::string(upload),
                         std::to_string(bytes),
                         std::to_string(limits.bytes),
                         std::to_string(limits.uploads),
                         std::to_string(ttl_ms)};
  QIM_ASSIGN_OR_RETURN(auto replies, redis_.run(instance, {&cmd, 1}));
  const RedisReply& r = replies.front();
  const std::string where = "upload budget: redis " + redis_.endpoint(instance).to_string();
  if (r.is_error()) return Error(Errc::kTransport, where + ": " + r.str);
  if (r.kind != RedisReply::Kind::kArray || r.elements.size() != 3)
    return Error(Errc::kTransport, where + ": unexpected reply to the charge");
  for (const RedisReply& e : r.elements)
    if (e.kind != RedisReply::Kind::kInteger || e.integer < 0)
      return Error(Errc::kTransport, where + ": unexpected reply to the charge");
  static constexpr BudgetCharge::Outcome kOutcomes[] = {
      BudgetCharge::Outcome::kCharged, BudgetCharge::Outcome::kRepeated, BudgetCharge::Outcome::kOverBytes,
      BudgetCharge::Outcome::kOverUploads};
  if (r.elements[0].integer > 3) return Error(Errc::kTransport, where + ": unexpected reply to the charge");
  BudgetCharge out;
  out.outcome = kOutcomes[r.elements[0].integer];
  out.bytes_used = static_cast<uint64_t>(r.elements[1].integer);
  out.uploads_used = static_cast<uint64_t>(r.elements[2].integer);
  return out;
}

Result<BudgetCharge> RedisUploadBudget::charge_claimed(const UserId& user, const UploadClaim& claim,
                                                       std::string_view upload, uint64_t bytes,
                                                       int64_t now_ms, const UploadLimits& limits) {
  QIM_RETURN_IF_ERROR(check_claim_arguments(claim, upload, bytes));
  const int64_t day = now_ms / kDayMs;
  const int64_t ttl_ms = (day + 1) * kDayMs - now_ms + kBudgetGraceMs;
  // The key outlives the claim by the grace: a gateway whose clock is behind still finds it (the script
  // compares expires_at with the caller's now).
  const int64_t claim_ttl_ms = std::max<int64_t>(claim.expires_at_ms - now_ms, 1) + kBudgetGraceMs;
  const size_t instance = redis_.instance_of_user(user);
  const RedisCommand cmd{"EVAL",
                         kClaimedChargeScript,
                         "2",
                         key(user, day),
                         claim_key(user, claim.client_id),
                         std::string(upload),
                         std::to_string(bytes),
                         std::to_string(limits.bytes),
                         std::to_string(limits.uploads),
                         std::to_string(ttl_ms),
                         std::string(claim.declaration),
                         std::string(claim.attachment),
                         std::to_string(claim.expires_at_ms),
                         std::to_string(now_ms),
                         std::to_string(claim_ttl_ms)};
  QIM_ASSIGN_OR_RETURN(auto replies, redis_.run(instance, {&cmd, 1}));
  const RedisReply& r = replies.front();
  const std::string where = "upload budget: redis " + redis_.endpoint(instance).to_string();
  const Error unexpected(Errc::kTransport, where + ": unexpected reply to the claimed charge");
  if (r.is_error()) return Error(Errc::kTransport, where + ": " + r.str);
  if (r.kind != RedisReply::Kind::kArray || r.elements.size() != 5) return unexpected;
  for (size_t i = 0; i < 3; ++i)
    if (r.elements[i].kind != RedisReply::Kind::kInteger || r.elements[i].integer < 0) return unexpected;
  if (r.elements[0].integer > 4 || r.elements[3].kind != RedisReply::Kind::kString ||
      r.elements[4].kind != RedisReply::Kind::kString)
    return unexpected;
  static constexpr BudgetCharge::Outcome kOutcomes[] = {
      BudgetCharge::Outcome::kCharged, BudgetCharge::Outcome::kRepeated, BudgetCharge::Outcome::kOverBytes,
      BudgetCharge::Outcome::kOverUploads, BudgetCharge::Outcome::kConflict};
  BudgetCharge out;
  out.outcome = kOutcomes[r.elements[0].integer];
  out.bytes_used = static_cast<uint64_t>(r.elements[1].integer);
  out.uploads_used = static_cast<uint64_t>(r.elements[2].integer);
  if (out.granted()) {
    out.attachment = r.elements[3].str;
    try {
      out.expires_at_ms = std::stoll(r.elements[4].str);
    } catch (...) {
      return unexpected;
    }
  }
  return out;
}

}  // namespace qim::attachments
