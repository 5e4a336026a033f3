#include "inbox/redis/redis_inbox_scripts.h"

#include <array>
#include <string>

namespace qim {

namespace {

constexpr std::string_view kHelpers = R"lua(
-- a > b for two 16-hex-digit values, compared as two exact 32-bit halves
local function hex_gt(a, b)
  local ah, bh = tonumber(string.sub(a, 1, 8), 16), tonumber(string.sub(b, 1, 8), 16)
  if ah ~= bh then return ah > bh end
  return tonumber(string.sub(a, 9, 16), 16) > tonumber(string.sub(b, 9, 16), 16)
end
local function is_hex16(s)
  return type(s) == 'string' and #s >= 16 and string.find(string.sub(s, 1, 16), '^[0-9a-f]+$') ~= nil
end
-- the u64 LE expiry (ms, below 2^53: exact) at byte i of s
local function expiry_at(s, i)
  local e = 0
  for k = i + 7, i, -1 do e = e * 256 + string.byte(s, k) end
  return e
end
-- drops the rows of one (user, conversation) whose expiry is at or before now (at most `most`; nil: all)
local function purge(ix, iu, iv, ie, now, most)
  local gone
  if most then
    gone = redis.call('ZRANGEBYSCORE', ie, '-inf', now, 'LIMIT', 0, most)
  else
    gone = redis.call('ZRANGEBYSCORE', ie, '-inf', now)
  end
  for i = 1, #gone, 1000 do
    local last = math.min(i + 999, #gone)
    redis.call('ZREM', ix, unpack(gone, i, last))
    redis.call('ZREM', iu, unpack(gone, i, last))
    redis.call('HDEL', iv, unpack(gone, i, last))
    redis.call('ZREM', ie, unpack(gone, i, last))
  end
  return #gone
end
)lua";

constexpr std::string_view kPutRows = R"lua(
local n = #KEYS / 6
if n < 1 or #KEYS ~= 6 * n or #ARGV ~= 3 + 4 * n then
  return redis.error_reply('QIM_INVARIANT put_rows got ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local ttl, expiry, now = ARGV[1], ARGV[2], ARGV[3]
local convs, users = {}, {}
for i = 1, n do
  local ic, ix, iu, iv, ie, ia = KEYS[6 * i - 5], KEYS[6 * i - 4], KEYS[6 * i - 3], KEYS[6 * i - 2],
                                 KEYS[6 * i - 1], KEYS[6 * i]
  local hex, counts, conv, value = ARGV[4 * i], ARGV[4 * i + 1], ARGV[4 * i + 2], ARGV[4 * i + 3]
  if not convs[ix] then
    purge(ix, iu, iv, ie, now, 16)  -- kPurgePerWrite
    convs[ix] = {iu, iv, ie}
  end
  users[ic] = ia
  redis.call('ZADD', ix, 0, hex)
  if counts == '1' then redis.call('ZADD', iu, 0, hex) end
  redis.call('HSET', iv, hex, value)
  redis.call('ZADD', ie, expiry, hex)
  -- the conversation row: a monotonic maximum by seq (an equal seq is the same entry: its expiry refreshes),
  -- and its activity position moved with it (docs/adr/0089): exact, so a reader meets no stale position
  local row = redis.call('HGET', ic, conv)
  if row and not is_hex16(row) then
    return redis.error_reply('QIM_CORRUPT conversation row ' .. conv .. ' of ' .. ic .. ' has no seq')
  end
  if not row or not hex_gt(string.sub(row, 1, 16), hex) then
    redis.call('HSET', ic, conv, hex .. value)
    if row and string.sub(row, 1, 16) ~= hex then redis.call('ZREM', ia, string.sub(row, 1, 16) .. conv) end
    redis.call('ZADD', ia, 0, hex .. conv)
  end
end
-- as the mailbox's keys: a (user, conversation) with no write for the entry TTL disappears on its own
for ix, rest in pairs(convs) do
  redis.call('PEXPIRE', ix, ttl)
  for _, k in ipairs(rest) do redis.call('PEXPIRE', k, ttl) end
end
for ic, ia in pairs(users) do
  redis.call('PEXPIRE', ic, ttl)
  redis.call('PEXPIRE', ia, ttl)
end
return n
)lua";

constexpr std::string_view kReadIndex = R"lua(
purge(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], nil)
local members = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[2], ARGV[3], 'LIMIT', 0, ARGV[4])
local out = {}
for i = 1, #members, 1000 do
  local last = math.min(i + 999, #members)
  local values = redis.call('HMGET', KEYS[3], unpack(members, i, last))
  for k = 1, last - i + 1 do
    local v = values[k]
    if not v then
      return redis.error_reply('QIM_CORRUPT index row ' .. members[i + k - 1] .. ' of ' .. KEYS[1] .. ' has no value')
    end
    out[#out + 1] = members[i + k - 1]
    out[#out + 1] = v
  end
end
return out
)lua";

constexpr std::string_view kCountUnread = R"lua(
purge(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], nil)
local n = redis.call('ZLEXCOUNT', KEYS[2], ARGV[2], ARGV[3])
local cap = tonumber(ARGV[4])
if n > cap then return cap end
return n
)lua";

