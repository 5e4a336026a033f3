#include "node/lease/cql_lease_store.h"

#include <fmt/format.h>

#include <cctype>

#include "mailbox/scylla/cql_status.h"

namespace qim {

using scylla::lift;

int32_t cql_lease_ttl_seconds(std::chrono::milliseconds ttl) {
  return static_cast<int32_t>((ttl.count() + 999) / 1000 + 1);
}

namespace {

// An unquoted CQL identifier as system_schema spells it.
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Linearisable: every lease statement is a Paxos round at SERIAL, committed at QUORUM.
const cql::ExecOptions kLwt{.consistency = cql::Consistency::kQuorum,
                            .serial_consistency = cql::Consistency::kSerial};
const cql::ExecOptions kSerialRead{.consistency = cql::Consistency::kSerial};
const cql::ExecOptions kQuorum{.consistency = cql::Consistency::kQuorum};

class CqlLeaseStore final : public LeaseStore {
 public:
  explicit CqlLeaseStore(cql::Session session) : session_(std::move(session)) {}

  Status prepare(const std::string& ks) {
    auto p = [&](cql::Prepared& out, const std::string& text) -> Status {
      QIM_ASSIGN_OR_RETURN(out, lift(session_.prepare(text), "lease store: prepare " + text.substr(0, 60)));
      return {};
    };
    const std::string t = ks + ".shard_lease";
    QIM_RETURN_IF_ERROR(p(read_, "SELECT epoch, owner, moving_to FROM " + t + " WHERE shard = ?"));
    QIM_RETURN_IF_ERROR(p(create_, "INSERT INTO " + t + " (shard, epoch) VALUES (?, 0) IF NOT EXISTS"));
    // A grant by a node that is not a pending move's target requires no move; the target's grant
    // requires the move to be its own and ends it, in the same Paxos round.
    QIM_RETURN_IF_ERROR(p(bump_free_, "UPDATE " + t +
                                          " SET epoch = ? WHERE shard = ? IF epoch = ? AND owner = null AND "
                                          "moving_to = null"));
    QIM_RETURN_IF_ERROR(
        p(bump_free_moved_, "UPDATE " + t +
                                " SET epoch = ?, moving_to = null WHERE shard = ? IF epoch = ? "
                                "AND owner = null AND moving_to = ?"));
    QIM_RETURN_IF_ERROR(p(bump_own_, "UPDATE " + t +
                                         " SET epoch = ? WHERE shard = ? IF epoch = ? AND owner = ? AND "
                                         "moving_to = null"));
    QIM_RETURN_IF_ERROR(p(set_owner_, "UPDATE " + t + " USING TTL ? SET owner = ? WHERE shard = ?"));
    QIM_RETURN_IF_ERROR(
        p(renew_, "UPDATE " + t + " USING TTL ? SET owner = ? WHERE shard = ? IF epoch = ? AND owner = ?"));
    QIM_RETURN_IF_ERROR(
        p(release_, "UPDATE " + t + " SET owner = null WHERE shard = ? IF epoch = ? AND owner = ?"));
    // Every grant moves the epoch, so "same epoch" means "no grant since the read" (the target cannot
    // have become the holder meanwhile).
    QIM_RETURN_IF_ERROR(p(move_, "UPDATE " + t +
                                     " USING TTL ? SET moving_to = ? WHERE shard = ? IF epoch = ? AND "
                                     "moving_to = null"));
    QIM_RETURN_IF_ERROR(
        p(cancel_move_, "UPDATE " + t + " SET moving_to = null WHERE shard = ? IF moving_to = ?"));
    QIM_RETURN_IF_ERROR(p(list_, "SELECT shard, epoch, owner, moving_to FROM " + t));
    const std::string n = ks + ".mailbox_node";
    QIM_RETURN_IF_ERROR(p(beat_, "INSERT INTO " + n + " (scope, node_id) VALUES ('nodes', ?) USING TTL ?"));
    QIM_RETURN_IF_ERROR(p(live_, "SELECT node_id FROM " + n + " WHERE scope = 'nodes'"));
    QIM_RETURN_IF_ERROR(p(leave_, "DELETE FROM " + n + " WHERE scope = 'nodes' AND node_id = ?"));
    return {};
  }

