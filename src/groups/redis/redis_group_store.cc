#include "groups/redis/redis_group_store.h"

#include <algorithm>
#include <map>

#include "core/conversation.h"
#include "groups/group_codec.h"
#include "mailbox/redis/redis_keys.h"
#include "mailbox/redis/redis_pool.h"
#include "mailbox/redis/redis_scripts.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace {

// KEYS: outcomes hash, meta, members hash, then the index sets of the joined users, then of the left ones.
// ARGV: offset hex, outcome row, meta row ('' when the op leaves meta alone), group id, number of joined
// users, then user, member row pairs. Returns 0 when the offset was decided before (nothing written), 1.
constexpr std::string_view kApplyScript = R"lua(
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
local want = {'hash', 'string', 'hash'}
for k = 1, #KEYS do
  local t = redis.call('TYPE', KEYS[k])['ok']
  local expected = want[k] or 'set'
  if t ~= 'none' and t ~= expected then
    return redis.error_reply('WRONGTYPE ' .. KEYS[k] .. ' is a ' .. t .. ', expected a ' .. expected)
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('SET', KEYS[2], ARGV[3]) end
for i = 6, #ARGV, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end
local joined = tonumber(ARGV[5])
for k = 4, #KEYS do
  if k < 4 + joined then redis.call('SADD', KEYS[k], ARGV[4]) else redis.call('SREM', KEYS[k], ARGV[4]) end
end
return 1
)lua";

// Offsets as the mailbox keys write seqs: 16 hex digits, most significant first (redis_keys.h).
std::string offset_hex(uint64_t v) {
  return seq_hex(MailboxSeq::from_raw(v));
}

Result<RedisReply> checked(RedisReply reply, const RedisEndpoint& endpoint) {
  if (reply.is_error()) return redis_reply_error(reply, endpoint);
  return reply;
}

// A reply that is a WRONGTYPE error reads as a corrupt row: a key of the group holds another type.
Result<RedisReply> row_reply(RedisReply reply, const RedisEndpoint& endpoint, const GroupId& group,
                             std::string_view row) {
  if (reply.is_error() && reply.str.starts_with("WRONGTYPE"))
    return corrupt_group_row(group, row, "the key holds another type (" + reply.str + ")");
  return checked(std::move(reply), endpoint);
}

// The field/value pairs of an HGETALL reply.
Result<std::vector<std::pair<std::string, std::string>>> pairs(RedisReply reply, const GroupId& group,
                                                               std::string_view row) {
  if (reply.kind != RedisReply::Kind::kArray || reply.elements.size() % 2 != 0)
    return corrupt_group_row(group, row, "not a hash");
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(reply.elements.size() / 2);
  for (size_t i = 0; i < reply.elements.size(); i += 2)
    out.emplace_back(std::move(reply.elements[i].str), std::move(reply.elements[i + 1].str));
  return out;
}

}  // namespace

std::string group_meta_key(const std::string& prefix, const GroupId& group) {
  return prefix + "gm:" + group.str();
}
std::string group_members_key(const std::string& prefix, const GroupId& group) {
  return prefix + "gr:" + group.str();
}
std::string group_outcomes_key(const std::string& prefix, const GroupId& group) {
  return prefix + "go:" + group.str();
}
std::string group_index_key(const std::string& prefix, const UserId& user) {
  return prefix + "gu:" + user.str();
}

RedisGroupStore::RedisGroupStore(RedisGroupOptions options, std::vector<std::unique_ptr<RedisPool>> pools)
    : options_(std::move(options)), pools_(std::move(pools)) {}

RedisGroupStore::~RedisGroupStore() = default;

Result<std::unique_ptr<RedisGroupStore>> RedisGroupStore::open(const RedisGroupOptions& options) {
  if (options.endpoints.empty())
    return Error(Errc::kConfig, "the redis group store needs at least one endpoint (QIM_MAILBOX_REDIS)");
  QIM_ASSIGN_OR_RETURN(
      auto pools, open_pinged_pools(options.endpoints, {options.connect_timeout, options.command_timeout},
                                    options.pool_size));
  return std::unique_ptr<RedisGroupStore>(new RedisGroupStore(options, std::move(pools)));
}

