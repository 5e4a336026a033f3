#include "mailbox/redis/redis_backend.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "mailbox/redis/packed_watermarks.h"
#include "mailbox/redis/redis_instance.h"
#include "mailbox/redis/redis_keys.h"
#include "mailbox/redis/redis_values.h"
#include "mailbox/store_options.h"

namespace qim {

namespace {

// Entries per put_entries call: a few hundred microseconds of server time at most.
constexpr size_t kEntriesPerScript = 128;

Error unexpected(const RedisEndpoint& endpoint, std::string_view what) {
  return Error(Errc::kTransport,
               "redis " + endpoint.to_string() + ": unexpected reply to " + std::string(what));
}

class RedisBackend final : public StoreBackend {
 public:
  RedisBackend(BackendContext context, const RedisStoreOptions& options,
               const std::vector<RedisEndpoint>& endpoints)
      : context_(std::move(context)), keys_(options.key_prefix) {
    const RedisTimeouts timeouts{options.connect_timeout, options.command_timeout};
    for (const auto& e : endpoints) {
      instances_.push_back(std::make_unique<RedisInstance>(e, timeouts, options.pool_size, counters_));
    }
  }

  Status load_scripts() {
    for (auto& instance : instances_) QIM_RETURN_IF_ERROR(instance->load_scripts());
    return {};
  }

  std::string_view name() const override { return "redis"; }
  // ADR-0022 section 4: Redis keeps one frontier commit per record; behaviour unchanged.
  uint32_t declared_page_limit() const override { return 1; }

  Result<std::optional<StoredIdentity>> claim_identity(ShardId shard, Epoch epoch,
                                                       const DispatchIdentity& identity,
                                                       Offset observed) override {
    RedisInstance& inst = of_shard(shard);
    const ScriptCall call{
        RedisScript::kClaimIdentity,
        {keys_.identity(shard, epoch, identity.id)},
        {encode_identity_value(identity, observed), std::to_string(kDispatchIdentityTtlSeconds)}};
    QIM_ASSIGN_OR_RETURN(RedisReply reply, eval_one(inst, call));
    return stored_identity(inst, identity.id, reply, "claim_identity");
  }

  Result<std::optional<StoredIdentity>> read_identity(ShardId shard, Epoch epoch,
                                                      const DispatchId& id) override {
    RedisInstance& inst = of_shard(shard);
    counters_.reads++;
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, {"GET", keys_.identity(shard, epoch, id)}));
    return stored_identity(inst, id, reply, "GET identity");
  }

  Status write_entries(ShardId, Epoch, std::span<const MailboxEntry> entries) override {
    const int64_t ttl_ms = context_.entry_ttl_ms();
    const int64_t expires = context_.clock->now_ms() + ttl_ms;
    // One script call per instance (up to kEntriesPerScript entries each, so one call never holds the
    // server long), all calls for one instance in one pipeline: one round trip per instance.
    std::map<size_t, std::vector<ScriptCall>> batches;  // instance -> calls
    for (const auto& e : entries) {
      const ShardId user_shard = context_.shards.shard_of(e.user);
      auto& batch = batches[instance_index(user_shard)];
      if (batch.empty() || batch.back().args.size() >= 1 + 4 * kEntriesPerScript) {
        batch.push_back(ScriptCall{RedisScript::kPutEntries, {}, {std::to_string(ttl_ms)}});
      }
      ScriptCall& call = batch.back();
      const DayBucket day = day_bucket_of(e.message.server_time_ms);
      call.keys.insert(call.keys.end(), {keys_.index(e.user), keys_.values(e.user), keys_.ledger(e.user),
                                         keys_.proof(e.user, day), keys_.ledger_users(user_shard)});
      call.args.insert(call.args.end(), {seq_hex(e.seq), encode_entry_value(e.message, expires),
                                         bucket_field(day), e.user.str()});
    }
    for (const auto& [index, batch] : batches) {
      RedisInstance& inst = *instances_[index];
      QIM_ASSIGN_OR_RETURN(auto replies, inst.eval(batch));
      for (auto& r : replies) QIM_RETURN_IF_ERROR(reply_or_error(std::move(r), inst.endpoint()));
    }
    return {};
  }

  // The entries' values read in one pipeline, then written back without their body by one script that
  // sets a field only if it still holds what was read (compare-and-set: no entry created or resurrected).
  Status redact_entries(std::span<const EntryKey> entries) override {
    return redact_edit_entries(entries, [](std::string_view, std::string_view body) {
      return body.empty() ? std::nullopt : std::optional<std::string>(std::in_place);
    });
  }

