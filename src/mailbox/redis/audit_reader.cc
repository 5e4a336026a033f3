#include "mailbox/redis/audit_reader.h"

#include <charconv>

#include "mailbox/redis/packed_watermarks.h"
#include "mailbox/redis/redis_connection.h"
#include "mailbox/redis/redis_keys.h"
#include "mailbox/redis/redis_values.h"

namespace qim {

namespace {

std::optional<uint32_t> parse_u32(std::string_view text) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

class RedisAuditReader : public AuditReader {
 public:
  RedisAuditReader(std::vector<std::unique_ptr<RedisConnection>> connections, std::string prefix,
                   ShardMap shards)
      : connections_(std::move(connections)), keys_(std::move(prefix)), shards_(shards) {}

  std::string_view backend() const override { return "redis"; }
  bool identity_conflicts_possible() const override { return false; }
  std::vector<std::string> notes() const override {
    return {
        "redis: dispatch identity is atomic (first writer wins in one Lua script; a second payload for "
        "one id and epoch is refused at write time as DispatchConflict), so split brain cannot store "
        "two; the audit checks the packed watermark of each shard and every entry against its dispatch",
        "redis keeps no write timestamps: WRITETIME checks do not apply"};
  }

  Status frontiers(const std::vector<ShardId>& wanted, RowPacer& pacer,
                   const std::function<Status(const AuditFrontierRow&)>& visit,
                   const CorruptSink& corrupt) override {
    std::vector<ShardId> shards = wanted;
    if (shards.empty())
      for (uint32_t s = 0; s < shards_.shard_count(); ++s) shards.push_back(ShardId{s});
    for (ShardId shard : shards) {
      RedisConnection& conn = *connections_[shard.value % connections_.size()];
      const std::vector<RedisCommand> cmds = {{"GET", keys_.frontier(shard)},
                                              {"HGETALL", keys_.frontier_history(shard)}};
      QIM_ASSIGN_OR_RETURN(auto replies, conn.pipeline(cmds));
      pacer.account(2, "frontiers");
      if (replies[0].is_nil()) continue;  // the shard never finished a record
      if (replies[0].kind != RedisReply::Kind::kString) {
        corrupt({keys_.frontier(shard), "not a string"});
        continue;
      }
      auto packed = decode_packed_watermarks(replies[0].str);
      if (!packed.ok()) {
        corrupt({keys_.frontier(shard), packed.error().message()});
        continue;
      }
      auto w = frontier_of(*packed);
      if (!w.ok()) {
        corrupt({keys_.frontier(shard), w.error().message()});
        continue;
      }
      QIM_RETURN_IF_ERROR(visit({shard, w->epoch(), w->offset(), std::nullopt}));
      const auto& history = replies[1].elements;
      for (size_t i = 0; i + 1 < history.size(); i += 2) {
        const std::string where = keys_.frontier_history(shard) + " field " + history[i].str;
        auto epoch = parse_u32(history[i].str);
        auto seq = parse_seq_hex(history[i + 1].str);
        if (!epoch || !seq.ok() || seq->epoch().value != *epoch) {
          corrupt({where, "not an epoch and the seq_hex of that epoch"});
        } else if (*epoch >= w->epoch().value) {
          corrupt({where, "epoch " + history[i].str + " is not below the packed watermark's epoch " +
                              std::to_string(w->epoch().value)});
        } else {
          QIM_RETURN_IF_ERROR(visit({shard, seq->epoch(), seq->offset(), std::nullopt}));
        }
      }
    }
    return {};
  }

  Status identities(const std::vector<ShardId>&, RowPacer& pacer,
                    const std::function<Status(const AuditIdentityRow&)>& visit,
                    const CorruptSink& corrupt) override {
    const std::string head = keys_.prefix() + "id:";
    return scan(head + "*", "identities", pacer,
                [&](RedisConnection& conn, const std::vector<std::string>& keys) -> Status {
                  std::vector<RedisCommand> cmds;
                  for (const auto& k : keys) {
                    cmds.push_back({"GET", k});
                    cmds.push_back({"TTL", k});
                  }
                  QIM_ASSIGN_OR_RETURN(auto replies, conn.pipeline(cmds));
                  for (size_t i = 0; i < keys.size(); ++i) {
                    const std::string& key = keys[i];
                    if (replies[2 * i].is_nil()) continue;  // expired between SCAN and GET
                    // id:{shard}:{epoch}:{dispatch}; a dispatch id has no ':'.
                    std::string_view rest = std::string_view(key).substr(head.size());
                    const auto c1 = rest.find(':'), c2 = rest.find(':', c1 == rest.npos ? 0 : c1 + 1);
                    auto shard = c1 == rest.npos ? std::nullopt : parse_u32(rest.substr(0, c1));
                    auto epoch = c2 == rest.npos ? std::nullopt : parse_u32(rest.substr(c1 + 1, c2 - c1 - 1));
                    auto id = c2 == rest.npos
                                  ? Result<DispatchId>(Error(Errc::kCorruptEntry, "no dispatch id"))
                                  : DispatchId::parse(rest.substr(c2 + 1));
                    if (!shard || !epoch || !id.ok()) {
                      corrupt({key, "not id:{shard}:{epoch}:{dispatch id}"});
                      continue;
                    }
                    auto stored = decode_identity_value(*id, replies[2 * i].str);
                    if (!stored.ok()) {
                      corrupt({key, stored.error().message()});
                      continue;
                    }
                    // TTL: -1 no expiry, -2 gone meanwhile.
                    const int64_t ttl = replies[2 * i + 1].integer;
                    if (ttl == -2) continue;
                    QIM_RETURN_IF_ERROR(
                        visit({ShardId{*shard}, Epoch{*epoch}, *id, stored->identity.digest,
                               stored->identity.manifest, stored->canonical_offset, std::nullopt, ttl}));
                  }
                  return {};
                });
  }