  std::string_view name() const override { return "cql"; }

  Result<Epoch> try_acquire(ShardId shard, const std::string& node, std::chrono::milliseconds ttl,
                            Epoch floor) override {
    if (node.empty() || ttl.count() < 1)
      return Error(Errc::kInvalidArgument, "lease: empty node id or ttl < 1 ms");
    const auto sid = static_cast<int32_t>(shard.value);
    QIM_ASSIGN_OR_RETURN(Row row, read(shard));
    if (!row.exists) {
      QIM_ASSIGN_OR_RETURN(auto created, lift(session_.execute(create_, cql::Values().int32(sid), kLwt),
                                              "lease store: create the lease row"));
      (void)created;  // applied or not: the row exists now
      QIM_ASSIGN_OR_RETURN(row, read(shard));
    }
    if (!row.owner.empty() && row.owner != node) return held(shard, row);
    if (!row.moving_to.empty() && row.moving_to != node) return move_refusal(shard, row.moving_to);
    QIM_ASSIGN_OR_RETURN(Epoch next, next_lease_epoch(shard, row.epoch, floor));
    cql::Batch batch;
    if (!row.moving_to.empty()) {  // the move's target, and the holder gave the shard up
      batch.add(bump_free_moved_, cql::Values()
                                      .int32(static_cast<int32_t>(next.value))
                                      .int32(sid)
                                      .int32(static_cast<int32_t>(row.epoch.value))
                                      .text(node));
    } else if (row.owner.empty()) {
      batch.add(bump_free_, cql::Values()
                                .int32(static_cast<int32_t>(next.value))
                                .int32(sid)
                                .int32(static_cast<int32_t>(row.epoch.value)));
    } else {
      batch.add(bump_own_, cql::Values()
                               .int32(static_cast<int32_t>(next.value))
                               .int32(sid)
                               .int32(static_cast<int32_t>(row.epoch.value))
                               .text(node));
    }
    batch.add(set_owner_, cql::Values().int32(cql_lease_ttl_seconds(ttl)).text(node).int32(sid));
    QIM_ASSIGN_OR_RETURN(auto rows, lift(session_.batch(batch, kLwt), "lease store: grant"));
    if (rows.applied().value_or(false)) return next;
    // Someone else changed the lease between our read and our batch: say who holds it now.
    QIM_ASSIGN_OR_RETURN(row, read(shard));
    if (!row.owner.empty() && row.owner != node) return held(shard, row);
    if (!row.moving_to.empty() && row.moving_to != node) return move_refusal(shard, row.moving_to);
    return Error(kNotOwner, "shard " + std::to_string(shard.value) +
                                ": another node's grant won the race (epoch now " +
                                std::to_string(row.epoch.value) + ")");
  }

  Status renew(ShardId shard, const std::string& node, Epoch epoch, std::chrono::milliseconds ttl) override {
    if (ttl.count() < 1) return Error(Errc::kInvalidArgument, "lease: ttl < 1 ms");
    QIM_ASSIGN_OR_RETURN(auto rows, lift(session_.execute(renew_,
                                                          cql::Values()
                                                              .int32(cql_lease_ttl_seconds(ttl))
                                                              .text(node)
                                                              .int32(static_cast<int32_t>(shard.value))
                                                              .int32(static_cast<int32_t>(epoch.value))
                                                              .text(node),
                                                          kLwt),
                                         "lease store: renew"));
    if (rows.applied().value_or(false)) return {};
    return not_held(shard, node, epoch, "renew");
  }

  Status release(ShardId shard, const std::string& node, Epoch epoch) override {
    QIM_ASSIGN_OR_RETURN(auto rows, lift(session_.execute(release_,
                                                          cql::Values()
                                                              .int32(static_cast<int32_t>(shard.value))
                                                              .int32(static_cast<int32_t>(epoch.value))
                                                              .text(node),
                                                          kLwt),
                                         "lease store: release"));
    if (rows.applied().value_or(false)) return {};
    return not_held(shard, node, epoch, "release");
  }