  // As redact_entries, the body replaced by what `redact` answers, by the same compare-and-set script: a
  // value written between the read and the script stays (the next redaction, a replay, handles it).
  Status redact_edit_entries(std::span<const EntryKey> entries, const EntryBodyRedaction& redact) override {
    if (entries.empty()) return {};
    RedisInstance& inst = of_user(entries.front().user);  // one shard's users: one instance
    std::vector<RedisCommand> reads;
    reads.reserve(entries.size());
    for (const auto& k : entries) reads.push_back({"HGET", keys_.values(k.user), seq_hex(k.seq)});
    counters_.reads++;
    QIM_ASSIGN_OR_RETURN(auto replies, inst.run(reads));
    std::vector<ScriptCall> calls;
    for (size_t i = 0; i < entries.size(); ++i) {
      QIM_ASSIGN_OR_RETURN(RedisReply value, reply_or_error(std::move(replies[i]), inst.endpoint()));
      if (value.is_nil()) continue;
      if (value.kind != RedisReply::Kind::kString) return unexpected(inst.endpoint(), "HGET entry");
      QIM_ASSIGN_OR_RETURN(StoredEntryValue stored, decode_entry_value(value.str));
      std::optional<std::string> body = redact(stored.message.client_msg_id, stored.message.body);
      if (!body) continue;
      stored.message.body = *std::move(body);
      if (calls.empty() || calls.back().keys.size() >= kEntriesPerScript) {
        calls.push_back(ScriptCall{RedisScript::kRedactEntries, {}, {}});
      }
      calls.back().keys.push_back(keys_.values(entries[i].user));
      calls.back().args.insert(calls.back().args.end(),
                               {seq_hex(entries[i].seq), std::move(value.str),
                                encode_entry_value(stored.message, stored.expires_ms)});
    }
    if (calls.empty()) return {};
    counters_.updates++;
    QIM_ASSIGN_OR_RETURN(auto written, inst.eval(calls));
    for (auto& r : written) QIM_RETURN_IF_ERROR(reply_or_error(std::move(r), inst.endpoint()));
    return {};
  }