  Status entries(const std::vector<ShardId>&, RowPacer& pacer,
                 const std::function<Status(const AuditEntryRow&)>& visit,
                 const CorruptSink& corrupt) override {
    const std::string head = keys_.prefix() + "mv:";
    return scan(head + "*", "entries", pacer,
                [&](RedisConnection& conn, const std::vector<std::string>& keys) -> Status {
                  std::vector<RedisCommand> cmds;
                  for (const auto& k : keys) cmds.push_back({"HGETALL", k});
                  QIM_ASSIGN_OR_RETURN(auto replies, conn.pipeline(cmds));
                  uint64_t rows = 0;
                  for (size_t i = 0; i < keys.size(); ++i) {
                    auto user = UserId::parse(std::string_view(keys[i]).substr(head.size()));
                    if (!user.ok()) {
                      corrupt({keys[i], user.error().message()});
                      continue;
                    }
                    const auto& fields = replies[i].elements;
                    for (size_t f = 0; f + 1 < fields.size(); f += 2) {
                      ++rows;
                      auto seq = parse_seq_hex(fields[f].str);
                      auto value = decode_entry_value(fields[f + 1].str);
                      if (!seq.ok() || !value.ok()) {
                        corrupt({keys[i] + " field " + fields[f].str,
                                 !seq.ok() ? seq.error().message() : value.error().message()});
                        continue;
                      }
                      QIM_RETURN_IF_ERROR(visit({*user, *seq, value->message.id}));
                    }
                  }
                  pacer.account(rows, "entries");
                  return {};
                });
  }

  Result<std::optional<AuditIdentityRow>> identity(ShardId shard, Epoch epoch,
                                                   const DispatchId& id) override {
    RedisConnection& conn = *connections_[shard.value % connections_.size()];
    const std::string key = keys_.identity(shard, epoch, id);
    const std::vector<RedisCommand> cmds = {{"GET", key}, {"TTL", key}};
    QIM_ASSIGN_OR_RETURN(auto replies, conn.pipeline(cmds));
    if (replies[0].is_nil()) return std::optional<AuditIdentityRow>();
    if (replies[0].kind != RedisReply::Kind::kString)
      return Error(Errc::kCorruptEntry, key + " is not a string");
    QIM_ASSIGN_OR_RETURN(StoredIdentity stored, decode_identity_value(id, replies[0].str));
    return std::optional(AuditIdentityRow{shard, epoch, id, stored.identity.digest, stored.identity.manifest,
                                          stored.canonical_offset, std::nullopt, replies[1].integer});
  }

 private:
  // SCANs every instance for `pattern`, handing each batch of keys to `batch`.
  Status scan(const std::string& pattern, std::string_view phase, RowPacer& pacer,
              const std::function<Status(RedisConnection&, const std::vector<std::string>&)>& batch) {
    for (auto& conn : connections_) {
      std::string cursor = "0";
      do {
        QIM_ASSIGN_OR_RETURN(RedisReply reply, conn->run({"SCAN", cursor, "MATCH", pattern, "COUNT",
                                                          std::to_string(pacer.page_size())}));
        if (reply.is_error() || reply.elements.size() != 2)
          return Error(Errc::kTransport,
                       "redis " + conn->endpoint().to_string() + ": unexpected reply to SCAN");
        cursor = reply.elements[0].str;
        std::vector<std::string> keys;
        for (const auto& k : reply.elements[1].elements) keys.push_back(k.str);
        if (!keys.empty()) QIM_RETURN_IF_ERROR(batch(*conn, keys));
        pacer.account(keys.size(), phase);
      } while (cursor != "0");
    }
    return {};
  }

  std::vector<std::unique_ptr<RedisConnection>> connections_;
  RedisKeys keys_;
  ShardMap shards_;
};

}  // namespace

Result<std::unique_ptr<AuditReader>> open_redis_audit_reader(const std::vector<std::string>& endpoints,
                                                             const std::string& key_prefix,
                                                             const ShardMap& shards) {
  if (endpoints.empty()) return Error(Errc::kConfig, "QIM_MAILBOX_REDIS names no instance");
  std::vector<std::unique_ptr<RedisConnection>> connections;
  for (const auto& text : endpoints) {
    QIM_ASSIGN_OR_RETURN(RedisEndpoint endpoint, RedisEndpoint::parse(text));
    QIM_ASSIGN_OR_RETURN(auto conn, RedisConnection::open(endpoint, RedisTimeouts{}));
    connections.push_back(std::move(conn));
  }
  return std::unique_ptr<AuditReader>(
      std::make_unique<RedisAuditReader>(std::move(connections), key_prefix, shards));
}

}  // namespace qim