  Result<std::vector<ShardLease>> list(uint32_t shard_count) override {
    std::vector<ShardLease> out;
    for (uint32_t s = 0; s < shard_count; ++s) out.push_back(ShardLease{ShardId{s}, Epoch{0}, ""});
    QIM_ASSIGN_OR_RETURN(auto rows, lift(session_.execute(list_, {}, kQuorum), "lease store: list"));
    for (const auto& r : rows) {
      auto shard = r.get_i32(0);
      if (!shard.ok() || *shard < 0 || static_cast<uint32_t>(*shard) >= shard_count) continue;
      ShardLease& l = out[static_cast<size_t>(*shard)];
      if (auto e = r.get_i32(1); e.ok()) l.epoch = Epoch{static_cast<uint32_t>(*e)};
      if (auto o = r.get_text(2); o.ok()) l.owner = std::string(*o);
      if (auto m = r.get_text(3); m.ok()) l.moving_to = std::string(*m);
    }
    return out;
  }

  Status request_move(ShardId shard, const std::string& to, std::chrono::milliseconds ttl) override {
    if (to.empty() || ttl.count() < 1)
      return Error(Errc::kInvalidArgument, "move: empty node id or ttl < 1 ms");
    const auto sid = static_cast<int32_t>(shard.value);
    QIM_ASSIGN_OR_RETURN(Row row, read(shard));
    if (!row.exists) {
      QIM_ASSIGN_OR_RETURN(auto created, lift(session_.execute(create_, cql::Values().int32(sid), kLwt),
                                              "lease store: create the lease row"));
      (void)created;
      QIM_ASSIGN_OR_RETURN(row, read(shard));
    }
    if (!row.moving_to.empty()) return move_pending(shard, row.moving_to);
    if (row.owner == to) return already_holds(shard, to, row.epoch);
    QIM_ASSIGN_OR_RETURN(auto rows, lift(session_.execute(move_,
                                                          cql::Values()
                                                              .int32(cql_lease_ttl_seconds(ttl))
                                                              .text(to)
                                                              .int32(sid)
                                                              .int32(static_cast<int32_t>(row.epoch.value)),
                                                          kLwt),
                                         "lease store: move"));
    if (rows.applied().value_or(false)) return {};
    QIM_ASSIGN_OR_RETURN(row, read(shard));
    if (!row.moving_to.empty()) return move_pending(shard, row.moving_to);
    return Error(Errc::kInvariant,
                 "shard " + std::to_string(shard.value) +
                     ": its lease was granted again while the move was recorded (epoch now " +
                     std::to_string(row.epoch.value) + "); try again");
  }

  Status cancel_move(ShardId shard, const std::string& to) override {
    QIM_ASSIGN_OR_RETURN(
        auto rows,
        lift(session_.execute(cancel_move_, cql::Values().int32(static_cast<int32_t>(shard.value)).text(to),
                              kLwt),
             "lease store: cancel move"));
    if (rows.applied().value_or(false)) return {};
    return no_move(shard, to);
  }

  Status heartbeat(const std::string& node, std::chrono::milliseconds ttl) override {
    QIM_ASSIGN_OR_RETURN(
        auto rows,
        lift(session_.execute(beat_, cql::Values().text(node).int32(cql_lease_ttl_seconds(ttl)), kQuorum),
             "lease store: heartbeat"));
    (void)rows;
    return {};
  }

  Result<std::vector<std::string>> live_nodes() override {
    QIM_ASSIGN_OR_RETURN(auto rows, lift(session_.execute(live_, {}, kQuorum), "lease store: live nodes"));
    std::vector<std::string> out;
    for (const auto& r : rows) {
      if (auto n = r.get_text(0); n.ok()) out.emplace_back(*n);
    }
    return out;
  }

  Status leave(const std::string& node) override {
    QIM_ASSIGN_OR_RETURN(
        auto rows, lift(session_.execute(leave_, cql::Values().text(node), kQuorum), "lease store: leave"));
    (void)rows;
    return {};
  }

 private:
  struct Row {
    bool exists = false;
    Epoch epoch{0};
    std::string owner;
    std::string moving_to;
  };