  Result<std::optional<MailboxSeq>> read_frontier(ShardId shard) override {
    RedisInstance& inst = of_shard(shard);
    counters_.reads++;
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, {"GET", keys_.frontier(shard)}));
    if (reply.is_nil()) return std::optional<MailboxSeq>();
    if (reply.kind != RedisReply::Kind::kString) return unexpected(inst.endpoint(), "GET packed W");
    QIM_ASSIGN_OR_RETURN(PackedWatermarks w, decode_packed_watermarks(reply.str));
    QIM_ASSIGN_OR_RETURN(MailboxSeq frontier, frontier_of(w));
    return std::optional(frontier);
  }

  // Packed W holds only the highest epoch; the final W of every older epoch is in the history hash the
  // frontier script fills when the epoch rises. Both in one pipeline (one round trip). They are not read
  // atomically: an epoch can then appear in both (W, and the hash after a takeover in between), and
  // the hash, written last, holds that epoch's final value, the higher one.
  Result<std::vector<MailboxSeq>> read_frontiers(ShardId shard) override {
    RedisInstance& inst = of_shard(shard);
    counters_.reads++;
    const std::array<RedisCommand, 2> commands = {RedisCommand{"GET", keys_.frontier(shard)},
                                                  RedisCommand{"HGETALL", keys_.frontier_history(shard)}};
    QIM_ASSIGN_OR_RETURN(auto replies, inst.run(commands));
    QIM_ASSIGN_OR_RETURN(RedisReply current, reply_or_error(std::move(replies[0]), inst.endpoint()));
    QIM_ASSIGN_OR_RETURN(RedisReply history, reply_or_error(std::move(replies[1]), inst.endpoint()));
    if (history.kind != RedisReply::Kind::kArray || history.elements.size() % 2 != 0) {
      return unexpected(inst.endpoint(), "HGETALL frontier history");
    }
    std::map<uint32_t, MailboxSeq> by_epoch;
    for (size_t i = 0; i < history.elements.size(); i += 2) {
      QIM_ASSIGN_OR_RETURN(MailboxSeq f, parse_seq_hex(history.elements[i + 1].str));
      if (std::to_string(f.epoch().value) != history.elements[i].str) {
        return Error(Errc::kCorruptEntry, "frontier history " + keys_.frontier_history(shard) + " field " +
                                              history.elements[i].str + " holds " + f.to_string() +
                                              " of another epoch");
      }
      by_epoch[f.epoch().value] = f;
    }
    if (!current.is_nil()) {
      if (current.kind != RedisReply::Kind::kString) return unexpected(inst.endpoint(), "GET packed W");
      QIM_ASSIGN_OR_RETURN(PackedWatermarks w, decode_packed_watermarks(current.str));
      QIM_ASSIGN_OR_RETURN(MailboxSeq f, frontier_of(w));
      auto& slot = by_epoch[f.epoch().value];
      slot = std::max(slot, f);
    }
    std::vector<MailboxSeq> out;
    for (const auto& [epoch, f] : by_epoch) out.push_back(f);
    return out;
  }

  Status write_frontier(ShardId shard, Epoch epoch, MailboxSeq expected_previous, MailboxSeq next) override {
    std::array<MailboxSeq, kLanes> expected;
    expected.fill(expected_previous);
    const ScriptCall call{RedisScript::kWriteFrontier,
                          {keys_.frontier(shard), keys_.frontier_history(shard)},
                          {std::to_string(epoch.value), encode_packed_lanes(expected),
                           encode_packed_watermarks(PackedWatermarks::uniform(next))}};
    QIM_RETURN_IF_ERROR(eval_one(of_shard(shard), call));
    return {};
  }

  Result<std::vector<MailboxEntry>> read_entries(const UserId& user, MailboxSeq after, MailboxSeq upto,
                                                 uint32_t limit) override {
    std::vector<MailboxEntry> out;
    if (limit == 0 || upto <= after) return out;
    RedisInstance& inst = of_user(user);
    const ScriptCall call{RedisScript::kReadEntries,
                          {keys_.index(user), keys_.values(user)},
                          {"(" + seq_hex(after), "[" + seq_hex(upto), std::to_string(limit),
                           std::to_string(context_.clock->now_ms())}};
    QIM_ASSIGN_OR_RETURN(RedisReply reply, eval_one(inst, call));
    if (reply.kind != RedisReply::Kind::kArray || reply.elements.size() % 2 != 0) {
      return unexpected(inst.endpoint(), "read_entries");
    }
    for (size_t i = 0; i < reply.elements.size(); i += 2) {
      QIM_ASSIGN_OR_RETURN(MailboxSeq seq, parse_seq_hex(reply.elements[i].str));
      QIM_ASSIGN_OR_RETURN(StoredEntryValue value, decode_entry_value(reply.elements[i + 1].str));
      out.push_back(MailboxEntry{user, seq, std::move(value.message)});
    }
    return out;
  }

  Result<RetentionLedger> read_ledger(const UserId& user) override {
    RedisInstance& inst = of_user(user);
    counters_.reads++;
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, {"HGETALL", keys_.ledger(user)}));
    if (reply.kind != RedisReply::Kind::kArray || reply.elements.size() % 2 != 0) {
      return unexpected(inst.endpoint(), "HGETALL ledger");
    }
    RetentionLedger ledger;
    for (size_t i = 0; i < reply.elements.size(); i += 2) {
      const std::string& field = reply.elements[i].str;
      if (field == kTrimField) {
        QIM_ASSIGN_OR_RETURN(ledger.trim, parse_seq_hex(reply.elements[i + 1].str));
      } else if (auto day = parse_bucket_field(field)) {
        ledger.live_buckets.push_back(*day);
      } else {
        return Error(Errc::kCorruptEntry, "retention ledger of " + user.str() + " has a field '" +
                                              field.substr(0, 40) + "' that is neither trim nor a bucket");
      }
    }
    std::sort(ledger.live_buckets.begin(), ledger.live_buckets.end());
    return ledger;
  }

  Result<std::optional<MailboxSeq>> read_bucket_proof(const UserId& user, DayBucket bucket) override {
    RedisInstance& inst = of_user(user);
    counters_.reads++;
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, {"ZREVRANGEBYLEX", keys_.proof(user, bucket), "+",
                                                          "-", "LIMIT", "0", "1"}));
    if (reply.kind != RedisReply::Kind::kArray) return unexpected(inst.endpoint(), "ZREVRANGEBYLEX proof");
    if (reply.elements.empty()) return std::optional<MailboxSeq>();
    QIM_ASSIGN_OR_RETURN(MailboxSeq max, parse_seq_hex(reply.elements.front().str));
    return std::optional(max);
  }

  Status commit_sweep(const UserId& user, const RetentionLedger& seen, MailboxSeq new_trim,
                      std::span<const DayBucket> expired) override {
    ScriptCall call{RedisScript::kCommitSweep,
                    {keys_.ledger(user), keys_.index(user), keys_.values(user)},
                    {seq_hex(seen.trim), seq_hex(std::max(seen.trim, new_trim)),
                     std::to_string(seen.live_buckets.size())}};
    for (DayBucket b : seen.live_buckets) call.args.push_back(bucket_field(b));
    for (DayBucket b : expired) {
      call.keys.push_back(keys_.proof(user, b));
      call.args.push_back(bucket_field(b));
    }
    QIM_RETURN_IF_ERROR(eval_one(of_user(user), call));
    return {};
  }

  Result<std::vector<UserId>> list_ledger_users(ShardId shard, const std::string& after,
                                                uint32_t limit) override {
    RedisInstance& inst = of_shard(shard);
    counters_.reads++;
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, {"ZRANGEBYLEX", keys_.ledger_users(shard),
                                                          after.empty() ? "-" : "(" + after, "+", "LIMIT",
                                                          "0", std::to_string(limit)}));
    if (reply.kind != RedisReply::Kind::kArray)
      return unexpected(inst.endpoint(), "ZRANGEBYLEX ledger users");
    std::vector<UserId> out;
    out.reserve(reply.elements.size());
    for (const auto& e : reply.elements) out.push_back(UserId::unchecked(e.str));
    return out;
  }

  // Identities expire by their 31-day TTL; nothing else is kept per dispatch.
  Result<uint64_t> gc_completed_dispatches() override { return uint64_t{0}; }
  OpCounters& counters() override { return counters_; }

 private:
  size_t instance_index(ShardId shard) const { return shard.value % instances_.size(); }
  RedisInstance& of_shard(ShardId shard) { return *instances_[instance_index(shard)]; }
  RedisInstance& of_user(const UserId& user) { return of_shard(context_.shards.shard_of(user)); }

  // One command or script; an error reply becomes the error it stands for.
  Result<RedisReply> run_one(RedisInstance& inst, RedisCommand command) {
    QIM_ASSIGN_OR_RETURN(auto replies, inst.run(std::span(&command, 1)));
    return reply_or_error(std::move(replies.front()), inst.endpoint());
  }
  Result<RedisReply> eval_one(RedisInstance& inst, const ScriptCall& call) {
    QIM_ASSIGN_OR_RETURN(auto replies, inst.eval(std::span(&call, 1)));
    return reply_or_error(std::move(replies.front()), inst.endpoint());
  }

  Result<std::optional<StoredIdentity>> stored_identity(RedisInstance& inst, const DispatchId& id,
                                                        const RedisReply& reply, std::string_view what) {
    if (reply.is_nil()) return std::optional<StoredIdentity>();
    if (reply.kind != RedisReply::Kind::kString) return unexpected(inst.endpoint(), what);
    QIM_ASSIGN_OR_RETURN(StoredIdentity stored, decode_identity_value(id, reply.str));
    return std::optional(std::move(stored));
  }

  static std::optional<DayBucket> parse_bucket_field(std::string_view field) {
    if (field.size() < 2 || field[0] != 'b') return std::nullopt;
    int64_t day = 0;
    auto [end, ec] = std::from_chars(field.data() + 1, field.data() + field.size(), day);
    if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
    return DayBucket{day};
  }

  BackendContext context_;
  RedisKeys keys_;
  OpCounters counters_;
  std::vector<std::unique_ptr<RedisInstance>> instances_;
};

}  // namespace

