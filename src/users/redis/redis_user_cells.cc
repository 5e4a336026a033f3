#include "users/redis/redis_user_cells.h"

#include <charconv>

namespace qim {

namespace {

// KEYS: the hash, the counter, the log. ARGV: the field, the stamp, the value. The stamp of a stored value
// is its bytes 2..9, big-endian (encode_user_record); ms since the epoch fit a Lua number exactly.
constexpr const char* kPutScript = R"(
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old and string.len(old) >= 9 then
  local s = 0
  for i = 2, 9 do s = s * 256 + string.byte(old, i) end
  if s >= tonumber(ARGV[2]) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
local n = redis.call('INCR', KEYS[2])
redis.call('ZADD', KEYS[3], n, ARGV[1])
return 1)";

// KEYS: the hash, the counter, the log. ARGV: the cursor. Answers {counter, value...}: every cell when
// the cursor is 0 or ahead of the counter (the instance forgot), else those written after the cursor.
constexpr const char* kChangesScript = R"(
local n = tonumber(redis.call('GET', KEYS[2]) or '0')
local c = tonumber(ARGV[1])
local out = {tostring(n)}
if c <= 0 or c > n then
  table.insert(out, 'all')
  for _, v in ipairs(redis.call('HVALS', KEYS[1])) do table.insert(out, v) end
  return out
end
table.insert(out, 'since')
for _, f in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[1], '+inf')) do
  local v = redis.call('HGET', KEYS[1], f)
  if v then table.insert(out, v) end
end
return out)";

Status reply_error(const RedisReply& r, std::string_view what) {
  if (r.is_error()) return Error(Errc::kTransport, "user registry: " + std::string(what) + ": " + r.str);
  return {};
}

}  // namespace

Result<std::unique_ptr<RedisUserCells>> RedisUserCells::create(const RoutingOptions& options) {
  QIM_ASSIGN_OR_RETURN(auto redis, RoutingRedis::create(options));
  auto cells = std::make_unique<RedisUserCells>(*redis);
  cells->owned_ = std::move(redis);
  return cells;
}

std::string RedisUserCells::key(std::string_view suffix) const {
  return redis_.keys().prefix + "users" + std::string(suffix);
}

Result<bool> RedisUserCells::put(const std::string& field, int64_t stamp, const std::string& value) {
  const RedisCommand cmd{
      "EVAL", kPutScript, "3", key(""), key(":seq"), key(":log"), field, std::to_string(stamp), value};
  QIM_ASSIGN_OR_RETURN(auto replies, redis_.run(0, {&cmd, 1}));
  QIM_RETURN_IF_ERROR(reply_error(replies[0], "writing " + field));
  if (replies[0].kind != RedisReply::Kind::kInteger)
    return Error(Errc::kTransport, "user registry: unexpected reply writing " + field);
  return replies[0].integer == 1;
}

Result<UserCellChanges> RedisUserCells::changed_since(int64_t cursor) {
  const RedisCommand cmd{"EVAL",      kChangesScript,        "3", key(""), key(":seq"),
                         key(":log"), std::to_string(cursor)};
  QIM_ASSIGN_OR_RETURN(auto replies, redis_.run(0, {&cmd, 1}));
  const RedisReply& r = replies[0];
  QIM_RETURN_IF_ERROR(reply_error(r, "reading the changes"));
  if (r.kind != RedisReply::Kind::kArray || r.elements.size() < 2)
    return Error(Errc::kTransport, "user registry: unexpected reply reading the changes");
  UserCellChanges out;
  const std::string& n = r.elements[0].str;
  auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), out.cursor);
  if (ec != std::errc() || end != n.data() + n.size())
    return Error(Errc::kTransport, "user registry: the counter '" + n + "' is not a number");
  out.everything = r.elements[1].str == "all";
  for (size_t i = 2; i < r.elements.size(); ++i) out.values.push_back(r.elements[i].str);
  return out;
}

}  // namespace qim