  Result<Row> read(ShardId shard) {
    QIM_ASSIGN_OR_RETURN(
        auto rows,
        lift(session_.execute(read_, cql::Values().int32(static_cast<int32_t>(shard.value)), kSerialRead),
             "lease store: read"));
    Row row;
    if (rows.empty()) return row;
    row.exists = true;
    if (auto e = rows[0].get_i32(0); e.ok()) row.epoch = Epoch{static_cast<uint32_t>(*e)};
    if (auto o = rows[0].get_text(1); o.ok()) row.owner = std::string(*o);
    if (auto m = rows[0].get_text(2); m.ok()) row.moving_to = std::string(*m);
    return row;
  }

  static Error held(ShardId shard, const Row& row) {
    return Error(kNotOwner, "shard " + std::to_string(shard.value) + " is leased to " + row.owner +
                                " at epoch " + std::to_string(row.epoch.value));
  }

  Error not_held(ShardId shard, const std::string& node, Epoch epoch, std::string_view what) {
    auto row = read(shard);
    const std::string now = !row.ok()            ? std::string("unknown")
                            : row->owner.empty() ? std::string("free")
                                                 : row->owner;
    return Error(kNotOwner, "lease " + std::string(what) + ": shard " + std::to_string(shard.value) +
                                " is not leased to " + node + " at epoch " + std::to_string(epoch.value) +
                                " (now: " + now +
                                (row.ok() ? " at epoch " + std::to_string(row->epoch.value) : "") + ")");
  }

  cql::Session session_;
  cql::Prepared read_, create_, bump_free_, bump_free_moved_, bump_own_, set_owner_, renew_, release_, move_,
      cancel_move_, list_, beat_, live_, leave_;
};

}  // namespace

Result<std::unique_ptr<LeaseStore>> open_cql_lease_store(const CqlLeaseOptions& options) {
  if (options.hosts.empty()) return Error(Errc::kConfig, "QIM_CQL_HOSTS: no host for the shard leases");
  QIM_ASSIGN_OR_RETURN(cql::Session session,
                       lift(cql::Session::connect(cql::SessionOptions{
                                .hosts = options.hosts, .request_timeout_ms = options.request_timeout_ms}),
                            "lease store: connect to CQL hosts"));
  const std::string& ks = options.keyspace;
  const std::vector<std::string> ddl = {
      fmt::format("CREATE KEYSPACE IF NOT EXISTS {} WITH replication = {{'class': 'SimpleStrategy', "
                  "'replication_factor': {}}}",
                  ks, options.replication_factor),
      fmt::format("CREATE TABLE IF NOT EXISTS {}.shard_lease (shard int PRIMARY KEY, epoch int, owner text, "
                  "moving_to text)",
                  ks),
      fmt::format("CREATE TABLE IF NOT EXISTS {}.mailbox_node (scope text, node_id text, PRIMARY KEY (scope, "
                  "node_id))",
                  ks),
  };
  for (const auto& statement : ddl) {
    QIM_ASSIGN_OR_RETURN(auto done, lift(session.query(statement, {}, cql::ExecOptions{.timeout_ms = 60'000}),
                                         "lease store: schema: " + statement.substr(0, 72)));
    (void)done;
  }
  // A table created before moves existed lacks the move column: add it (schema changes of a column that
  // every statement but the moves' leaves null are safe while nodes run).
  QIM_ASSIGN_OR_RETURN(
      auto columns,
      lift(session.query("SELECT column_name FROM system_schema.columns WHERE keyspace_name = '" + lower(ks) +
                             "' AND table_name = 'shard_lease'",
                         {}, cql::ExecOptions{.timeout_ms = 60'000}),
           "lease store: schema: read the columns of shard_lease"));
  bool has_move_column = false;
  for (const auto& r : columns) {
    if (auto name = r.get_text(0); name.ok() && *name == "moving_to") has_move_column = true;
  }
  if (!has_move_column) {
    QIM_ASSIGN_OR_RETURN(auto added,
                         lift(session.query("ALTER TABLE " + ks + ".shard_lease ADD moving_to text", {},
                                            cql::ExecOptions{.timeout_ms = 60'000}),
                              "lease store: schema: add shard_lease.moving_to"));
    (void)added;
  }
  auto store = std::make_unique<CqlLeaseStore>(std::move(session));
  QIM_RETURN_IF_ERROR(store->prepare(ks));
  return std::unique_ptr<LeaseStore>(std::move(store));
}

}  // namespace qim
