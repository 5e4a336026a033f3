#include "node/lease/redis_lease_store.h"

#include <algorithm>
#include <charconv>

#include "mailbox/redis/redis_pool.h"

namespace qim {

namespace {

// KEYS: epoch, owner, move. ARGV: node, ttl ms, floor epoch, max epoch.
// {1, epoch} granted (ending a move to the node); {0, holder} held by another; {2, stored} no epoch
// left; {3, target} a move to another node is pending.
constexpr const char* kAcquire = R"lua(
local owner = redis.call('GET', KEYS[2])
if owner and owner ~= ARGV[1] then return {0, owner} end
local move = redis.call('GET', KEYS[3])
if move and move ~= ARGV[1] then return {3, move} end
local e = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[3])
if floor > e then e = floor end
if e >= tonumber(ARGV[4]) then return {2, tostring(e)} end
e = e + 1
redis.call('SET', KEYS[1], tostring(e))
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
if move then redis.call('DEL', KEYS[3]) end
return {1, tostring(e)}
)lua";

// KEYS: owner, move. ARGV: target, ttl ms. {1, ''} recorded; {0, target} a move is pending; {2, ''} the
// target holds the shard.
constexpr const char* kRequestMove = R"lua(
local move = redis.call('GET', KEYS[2])
if move then return {0, move} end
if redis.call('GET', KEYS[1]) == ARGV[1] then return {2, ''} end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return {1, ''}
)lua";

// KEYS: move. ARGV: target. 1 withdrawn; 0 no move to the target.
constexpr const char* kCancelMove = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
)lua";

// KEYS: epoch, owner. ARGV: node, epoch, ttl ms (0: release). {1, ''} done; {0, holder or ''} not held.
constexpr const char* kRenewOrRelease = R"lua(
local owner = redis.call('GET', KEYS[2])
local e = redis.call('GET', KEYS[1])
if owner ~= ARGV[1] or e ~= ARGV[2] then return {0, owner or '', e or '0'} end
if ARGV[3] == '0' then redis.call('DEL', KEYS[2]) else redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return {1, '', e}
)lua";

// KEYS: nodes. ARGV: node, ttl ms. The expiry is on the Redis clock (TIME), like the lease TTLs.
constexpr const char* kHeartbeat = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return 1
)lua";

// KEYS: nodes. Drops expired heartbeats, returns the live node ids.
constexpr const char* kLiveNodes = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1)
)lua";

uint32_t to_u32(const RedisReply& r) {
  uint32_t v = 0;
  if (r.kind == RedisReply::Kind::kInteger) return static_cast<uint32_t>(r.integer);
  std::from_chars(r.str.data(), r.str.data() + r.str.size(), v);
  return v;
}

class RedisLeaseStore final : public LeaseStore {
 public:
  RedisLeaseStore(RedisEndpoint endpoint, const RedisLeaseOptions& options)
      : pool_(std::move(endpoint), RedisTimeouts{options.connect_timeout, options.command_timeout}, 2),
        prefix_(options.key_prefix + "lease:") {}

  std::string_view name() const override { return "redis"; }

  Status ping() {
    QIM_ASSIGN_OR_RETURN(RedisReply r, run({"PING"}));
    (void)r;
    return {};
  }

  Result<Epoch> try_acquire(ShardId shard, const std::string& node, std::chrono::milliseconds ttl,
                            Epoch floor) override {
    if (node.empty() || ttl.count() < 1)
      return Error(Errc::kInvalidArgument, "lease: empty node id or ttl < 1 ms");
    QIM_ASSIGN_OR_RETURN(RedisReply r, run({"EVAL", kAcquire, "3", epoch_key(shard), owner_key(shard),
                                            move_key(shard), node, std::to_string(ttl.count()),
                                            std::to_string(floor.value), std::to_string(kMaxEpoch)}));
    QIM_RETURN_IF_ERROR(expect_pair(r, "lease acquire"));
    const int64_t code = r.elements[0].integer;
    if (code == 0) {
      return Error(kNotOwner, "shard " + std::to_string(shard.value) + " is leased to " + r.elements[1].str);
    }
    if (code == 2) return next_lease_epoch(shard, Epoch{to_u32(r.elements[1])}, floor).error();
    if (code == 3) return move_refusal(shard, r.elements[1].str);
    return Epoch{to_u32(r.elements[1])};
  }

  Status renew(ShardId shard, const std::string& node, Epoch epoch, std::chrono::milliseconds ttl) override {
    if (ttl.count() < 1) return Error(Errc::kInvalidArgument, "lease: ttl < 1 ms");
    return renew_or_release(shard, node, epoch, std::to_string(ttl.count()), "renew");
  }

  Status release(ShardId shard, const std::string& node, Epoch epoch) override {
    return renew_or_release(shard, node, epoch, "0", "release");
  }

  Result<std::vector<ShardLease>> list(uint32_t shard_count) override {
    std::vector<ShardLease> out;
    if (shard_count == 0) return out;
    RedisCommand mget{"MGET"};
    for (uint32_t s = 0; s < shard_count; ++s) {
      mget.push_back(epoch_key(ShardId{s}));
      mget.push_back(owner_key(ShardId{s}));
      mget.push_back(move_key(ShardId{s}));
    }
    QIM_ASSIGN_OR_RETURN(RedisReply r, run(mget));  // one read: a consistent snapshot of every lease
    if (r.kind != RedisReply::Kind::kArray || r.elements.size() != 3 * size_t{shard_count}) {
      return Error(Errc::kTransport, where() + ": MGET of the leases answered an unexpected reply");
    }
    for (uint32_t s = 0; s < shard_count; ++s) {
      const RedisReply& e = r.elements[3 * s];
      const RedisReply& o = r.elements[3 * s + 1];
      const RedisReply& m = r.elements[3 * s + 2];
      out.push_back(ShardLease{ShardId{s}, Epoch{e.is_nil() ? 0 : to_u32(e)}, o.is_nil() ? "" : o.str,
                               m.is_nil() ? "" : m.str});
    }
    return out;
  }