size_t RedisGroupStore::instance_of(const GroupId& group) const {
  // The instance of the group's conversation, as the history store places it.
  const std::string conversation = "g:" + group.str();
  return outbox_partition_of(ConversationId::unchecked(conversation), static_cast<uint32_t>(pools_.size()));
}

Result<RedisReply> RedisGroupStore::read_row(const GroupId& group, const RedisCommand& command,
                                             std::string_view row) {
  RedisPool& pool = *pools_[instance_of(group)];
  QIM_ASSIGN_OR_RETURN(auto conn, pool.acquire());
  QIM_ASSIGN_OR_RETURN(RedisReply r, conn->run(command));
  return row_reply(std::move(r), pool.endpoint(), group, row);
}

Status RedisGroupStore::apply(const GroupChange& change) {
  const std::string& p = options_.key_prefix;
  RedisCommand eval{"EVAL", std::string(kApplyScript), ""};
  eval.push_back(group_outcomes_key(p, change.group));
  eval.push_back(group_meta_key(p, change.group));
  eval.push_back(group_members_key(p, change.group));
  for (const auto& u : change.joined) eval.push_back(group_index_key(p, u));
  for (const auto& u : change.left) eval.push_back(group_index_key(p, u));
  eval[2] = std::to_string(eval.size() - 3);  // numkeys
  eval.push_back(offset_hex(change.offset));
  eval.push_back(encode_group_outcome(change.outcome));
  eval.push_back(change.meta ? encode_group_meta(*change.meta) : std::string());
  eval.push_back(change.group.str());
  eval.push_back(std::to_string(change.joined.size()));
  for (const auto& m : change.members) {
    eval.push_back(m.user.str());
    eval.push_back(encode_group_member(m));
  }
  counters_.scripts++;
  RedisPool& pool = *pools_[instance_of(change.group)];
  QIM_ASSIGN_OR_RETURN(auto conn, pool.acquire());
  QIM_ASSIGN_OR_RETURN(RedisReply r, conn->run(eval));
  QIM_ASSIGN_OR_RETURN(r, checked(std::move(r), pool.endpoint()));
  if (r.kind != RedisReply::Kind::kInteger)
    return Error(Errc::kTransport,
                 "redis " + pool.endpoint().to_string() + ": unexpected reply to the group script");
  if (r.integer == 1) {
    counters_.inserts += 1 + change.joined.size();
    counters_.updates += (change.meta ? 1 : 0) + change.members.size() + change.left.size();
  }
  return {};
}

Result<std::optional<GroupMeta>> RedisGroupStore::meta(const GroupId& group) {
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(RedisReply r,
                       read_row(group, {"GET", group_meta_key(options_.key_prefix, group)}, "meta"));
  if (r.is_nil()) return std::optional<GroupMeta>();
  QIM_ASSIGN_OR_RETURN(GroupMeta m, decode_meta_row(group, r.str));
  return std::optional<GroupMeta>(std::move(m));
}

Result<std::optional<GroupMemberRecord>> RedisGroupStore::member(const GroupId& group, const UserId& user) {
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(RedisReply r,
                       read_row(group, {"HGET", group_members_key(options_.key_prefix, group), user.str()},
                                "member " + user.str()));
  if (r.is_nil()) return std::optional<GroupMemberRecord>();
  QIM_ASSIGN_OR_RETURN(GroupMemberRecord m, decode_member_row(group, user.str(), r.str));
  return std::optional<GroupMemberRecord>(std::move(m));
}

