// `qim admin audit dispatch`, `frontier show`, `mailbox read`, `dispatch show` (docs/operations.md).
#include "app/ops_commands.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <map>
#include <set>

#include "app/config.h"
#include "app/instance_files.h"
#include "gateway/protocol/json_writer.h"
#include "mailbox/open_audit_reader.h"
#include "node/lease/lease_config.h"
#include "ops/dispatch_audit.h"

namespace qim {

namespace {

int fail(const std::string& what, const Error& e) {
  fmt::print(stderr, "{}: {}\n", what, e.to_string());
  return e.code() == Errc::kConfig || e.code() == Errc::kInvalidArgument ? kExitRefused : kExitFailed;
}

Result<std::vector<ShardId>> shards_of(const std::vector<uint32_t>& given, const ShardMap& map) {
  std::vector<ShardId> out;
  for (uint32_t s : given) {
    if (Status st = map.check(ShardId{s}); !st.ok())
      return Error(Errc::kInvalidArgument, fmt::format("--shard {}: unknown shard (QIM_SHARDS is {}: 0..{})",
                                                       s, map.shard_count(), map.shard_count() - 1));
    out.push_back(ShardId{s});
  }
  return out;
}

// What the shard-walking commands start from: the services' configuration, its shard map, the shards
// asked for (checked against the map) and the store's audit reader. InvalidArgument for an unknown
// shard; the configuration's or the store's error otherwise.
struct ShardScope {
  AppConfig config;
  ShardMap map;
  std::vector<ShardId> shards;
  std::unique_ptr<AuditReader> reader;
};

Result<ShardScope> open_scope(const EnvLookup& env, const std::vector<uint32_t>& given,
                              std::string_view command) {
  QIM_ASSIGN_OR_RETURN(AppConfig config, app_config_from_env(env));
  QIM_ASSIGN_OR_RETURN(ShardMap map, ShardMap::create(config.shards));
  QIM_ASSIGN_OR_RETURN(std::vector<ShardId> shards, shards_of(given, map));
  if (config.store.backend == "embedded") QIM_RETURN_IF_ERROR(refuse_if_in_use(config.data_dir, command));
  QIM_ASSIGN_OR_RETURN(std::unique_ptr<AuditReader> reader, open_audit_reader(config.store));
  return ShardScope{std::move(config), std::move(map), std::move(shards), std::move(reader)};
}

// An embedded store is a directory; looking at one that is not there must not create it, and one a
// running `qim up` holds cannot be opened (RocksDB's LOCK): say which process holds it.
Status check_store_exists(const AppConfig& config, std::string_view command) {
  if (config.store.backend != "embedded") return {};
  if (!std::filesystem::exists(config.store.data_dir + "/CURRENT"))
    return Error(Errc::kNotFound,
                 "no embedded mailbox store in " + config.store.data_dir + " (QIM_DATA_DIR / --data-dir)");
  return refuse_if_in_use(config.data_dir, command);
}

Result<uint64_t> parse_u64(std::string_view text, const std::string& what) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return Error(Errc::kInvalidArgument, what + " '" + std::string(text) + "' is not a whole number");
  return v;
}

// "epoch:offset" or the raw 64-bit value.
Result<MailboxSeq> parse_seq(const std::string& text) {
  if (auto colon = text.find(':'); colon != std::string::npos) {
    QIM_ASSIGN_OR_RETURN(uint64_t epoch, parse_u64(std::string_view(text).substr(0, colon), "--after epoch"));
    QIM_ASSIGN_OR_RETURN(uint64_t offset,
                         parse_u64(std::string_view(text).substr(colon + 1), "--after offset"));
    if (epoch > kMaxEpoch)
      return Error(Errc::kInvalidArgument, "--after epoch " + std::to_string(epoch) + " is not below 2^16");
    return compose(Epoch{static_cast<uint32_t>(epoch)}, Offset{offset});
  }
  QIM_ASSIGN_OR_RETURN(uint64_t raw, parse_u64(text, "--after"));
  return MailboxSeq::from_raw(raw);
}

// The shard of a fanout dispatch id, "m<message>-s<shard>" or "m<message>-s<shard>-p<part>".
std::optional<uint32_t> shard_of_dispatch_id(const std::string& id) {
  const auto dash = id.find("-s");
  if (id.empty() || id[0] != 'm' || dash == std::string::npos) return std::nullopt;
  std::string_view shard = std::string_view(id).substr(dash + 2);
  shard = shard.substr(0, shard.find("-p"));
  auto v = parse_u64(shard, "shard");
  if (!v.ok() || *v > kMaxShards) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

std::string manifest_text(const Manifest& m) {
  std::string out;
  for (uint32_t c : m.entry_counts) out += (out.empty() ? "" : ",") + std::to_string(c);
  return "[" + out + "]";
}

}  // namespace

int run_audit_dispatch(const EnvLookup& env, const AuditCommand& command) {
  const char* what = "qim admin audit dispatch";
  if (command.all == !command.shards.empty())
    return fail(what, Error(Errc::kInvalidArgument, "give --shard N (repeatable) or --all"));
  auto scope = open_scope(env, command.shards, what);
  if (!scope.ok()) return fail(what, scope.error());
  AuditRequest request{scope->map, scope->shards, command.rate, [](uint64_t rows, std::string_view phase) {
                         fmt::print(stderr, "audit: {} rows read so far ({})\n", rows, phase);
                       }};
  auto report = audit_dispatch(*scope->reader, request);
  if (!report.ok()) return fail(what, report.error());
  fmt::print("{}", command.json ? render_audit_json(*report) : render_audit_table(*report));
  return report->findings.empty() ? kExitOk : kExitFindings;
}

int run_frontier_show(const EnvLookup& env, const FrontierCommand& command) {
  const char* what = "qim admin frontier show";
  auto scope = open_scope(env, command.shards, what);
  if (!scope.ok()) return fail(what, scope.error());
  std::set<uint32_t> wanted;
  for (ShardId s : scope->shards) wanted.insert(s.value);
  std::map<std::pair<uint32_t, uint32_t>, AuditFrontierRow> rows;
  std::vector<AuditCorruptRow> corrupt;
  RowPacer pacer(100'000, {});
  Status walked = scope->reader->frontiers(
      scope->shards, pacer,
      [&](const AuditFrontierRow& r) -> Status {
        if (wanted.empty() || wanted.contains(r.shard.value)) rows[{r.shard.value, r.epoch.value}] = r;
        return {};
      },
      [&](const AuditCorruptRow& c) { corrupt.push_back(c); });
  if (!walked.ok()) return fail(what, walked.error());
  // Owner and lease: from the deployment's lease store where there is one (redis, scylla). Without one
  // (embedded: one process; or nodes pinned by QIM_OWNED_SHARDS) the store cannot say who owns a shard.
  std::map<uint32_t, ShardLease> leases;
  std::string lease_note;
  if (auto store = open_lease_store(scope->config.store); store.ok()) {
    auto listed = (*store)->list(scope->config.shards);
    if (listed.ok()) {
      for (const auto& l : *listed) leases[l.shard.value] = l;
    } else {
      lease_note = "leases unreadable: " + listed.error().to_string();
    }
  } else {
    lease_note = "no lease store: " + store.error().message();
  }
  struct Owner {
    std::string owner, lease_epoch, moving_to;  // moving_to: a pending `qim admin shard move` (or empty)
  };
  auto owner_of = [&](uint32_t shard) -> Owner {
    auto it = leases.find(shard);
    if (it == leases.end()) return {"-", "-", ""};
    const ShardLease& l = it->second;
    if (l.epoch.value == 0) return {"(never leased)", "-", l.moving_to};
    return {l.free() ? "(free)" : l.owner, std::to_string(l.epoch.value), l.moving_to};
  };
  JsonWriter w;
  std::string table = fmt::format("{:>5} {:>5} {:>15} {:>22} {:<26} {:<20} {:<11} {}\n", "shard", "epoch",
                                  "offset", "mailbox_seq", "writetime", "owner", "lease epoch", "moving to");
  w.begin_object().field("backend", scope->reader->backend()).key("frontiers").begin_array();
  bool bad = !corrupt.empty();
  for (const auto& [key, r] : rows) {
    const MailboxSeq seq = *compose(r.epoch, r.offset);
    std::string check = "n/a (no write timestamps)";
    if (r.writetime) {
      const bool ok = *r.writetime == static_cast<int64_t>(r.offset.value);
      bad = bad || !ok;
      check = ok ? "ok" : fmt::format("MISMATCH: {}", *r.writetime);
    }
    const Owner o = owner_of(r.shard.value);
    table += fmt::format("{:>5} {:>5} {:>15} {:>22} {:<26} {:<20} {:<11} {}\n", r.shard.value, r.epoch.value,
                         r.offset.value, seq.to_string(), check, o.owner, o.lease_epoch,
                         o.moving_to.empty() ? "-" : o.moving_to);
    w.begin_object().key("shard").uint64(r.shard.value).key("epoch").uint64(r.epoch.value);
    w.key("offset").uint64(r.offset.value).field("mailbox_seq", seq.to_string()).key("writetime");
    r.writetime ? w.int64(*r.writetime) : w.null();
    w.field("owner", o.owner).field("lease_epoch", o.lease_epoch).key("moving_to");
    o.moving_to.empty() ? w.null() : w.string(o.moving_to);
    w.end_object();
  }
  if (!lease_note.empty()) table += "note: " + lease_note + "\n";
  w.end_array().key("corrupt").begin_array();
  for (const auto& c : corrupt) {
    w.string(c.where + ": " + c.problem);
    table += "corrupt: " + c.where + ": " + c.problem + "\n";
  }
  w.end_array().end_object();
  if (rows.empty() && corrupt.empty()) table += "(no frontier rows: no shard has finished a record)\n";
  fmt::print("{}", command.json ? w.take() + "\n" : table);
  return bad ? kExitFindings : kExitOk;
}

int run_mailbox_read(const EnvLookup& env, const MailboxReadCommand& command) {
  const char* what = "qim admin mailbox read";
  auto user = UserId::parse(command.user);
  if (!user.ok()) return fail(what, Error(Errc::kInvalidArgument, "USER: " + user.error().message()));
  auto after = parse_seq(command.after);
  if (!after.ok()) return fail(what, after.error());
  auto config = app_config_from_env(env);
  if (!config.ok()) return fail(what, config.error());
  if (Status s = check_store_exists(*config, what); !s.ok()) return fail(what, s.error());
  auto store = open_mailbox_store(config->store);
  if (!store.ok()) return fail(what + std::string(": opening the store"), store.error());
  auto page = (*store)->read_mailbox(MailboxQuery{*user, *after, command.limit});
  if (!page.ok()) return fail(what, page.error());
  if (command.json) {
    JsonWriter w;
    w.begin_object().field("user", user->str()).field("frontier", page->frontier.to_string());
    w.field("trim", page->trim.to_string()).field("more", page->more).key("entries").begin_array();
    for (const auto& e : page->entries) {
      const Message& m = e.message;
      w.begin_object().field("seq", e.seq.to_string()).key("message_id").uint64_as_string(m.id.value);
      w.field("conversation", m.conversation.str()).field("sender", m.sender.str());
      w.field("client_msg_id", m.client_msg_id)
          .field("server_time_ms", m.server_time_ms)
          .field("body", m.body);
      w.end_object();
    }
    w.end_array().end_object();
    fmt::print("{}\n", w.take());
    return kExitOk;
  }
  fmt::print("user {}: {} entries after {} (frontier {}, trim {}{})\n", user->str(), page->entries.size(),
             after->to_string(), page->frontier.to_string(), page->trim.to_string(),
             page->more ? ", more follow" : "");
  for (const auto& e : page->entries) {
    std::string body;
    append_json_string(body, e.message.body);
    fmt::print("{:>14} {:>20} {:<24} {:<16} {}\n", e.seq.to_string(), e.message.id.value,
               e.message.conversation.str(), e.message.sender.str(), body);
  }
  return kExitOk;
}

int run_dispatch_show(const EnvLookup& env, const DispatchShowCommand& command) {
  const char* what = "qim admin dispatch show";
  auto id = DispatchId::parse(command.id);
  if (!id.ok()) return fail(what, Error(Errc::kInvalidArgument, "ID: " + id.error().message()));
  const auto shard_value = command.shard ? command.shard : shard_of_dispatch_id(command.id);
  if (!shard_value)
    return fail(what, Error(Errc::kInvalidArgument, "'" + command.id +
                                                        "' is not a fanout id (m<message>-s<shard>): "
                                                        "give --shard"));
  auto scope = open_scope(env, {*shard_value}, what);
  if (!scope.ok()) return fail(what, scope.error());
  const ShardId shard = scope->shards[0];
  // The epochs to look at: every epoch up to the highest the shard has a frontier row at, and the next
  // one (an owner that began records but never finished one has no frontier row yet).
  uint32_t top = 0;
  RowPacer pacer(100'000, {});
  Status walked = scope->reader->frontiers(
      {shard}, pacer,
      [&](const AuditFrontierRow& r) -> Status {
        if (r.shard == shard) top = std::max(top, r.epoch.value);
        return {};
      },
      [](const AuditCorruptRow&) {});
  if (!walked.ok()) return fail(what, walked.error());
  JsonWriter w;
  w.begin_object()
      .field("dispatch_id", id->str())
      .key("shard")
      .uint64(shard.value)
      .key("epochs")
      .begin_array();
  std::string table =
      fmt::format("dispatch {} on shard {}\n{:>5} {:>18} {:>16} {:>12} {:>10}  {}\n", id->str(), shard.value,
                  "epoch", "digest", "canonical_offset", "writetime", "ttl_s", "manifest");
  int found = 0;
  for (uint32_t e = 1; e <= std::min<uint32_t>(top + 1, kMaxEpoch); ++e) {
    auto row = scope->reader->identity(shard, Epoch{e}, *id);
    if (!row.ok()) return fail(what, row.error());
    if (!*row) continue;
    ++found;
    const AuditIdentityRow& r = **row;
    table += fmt::format("{:>5} {:>18} {:>16} {:>12} {:>10}  {}\n", e, fmt::format("{:016x}", r.digest),
                         r.canonical.value, r.writetime ? std::to_string(*r.writetime) : "-",
                         r.ttl_seconds ? std::to_string(*r.ttl_seconds) : "-", manifest_text(r.manifest));
    w.begin_object().key("epoch").uint64(e).field("digest", fmt::format("{:016x}", r.digest));
    w.key("canonical_offset").uint64(r.canonical.value).key("writetime");
    r.writetime ? w.int64(*r.writetime) : w.null();
    w.key("ttl_seconds");
    r.ttl_seconds ? w.int64(*r.ttl_seconds) : w.null();
    w.field("manifest", manifest_text(r.manifest)).end_object();
  }
  w.end_array().end_object();
  if (found == 0)
    return fail(what, Error(Errc::kNotFound, fmt::format("no identity of {} on shard {} at epochs 1..{}",
                                                         id->str(), shard.value, top + 1)));
  fmt::print("{}", command.json ? w.take() + "\n" : table);
  return kExitOk;
}

int run_schema(const EnvLookup& env, const SchemaCommand& command) {
  const std::string what = command.apply ? "qim admin schema apply" : "qim admin schema check";
  auto config = app_config_from_env(env);
  if (!config.ok()) return fail(what, config.error());
  auto outcome = store_schema(config->store, command.apply);
  if (!outcome.ok()) return fail(what, outcome.error());
  for (const auto& n : outcome->notes) fmt::print("note: {}\n", n);
  for (const auto& p : outcome->problems) fmt::print("problem: {}\n", p);
  if (!outcome->applicable) return kExitOk;
  if (!outcome->problems.empty()) {
    fmt::print("{}: keyspace {}: {} problems{}\n", what, config->store.cql_keyspace, outcome->problems.size(),
               command.apply && !outcome->applied ? "; nothing applied" : "");
    return kExitFindings;
  }
  fmt::print("{}: keyspace {} {}\n", what, config->store.cql_keyspace,
             outcome->applied ? "created or complete, and keeps every rule" : "keeps every rule");
  return kExitOk;
}

int run_retention_sweep(const EnvLookup& env, const RetentionSweepCommand& command) {
  const char* what = "qim admin retention sweep";
  if (command.all == !command.user.empty())
    return fail(what, Error(Errc::kInvalidArgument, "give USER or --all"));
  std::optional<UserId> one;
  if (!command.all) {
    auto user = UserId::parse(command.user);
    if (!user.ok()) return fail(what, Error(Errc::kInvalidArgument, "USER: " + user.error().message()));
    one = *user;
  }
  auto config = app_config_from_env(env);
  if (!config.ok()) return fail(what, config.error());
  if (Status s = check_store_exists(*config, what); !s.ok()) return fail(what, s.error());
  auto store = open_mailbox_store(config->store);
  if (!store.ok()) return fail(what + std::string(": opening the store"), store.error());
  MailboxStore& st = **store;
  uint64_t swept = 0, moved = 0, failed = 0;
  RowPacer pacer(command.rate, [](uint64_t users, std::string_view) {
    fmt::print(stderr, "retention sweep: {} users so far\n", users);
  });
  auto sweep = [&](const UserId& user) {
    // The trim before: what a reader is told (a failing read only leaves it unknown).
    auto before = st.read_mailbox(MailboxQuery{user, MailboxSeq{}, 1});
    auto outcome = st.sweep_retention(user);
    ++swept;
    pacer.account(1, "users");
    if (!outcome.ok()) {
      ++failed;
      fmt::print("{}: {}\n", user.str(), outcome.error().to_string());
      return;
    }
    const std::string was = before.ok() ? before->trim.to_string() : std::string("?");
    if (outcome->buckets_expired == 0) {
      if (one) fmt::print("{}: nothing to sweep (trim {})\n", user.str(), outcome->trim.to_string());
      return;
    }
    ++moved;
    fmt::print("{}: trim {} -> {}, {} day buckets expired\n", user.str(), was, outcome->trim.to_string(),
               outcome->buckets_expired);
  };
  if (one) {
    sweep(*one);
  } else {
    for (uint32_t shard = 0; shard < config->shards; ++shard) {
      std::string after;
      for (;;) {
        auto users = st.list_retention_users(ShardId{shard}, after, 1000);
        if (!users.ok()) return fail(what, users.error());
        for (const UserId& u : *users) sweep(u);
        if (users->size() < 1000) break;
        after = users->back().str();
      }
    }
    fmt::print("{} users swept, {} trims moved, {} failed\n", swept, moved, failed);
  }
  return failed == 0 ? kExitOk : kExitFailed;
}

}  // namespace qim
