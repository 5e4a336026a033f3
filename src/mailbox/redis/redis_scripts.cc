#include "mailbox/redis/redis_scripts.h"

#include <string>

namespace qim {

namespace {

// Helpers shared by the scripts that read packed W. Lua 5.1 numbers are doubles, so 64-bit lanes are
// compared byte by byte, most significant byte first, never converted to numbers.
constexpr std::string_view kLaneHelpers = R"lua(
local function lane_hex(s, i)
  local t = {}
  for k = i + 7, i, -1 do t[#t + 1] = string.format('%02x', string.byte(s, k)) end
  return table.concat(t)
end
local function cmp_lane(a, i, b, j)
  for k = 7, 0, -1 do
    local x, y = string.byte(a, i + k), string.byte(b, j + k)
    if x ~= y then
      if x < y then return -1 end
      return 1
    end
  end
  return 0
end
local function u32(s, i)
  local b1, b2, b3, b4 = string.byte(s, i, i + 3)
  return b1 + b2 * 256 + b3 * 65536 + b4 * 16777216
end
local function first_odd_lane(s)
  local first = string.sub(s, 1, 8)
  for l = 1, 63 do
    if string.sub(s, 8 * l + 1, 8 * l + 8) ~= first then return l end
  end
  return nil
end
)lua";

constexpr std::string_view kClaimIdentity = R"lua(
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return false
)lua";

constexpr std::string_view kWriteFrontier = R"lua(
local epoch = tonumber(ARGV[1])
local expected, nextw = ARGV[2], ARGV[3]
if not epoch or #expected ~= 512 or #nextw ~= 516 then
  return redis.error_reply('QIM_INVARIANT malformed frontier arguments')
end
local odd = first_odd_lane(expected)
if odd then
  return redis.error_reply('QIM_NONUNIFORM independent lane advance not implemented: expected_previous of lane '
    .. odd .. ' is ' .. lane_hex(expected, 8 * odd + 1) .. ', lane 0 ' .. lane_hex(expected, 1))
end
odd = first_odd_lane(nextw)
if odd then
  return redis.error_reply('QIM_NONUNIFORM independent lane advance not implemented: new W of lane '
    .. odd .. ' is ' .. lane_hex(nextw, 8 * odd + 1) .. ', lane 0 ' .. lane_hex(nextw, 1))
end
local lane_epoch = string.byte(nextw, 7) + string.byte(nextw, 8) * 256
if u32(nextw, 513) ~= epoch or lane_epoch ~= epoch then
  return redis.error_reply('QIM_INVARIANT new W ' .. lane_hex(nextw, 1) .. ' is not of the writer epoch ' .. epoch)
end
local stored = redis.call('GET', KEYS[1])
if stored then
  if #stored ~= 516 then
    return redis.error_reply('QIM_CORRUPT packed W ' .. KEYS[1] .. ' is ' .. #stored .. ' bytes, expected 516')
  end
  local stored_epoch = u32(stored, 513)
  if stored_epoch > epoch then
    return redis.error_reply('QIM_EPOCH_AHEAD packed W ' .. KEYS[1] .. ' is at epoch ' .. stored_epoch
      .. ', above the configured epoch ' .. epoch)
  end
  if first_odd_lane(stored) then
    return redis.error_reply('QIM_CORRUPT packed W ' .. KEYS[1] .. ' has lanes that differ')
  end
  if cmp_lane(stored, 1, expected, 1) ~= 0 then
    return redis.error_reply('QIM_GAP expected previous W ' .. lane_hex(expected, 1) .. ' but ' .. KEYS[1]
      .. ' holds ' .. lane_hex(stored, 1))
  end
  local c = cmp_lane(nextw, 1, stored, 1)
  if c < 0 then
    return redis.error_reply('QIM_BACK new W ' .. lane_hex(nextw, 1) .. ' is below the stored '
      .. lane_hex(stored, 1) .. ': W never moves back')
  end
  if c == 0 then return 0 end
  if stored_epoch < epoch then
    -- the epoch rises: stored is the old epoch's final W (it equals expected); readers bound that
    -- epoch's entries by it, so keep it before packed W forgets it
    redis.call('HSET', KEYS[2], stored_epoch, lane_hex(stored, 1))
  end
elseif expected ~= string.rep('\0', 512) then
  return redis.error_reply('QIM_GAP expected previous W ' .. lane_hex(expected, 1) .. ' but ' .. KEYS[1]
    .. ' holds none (zero)')
end
redis.call('SET', KEYS[1], nextw)
return 1
)lua";

constexpr std::string_view kPutEntries = R"lua(
local n = #KEYS / 5
if n < 1 or #KEYS ~= 5 * n or #ARGV ~= 1 + 4 * n then
  return redis.error_reply('QIM_INVARIANT put_entries got ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local refreshed = {}
for i = 1, n do
  local index, values, ledger, proof, users = KEYS[5 * i - 4], KEYS[5 * i - 3], KEYS[5 * i - 2], KEYS[5 * i - 1], KEYS[5 * i]
  local hex, value, bucket, user = ARGV[4 * i - 2], ARGV[4 * i - 1], ARGV[4 * i], ARGV[4 * i + 1]
  redis.call('ZADD', index, 0, hex)
  redis.call('HSET', values, hex, value)
  -- the bucket proof keeps only its highest member: equal scores order bytewise, i.e. by seq
  redis.call('ZADD', proof, 0, hex)
  redis.call('ZREMRANGEBYRANK', proof, 0, -2)
  -- a bucket new to the ledger lists the user for the shard owner's sweep (once per user and day)
  if redis.call('HSET', ledger, bucket, '1') == 1 then redis.call('ZADD', users, 0, user) end
  if not refreshed[index] then
    redis.call('PEXPIRE', index, ARGV[1])
    redis.call('PEXPIRE', values, ARGV[1])
    refreshed[index] = true
  end
end
return n
)lua";

constexpr std::string_view kRedactEntries = R"lua(
if #ARGV ~= 3 * #KEYS then
  return redis.error_reply('QIM_INVARIANT redact_entries got ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local n = 0
for i = 1, #KEYS do
  local hex, seen, redacted = ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i]
  if redis.call('HGET', KEYS[i], hex) == seen then
    redis.call('HSET', KEYS[i], hex, redacted)
    n = n + 1
  end
end
return n
)lua";