Result<std::unique_ptr<StoreBackend>> open_redis_backend(const BackendContext& context,
                                                         const RedisStoreOptions& options) {
  if (options.endpoints.empty()) {
    return Error(Errc::kConfig, "the redis mailbox store needs at least one endpoint (QIM_MAILBOX_REDIS)");
  }
  std::vector<RedisEndpoint> endpoints;
  for (const auto& text : options.endpoints) {
    QIM_ASSIGN_OR_RETURN(RedisEndpoint e, RedisEndpoint::parse(text));
    endpoints.push_back(std::move(e));
  }
  BackendContext with_clock = context;
  if (!with_clock.clock) with_clock.clock = std::make_shared<SystemClock>();
  auto backend = std::make_unique<RedisBackend>(std::move(with_clock), options, endpoints);
  QIM_RETURN_IF_ERROR(backend->load_scripts());
  return std::unique_ptr<StoreBackend>(std::move(backend));
}

Result<std::unique_ptr<StoreBackend>> open_redis_backend(const BackendContext& context,
                                                         const std::vector<std::string>& endpoints) {
  RedisStoreOptions options;
  options.endpoints = endpoints;
  return open_redis_backend(context, options);
}

Result<std::unique_ptr<StoreBackend>> open_redis_backend_with_prefix(
    const BackendContext& context, const std::vector<std::string>& endpoints, const std::string& key_prefix) {
  RedisStoreOptions options;
  options.endpoints = endpoints;
  options.key_prefix = key_prefix;
  return open_redis_backend(context, options);
}

}  // namespace qim