  Status request_move(ShardId shard, const std::string& to, std::chrono::milliseconds ttl) override {
    if (to.empty() || ttl.count() < 1)
      return Error(Errc::kInvalidArgument, "move: empty node id or ttl < 1 ms");
    QIM_ASSIGN_OR_RETURN(RedisReply r, run({"EVAL", kRequestMove, "2", owner_key(shard), move_key(shard), to,
                                            std::to_string(ttl.count())}));
    QIM_RETURN_IF_ERROR(expect_pair(r, "move request"));
    const int64_t code = r.elements[0].integer;
    if (code == 0) return move_pending(shard, r.elements[1].str);
    if (code == 2) {
      auto leases = list(shard.value + 1);
      return already_holds(shard, to, leases.ok() ? leases->back().epoch : Epoch{0});
    }
    return {};
  }

  Status cancel_move(ShardId shard, const std::string& to) override {
    QIM_ASSIGN_OR_RETURN(RedisReply r, run({"EVAL", kCancelMove, "1", move_key(shard), to}));
    if (r.kind != RedisReply::Kind::kInteger)
      return Error(Errc::kTransport, where() + ": move cancel answered an unexpected reply");
    if (r.integer != 1) return no_move(shard, to);
    return {};
  }

  Status heartbeat(const std::string& node, std::chrono::milliseconds ttl) override {
    QIM_ASSIGN_OR_RETURN(RedisReply r,
                         run({"EVAL", kHeartbeat, "1", nodes_key(), node, std::to_string(ttl.count())}));
    (void)r;
    return {};
  }

  Result<std::vector<std::string>> live_nodes() override {
    QIM_ASSIGN_OR_RETURN(RedisReply r, run({"EVAL", kLiveNodes, "1", nodes_key()}));
    std::vector<std::string> out;
    for (const auto& e : r.elements) out.push_back(e.str);
    std::sort(out.begin(), out.end());  // the set orders by expiry; the contract says ascending ids
    return out;
  }

  Status leave(const std::string& node) override {
    QIM_ASSIGN_OR_RETURN(RedisReply r, run({"ZREM", nodes_key(), node}));
    (void)r;
    return {};
  }

 private:
  std::string epoch_key(ShardId s) const { return prefix_ + "epoch:" + std::to_string(s.value); }
  std::string owner_key(ShardId s) const { return prefix_ + "owner:" + std::to_string(s.value); }
  std::string move_key(ShardId s) const { return prefix_ + "move:" + std::to_string(s.value); }
  std::string nodes_key() const { return prefix_ + "nodes"; }
  std::string where() const { return "lease store redis " + pool_.endpoint().to_string(); }

  Result<RedisReply> run(const RedisCommand& command) {
    QIM_ASSIGN_OR_RETURN(auto conn, pool_.acquire());
    QIM_ASSIGN_OR_RETURN(RedisReply r, conn->run(command));
    if (r.is_error()) return Error(Errc::kTransport, where() + ": " + command[0] + " refused: " + r.str);
    return r;
  }

  Status expect_pair(const RedisReply& r, std::string_view what) const {
    if (r.kind != RedisReply::Kind::kArray || r.elements.size() < 2 ||
        r.elements[0].kind != RedisReply::Kind::kInteger) {
      return Error(Errc::kTransport, where() + ": " + std::string(what) + " answered an unexpected reply");
    }
    return {};
  }

  Status renew_or_release(ShardId shard, const std::string& node, Epoch epoch, const std::string& ttl_ms,
                          std::string_view what) {
    QIM_ASSIGN_OR_RETURN(RedisReply r, run({"EVAL", kRenewOrRelease, "2", epoch_key(shard), owner_key(shard),
                                            node, std::to_string(epoch.value), ttl_ms}));
    QIM_RETURN_IF_ERROR(expect_pair(r, "lease " + std::string(what)));
    if (r.elements[0].integer == 1) return {};
    const std::string holder = r.elements[1].str;
    return Error(kNotOwner, "lease " + std::string(what) + ": shard " + std::to_string(shard.value) +
                                " is not leased to " + node + " at epoch " + std::to_string(epoch.value) +
                                " (now: " + (holder.empty() ? std::string("free") : holder) + " at epoch " +
                                (r.elements.size() > 2 ? r.elements[2].str : std::string("?")) + ")");
  }

  RedisPool pool_;
  const std::string prefix_;
};

}  // namespace

Result<std::unique_ptr<LeaseStore>> open_redis_lease_store(const RedisLeaseOptions& options) {
  if (options.endpoints.empty())
    return Error(Errc::kConfig, "QIM_MAILBOX_REDIS: no Redis instance for the leases");
  QIM_ASSIGN_OR_RETURN(RedisEndpoint endpoint, RedisEndpoint::parse(options.endpoints[0]));
  auto store = std::make_unique<RedisLeaseStore>(std::move(endpoint), options);
  QIM_RETURN_IF_ERROR(store->ping());
  return std::unique_ptr<LeaseStore>(std::move(store));
}

}  // namespace qim