constexpr std::string_view kReadEntries = R"lua(
local min, max = ARGV[1], ARGV[2]
local limit, now = tonumber(ARGV[3]), tonumber(ARGV[4])
local out, found = {}, 0
while found < limit do
  local members = redis.call('ZRANGEBYLEX', KEYS[1], min, max, 'LIMIT', 0, limit)
  if #members == 0 then break end
  local values = redis.call('HMGET', KEYS[2], unpack(members))
  for i = 1, #members do
    local v = values[i]
    if not v or #v < 8 then
      return redis.error_reply('QIM_CORRUPT entry ' .. members[i] .. ' of ' .. KEYS[1] .. ' has no value')
    end
    local expires = 0
    for k = 8, 1, -1 do expires = expires * 256 + string.byte(v, k) end
    if expires > now and found < limit then
      out[#out + 1] = members[i]
      out[#out + 1] = v
      found = found + 1
    end
  end
  if #members < limit then break end
  min = '(' .. members[#members]
end
return out
)lua";

constexpr std::string_view kCommitSweep = R"lua(
local m = tonumber(ARGV[3])
local trim = redis.call('HGET', KEYS[1], 'trim') or '0000000000000000'
if trim ~= ARGV[1] then
  return redis.error_reply('QIM_LEDGER_CHANGED trim of ' .. KEYS[1] .. ' is ' .. trim .. ', the sweep saw ' .. ARGV[1])
end
local live = 0
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, 1) == 'b' then live = live + 1 end
end
local same = live == m
for i = 1, m do
  if same and redis.call('HEXISTS', KEYS[1], ARGV[3 + i]) == 0 then same = false end
end
if not same then
  return redis.error_reply('QIM_LEDGER_CHANGED live buckets of ' .. KEYS[1] .. ' changed during the sweep')
end
redis.call('HSET', KEYS[1], 'trim', ARGV[2])
for i = 4 + m, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end
for i = 4, #KEYS do redis.call('DEL', KEYS[i]) end
-- entries at or below the trim are never read again
local gone = redis.call('ZRANGEBYLEX', KEYS[2], '-', '[' .. ARGV[2])
for i = 1, #gone, 1000 do
  redis.call('HDEL', KEYS[3], unpack(gone, i, math.min(i + 999, #gone)))
end
if #gone > 0 then redis.call('ZREMRANGEBYLEX', KEYS[2], '-', '[' .. ARGV[2]) end
return #gone
)lua";

struct ScriptText {
  std::string_view name;
  std::string_view body;
  bool lane_helpers;
};

constexpr std::array<ScriptText, kRedisScriptCount> kScripts = {{
    {"claim_identity", kClaimIdentity, false},
    {"write_frontier", kWriteFrontier, true},
    {"put_entries", kPutEntries, false},
    {"read_entries", kReadEntries, false},
    {"commit_sweep", kCommitSweep, false},
    {"redact_entries", kRedactEntries, false},
}};

// The full sources, helpers prepended, built once.
const std::array<std::string, kRedisScriptCount>& sources() {
  static const std::array<std::string, kRedisScriptCount> all = [] {
    std::array<std::string, kRedisScriptCount> out;
    for (size_t i = 0; i < kRedisScriptCount; ++i) {
      out[i] = "-- qim mailbox: " + std::string(kScripts[i].name) + "\n" +
               (kScripts[i].lane_helpers ? std::string(kLaneHelpers) : std::string()) +
               std::string(kScripts[i].body);
    }
    return out;
  }();
  return all;
}

struct Code {
  std::string_view prefix;
  Errc errc;
};
constexpr Code kCodes[] = {
    {"QIM_GAP ", Errc::kWatermarkGap},     {"QIM_EPOCH_AHEAD ", Errc::kEpochAhead},
    {"QIM_NONUNIFORM ", Errc::kInvariant}, {"QIM_BACK ", Errc::kInvariant},
    {"QIM_INVARIANT ", Errc::kInvariant},  {"QIM_LEDGER_CHANGED ", Errc::kInvariant},
    {"QIM_CORRUPT ", Errc::kCorruptEntry},
};

}  // namespace

std::string_view script_name(RedisScript script) {
  return kScripts[static_cast<size_t>(script)].name;
}

bool script_is_cas(RedisScript script) {
  return script == RedisScript::kClaimIdentity || script == RedisScript::kWriteFrontier ||
         script == RedisScript::kCommitSweep || script == RedisScript::kRedactEntries;
}

std::string_view script_source(RedisScript script) {
  return sources()[static_cast<size_t>(script)];
}

Error redis_reply_error(const RedisReply& reply, const RedisEndpoint& endpoint) {
  for (const Code& c : kCodes) {
    if (reply.str.starts_with(c.prefix)) return Error(c.errc, reply.str.substr(c.prefix.size()));
  }
  return Error(Errc::kTransport, "redis " + endpoint.to_string() + " answered: " + reply.str);
}

}  // namespace qim