Result<std::optional<GroupOpOutcome>> RedisGroupStore::outcome(const GroupId& group, uint64_t offset) {
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(
      RedisReply r,
      read_row(group, {"HGET", group_outcomes_key(options_.key_prefix, group), offset_hex(offset)},
               "outcome at " + std::to_string(offset)));
  if (r.is_nil()) return std::optional<GroupOpOutcome>();
  QIM_ASSIGN_OR_RETURN(GroupOpOutcome o, decode_outcome_row(group, offset, r.str));
  return std::optional<GroupOpOutcome>(std::move(o));
}

Result<std::optional<GroupState>> RedisGroupStore::load(const GroupId& group) {
  const std::string& p = options_.key_prefix;
  const std::vector<RedisCommand> commands{{"GET", group_meta_key(p, group)},
                                           {"HGETALL", group_members_key(p, group)},
                                           {"HGETALL", group_outcomes_key(p, group)}};
  RedisPool& pool = *pools_[instance_of(group)];
  QIM_ASSIGN_OR_RETURN(auto conn, pool.acquire());
  counters_.reads += commands.size();
  QIM_ASSIGN_OR_RETURN(auto replies, conn->pipeline(commands));
  QIM_ASSIGN_OR_RETURN(RedisReply meta_reply,
                       row_reply(std::move(replies[0]), pool.endpoint(), group, "meta"));
  if (meta_reply.is_nil()) return std::optional<GroupState>();
  QIM_ASSIGN_OR_RETURN(GroupMeta m, decode_meta_row(group, meta_reply.str));

  QIM_ASSIGN_OR_RETURN(RedisReply member_reply,
                       row_reply(std::move(replies[1]), pool.endpoint(), group, "member rows"));
  QIM_ASSIGN_OR_RETURN(auto member_pairs, pairs(std::move(member_reply), group, "member rows"));
  std::vector<GroupMemberRecord> members;
  members.reserve(member_pairs.size());
  for (const auto& [user, bytes] : member_pairs) {
    QIM_ASSIGN_OR_RETURN(GroupMemberRecord r, decode_member_row(group, user, bytes));
    members.push_back(std::move(r));
  }
  QIM_ASSIGN_OR_RETURN(RedisReply outcome_reply,
                       row_reply(std::move(replies[2]), pool.endpoint(), group, "outcome rows"));
  QIM_ASSIGN_OR_RETURN(auto outcome_pairs, pairs(std::move(outcome_reply), group, "outcome rows"));
  std::map<uint64_t, GroupOpOutcome> ops;
  for (const auto& [hex, bytes] : outcome_pairs) {
    auto seq = parse_seq_hex(hex);
    if (!seq.ok()) return corrupt_group_row(group, "outcome '" + hex + "'", seq.error().message());
    QIM_ASSIGN_OR_RETURN(GroupOpOutcome o, decode_outcome_row(group, seq->raw(), bytes));
    ops.emplace(seq->raw(), std::move(o));
  }
  return std::optional<GroupState>(GroupState(std::move(m), std::move(members), std::move(ops)));
}

Result<std::vector<GroupId>> RedisGroupStore::groups_of(const UserId& user) {
  std::vector<GroupId> out;
  for (const auto& pool : pools_) {
    QIM_ASSIGN_OR_RETURN(auto conn, pool->acquire());
    counters_.reads++;
    QIM_ASSIGN_OR_RETURN(RedisReply r, conn->run({"SMEMBERS", group_index_key(options_.key_prefix, user)}));
    if (r.is_error() && r.str.starts_with("WRONGTYPE"))
      return Error(Errc::kCorruptEntry, "group store: index of user '" + user.str() + "' is not a set");
    QIM_ASSIGN_OR_RETURN(r, checked(std::move(r), pool->endpoint()));
    if (r.kind != RedisReply::Kind::kArray)
      return Error(Errc::kTransport,
                   "redis " + pool->endpoint().to_string() + ": unexpected reply to SMEMBERS");
    for (const auto& e : r.elements) {
      auto g = GroupId::parse(e.str);
      if (!g.ok())
        return Error(Errc::kCorruptEntry,
                     "group store: index of user '" + user.str() + "': " + g.error().message());
      out.push_back(std::move(g).value());
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace qim
