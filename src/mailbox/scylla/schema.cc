#include "mailbox/scylla/schema.h"

#include <fmt/format.h>

#include "mailbox/scylla/component_schema.h"
#include "mailbox/scylla/cql_status.h"

namespace qim::scylla {

namespace {

// {ks} is replaced by the keyspace. Comments say what each table is for.
const std::vector<const char*> kTables = {
    // One row per (shard, epoch); a read takes the first row: the highest epoch.
    R"(CREATE TABLE IF NOT EXISTS {ks}.mailbox_shard_frontier (
         shard int, epoch int, frontier_offset bigint,
         PRIMARY KEY (shard, epoch)) WITH CLUSTERING ORDER BY (epoch DESC))",
    // Dispatch identity; a new epoch is a new partition. TTL 31 days, never deleted.
    R"(CREATE TABLE IF NOT EXISTS {ks}.mailbox_dispatch (
         shard int, epoch int, dispatch_id text,
         digest bigint, manifest blob, canonical_offset bigint,
         PRIMARY KEY ((shard, epoch, dispatch_id))))",
    // Mailbox entries in mailbox_seq order: (epoch, log_offset) is compose(epoch, offset).
    R"(CREATE TABLE IF NOT EXISTS {ks}.mailbox_entry (
         user_id text, epoch int, log_offset bigint,
         message_id bigint, conversation text, sender text, sender_device text, client_msg_id text,
         server_time_ms bigint, body blob, reply_to bigint,
         PRIMARY KEY (user_id, epoch, log_offset)) WITH CLUSTERING ORDER BY (epoch ASC, log_offset ASC))",
    // Retention proof: the max mailbox_seq per (user, day, epoch); reads take the max over epochs.
    R"(CREATE TABLE IF NOT EXISTS {ks}.mailbox_retention_bucket_v2 (
         user_id text, day_bucket bigint, epoch int, bucket_max_seq bigint,
         PRIMARY KEY ((user_id, day_bucket), epoch)))",
    // The per-user retention ledger: live day buckets and the trim. LWT only.
    R"(CREATE TABLE IF NOT EXISTS {ks}.mailbox_retention_meta (
         user_id text PRIMARY KEY, live_buckets set<bigint>, trim_seq bigint))",
    // The users of a shard with a retention ledger, for the shard owner's sweep: written (plain, idempotent)
    // with each ledger registration, paged in user_id order. Never deleted.
    R"(CREATE TABLE IF NOT EXISTS {ks}.mailbox_retention_user (
         shard int, user_id text, PRIMARY KEY (shard, user_id)))",
    R"(CREATE TABLE IF NOT EXISTS {ks}.qim_schema_version (component text PRIMARY KEY, version int))",
};

// Form A (pre-ADR-0022), for the benchmark's baseline only: per-lane W and source rows, all LWT.
const std::vector<const char*> kLwtFormTables = {
    R"(CREATE TABLE IF NOT EXISTS {ks}.lane_watermark (
         shard int, lane bigint, epoch int, w bigint, PRIMARY KEY ((shard, lane))))",
    R"(CREATE TABLE IF NOT EXISTS {ks}.lane_dispatch (
         shard int, lane bigint, seq bigint, dispatch_id text,
         PRIMARY KEY ((shard, lane), seq)))",
    R"(CREATE TABLE IF NOT EXISTS {ks}.lwt_dispatch (
         shard int, epoch int, dispatch_id text,
         digest bigint, manifest blob, canonical_offset bigint,
         PRIMARY KEY ((shard, epoch, dispatch_id))))",
    R"(CREATE TABLE IF NOT EXISTS {ks}.lwt_retention_bucket (
         user_id text, day_bucket bigint, bucket_max_seq bigint,
         PRIMARY KEY ((user_id, day_bucket))))",
};

Status run_ddl(const cql::Session& session, const std::string& cql) {
  auto done = session.query(cql, {}, cql::ExecOptions{.timeout_ms = 60'000});
  if (!done.ok()) return to_error(done.error(), "schema: " + cql.substr(0, 72));
  return {};
}

}  // namespace

Status ensure_schema(const cql::Session& session, const SchemaOptions& options) {
  const std::string ks = options.keyspace;
  QIM_RETURN_IF_ERROR(run_ddl(session, fmt::format("CREATE KEYSPACE IF NOT EXISTS {} WITH replication = "
                                                   "{{'class': 'SimpleStrategy', 'replication_factor': {}}}",
                                                   ks, options.replication_factor)));
  auto version =
      session.query(fmt::format("SELECT version FROM {}.qim_schema_version WHERE component = 'mailbox'", ks));
  if (version.ok() && !version->empty()) {
    auto v = version->row(0).get_i32(0);
    if (v.ok() && *v > kSchemaVersion) {
      return Error(Errc::kConfig, fmt::format("keyspace {} holds mailbox schema version {}, newer than this "
                                              "binary's {}; refusing to use it",
                                              ks, *v, kSchemaVersion));
    }
  }
  auto create = [&](const std::vector<const char*>& tables) -> Status {
    for (const char* t : tables)
      QIM_RETURN_IF_ERROR(run_ddl(session, fmt::format(fmt::runtime(t), fmt::arg("ks", ks))));
    return {};
  };
  QIM_RETURN_IF_ERROR(create(kTables));
  // Replies (docs/adr/0125): a table created before them gains the column.
  QIM_RETURN_IF_ERROR(ensure_column(session, ks, "mailbox_entry", "reply_to", "bigint"));
  if (options.lwt_form) QIM_RETURN_IF_ERROR(create(kLwtFormTables));
  return run_ddl(session,
                 fmt::format("INSERT INTO {}.qim_schema_version (component, version) VALUES ('mailbox', {})",
                             ks, kSchemaVersion));
}

}  // namespace qim::scylla