constexpr std::string_view kRefreshRow = R"lua(
local now = tonumber(ARGV[2])
purge(KEYS[2], KEYS[3], KEYS[4], KEYS[5], now, nil)
local row = redis.call('HGET', KEYS[1], ARGV[1])
if row and #row >= 24 and expiry_at(row, 17) > now then return row end
if row then redis.call('ZREM', KEYS[6], string.sub(row, 1, 16) .. ARGV[1]) end
local top = redis.call('ZREVRANGEBYLEX', KEYS[2], '+', '-', 'LIMIT', 0, 1)
if #top == 0 then
  if row then redis.call('HDEL', KEYS[1], ARGV[1]) end
  return false
end
local v = redis.call('HGET', KEYS[4], top[1])
if not v then
  return redis.error_reply('QIM_CORRUPT index row ' .. top[1] .. ' of ' .. KEYS[2] .. ' has no value')
end
row = top[1] .. v
redis.call('HSET', KEYS[1], ARGV[1], row)
redis.call('ZADD', KEYS[6], 0, top[1] .. ARGV[1])
return row
)lua";

// The positions of a user older than this index (kept before docs/adr/0089) are built once from the rows.
constexpr std::string_view kReadActivity = R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then
  local all = redis.call('HGETALL', KEYS[2])
  for i = 1, #all, 2 do
    if is_hex16(all[i + 1]) then redis.call('ZADD', KEYS[1], 0, string.sub(all[i + 1], 1, 16) .. all[i]) end
  end
  local ttl = redis.call('PTTL', KEYS[2])
  if #all > 0 and ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
end
return redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2], 'LIMIT', 0, ARGV[3])
)lua";

constexpr std::string_view kRaiseCell = R"lua(
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  if not is_hex16(cur) then
    return redis.error_reply('QIM_CORRUPT ' .. KEYS[1] .. ' field ' .. ARGV[1] .. ' is not 16 hex digits')
  end
  if not hex_gt(ARGV[2], cur) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
)lua";

constexpr std::string_view kPutSetting = R"lua(
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  if not is_hex16(cur) then
    return redis.error_reply('QIM_CORRUPT ' .. KEYS[1] .. ' field ' .. ARGV[1] .. ' has no version')
  end
  if not hex_gt(ARGV[2], cur) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
)lua";

struct ScriptText {
  std::string_view name;
  std::string_view body;
};

constexpr std::array<ScriptText, kInboxScriptCount> kScripts = {{
    {"inbox_put_rows", kPutRows},
    {"inbox_read_index", kReadIndex},
    {"inbox_count_unread", kCountUnread},
    {"inbox_refresh_row", kRefreshRow},
    {"inbox_raise_cell", kRaiseCell},
    {"inbox_put_setting", kPutSetting},
    {"inbox_read_activity", kReadActivity},
}};

}  // namespace

std::string_view inbox_script_name(InboxScript script) {
  return kScripts[static_cast<size_t>(script)].name;
}

std::string_view inbox_script_source(InboxScript script) {
  static const std::array<std::string, kInboxScriptCount> all = [] {
    std::array<std::string, kInboxScriptCount> out;
    for (size_t i = 0; i < kInboxScriptCount; ++i) {
      out[i] = "-- qim inbox: " + std::string(kScripts[i].name) + "\n" + std::string(kHelpers) +
               std::string(kScripts[i].body);
    }
    return out;
  }();
  return all[static_cast<size_t>(script)];
}

}  // namespace qim
