#include "attachments/redis/redis_upload_budget.h"

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

}  // namespace qim::attachments
