#pragma once
// The group store on Redis, for the redis deployment (docs/redis-store.md, "Groups"). A group's keys live
// on the instance of its conversation "g:<group>" (XXH3-64 mod N, the instance that also holds its
// history), under the deployment's key prefix (QIM_MAILBOX_REDIS_PREFIX):
//
//   {p}gm:{group}   STRING  meta row (groups/group_codec.h)
//   {p}gr:{group}   HASH    user -> member row (role, intervals)
//   {p}go:{group}   HASH    hex16(offset) -> op outcome row
//   {p}gu:{user}    SET     the user's current groups *whose keys live on this instance*
//
// apply() is one Lua script on the group's instance (EVAL; Redis runs a script alone, so readers see the
// change whole or not at all): it returns without writing when the outcome of (group, offset) is stored
// (idempotent), checks every key's type before the first write (the only failure a script could meet
// midway is WRONGTYPE, and Redis does not undo a script's earlier writes), then writes outcome, meta,
// member rows and index sets. The user index is kept per instance so that one script holds the whole
// change; groups_of() reads the user's set on every instance (one SMEMBERS each, pipelined per instance)
// and merges them. load() is one pipeline of GET + HGETALL + HGETALL: one round trip for any group size.
// Every command has a timeout and the pool is bounded: a down Redis is Transport or Timeout, never a hang.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "groups/group_store.h"
#include "mailbox/redis/redis_connection.h"

namespace qim {

class RedisPool;

struct RedisGroupOptions {
  std::vector<std::string> endpoints;  // "host:port" each (QIM_MAILBOX_REDIS)
  std::string key_prefix = "qim:";     // QIM_MAILBOX_REDIS_PREFIX
  uint32_t pool_size = 4;              // connections per instance at most
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{2000};
};

// The keys of a group and of a user's index under `prefix` (for the store and for tests that plant rows).
std::string group_meta_key(const std::string& prefix, const GroupId& group);
std::string group_members_key(const std::string& prefix, const GroupId& group);
std::string group_outcomes_key(const std::string& prefix, const GroupId& group);
std::string group_index_key(const std::string& prefix, const UserId& user);

class RedisGroupStore final : public GroupStore {
 public:
  // Config for no endpoint or a malformed one; Transport or Timeout naming an instance that cannot be
  // reached (each is pinged once).
  static Result<std::unique_ptr<RedisGroupStore>> open(const RedisGroupOptions& options);
  ~RedisGroupStore() override;

  // One script (1 counted), plus the inserts/updates of the rows it writes. Transport naming the instance
  // and reply for an error reply (e.g. WRONGTYPE: nothing was written), Transport/Timeout for the socket.
  Status apply(const GroupChange& change) override;
  // One pipeline (3 reads counted). CorruptEntry naming the group and row for a row that does not decode
  // or a key of another type.
  Result<std::optional<GroupState>> load(const GroupId& group) override;
  Result<std::optional<GroupMeta>> meta(const GroupId& group) override;
  Result<std::optional<GroupMemberRecord>> member(const GroupId& group, const UserId& user) override;
  Result<std::optional<GroupOpOutcome>> outcome(const GroupId& group, uint64_t offset) override;
  // One SMEMBERS per instance (N reads counted), merged and sorted.
  Result<std::vector<GroupId>> groups_of(const UserId& user) override;
  OpCounts op_counts() const override { return counters_.snapshot(); }

  // The instance a group's keys live on (index into options.endpoints).
  size_t instance_of(const GroupId& group) const;

 private:
  RedisGroupStore(RedisGroupOptions options, std::vector<std::unique_ptr<RedisPool>> pools);
  // One read of `row` on the group's instance: an error reply is an error (WRONGTYPE: CorruptEntry naming
  // the row).
  Result<RedisReply> read_row(const GroupId& group, const RedisCommand& command, std::string_view row);

  RedisGroupOptions options_;
  std::vector<std::unique_ptr<RedisPool>> pools_;
  OpCounters counters_;
};

}  // namespace qim
