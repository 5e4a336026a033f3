// The inbox on CQL: the tables and why each is ordered as it is are in cql_inbox_backend.h; the
// decision in docs/adr/0074-inbox-on-cql.md.
#include "inbox/cql/cql_inbox_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "inbox/cql/inbox_cells.h"
#include "inbox/entry_ref.h"
#include "mailbox/scylla/component_schema.h"
#include "mailbox/scylla/cql/batch_writer.h"
#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/write_timestamps.h"

namespace qim {

namespace {

using cql::Values;
using scylla::lift;

// 3: inbox_user, one partition per user (decision 0169); 2: inbox_activity beside inbox_conversation and
// inbox_index (decision 0143); 1: without the activity index. A keyspace of 1 or 2 has its rows copied
// into inbox_user once at open (cql_migrate.cc).
inline constexpr int kInboxSchemaVersion = 3;

// {ks} is replaced by the keyspace. No table here is ever written with a wall-clock timestamp, nor deleted
// from at one: a tombstone at wall-clock time would shadow every later offset-timestamped write. The only
// deletes (stale positions) carry the deleted cell's own offset.
const char* const kTables[] = {
    // What the inbox keeps of a user's entries, in one partition (cql_inbox_backend.h has the three kinds
    // of row): the writes one call makes for a user are one mutation.
    R"(CREATE TABLE IF NOT EXISTS {ks}.inbox_user (
         user_id text, kind int, conversation text, counts boolean, epoch int, log_offset bigint,
         positioned text, message_id bigint, sender text, server_time_ms bigint, preview blob,
         last_offset bigint, last_counts boolean,
         PRIMARY KEY (user_id, kind, conversation, counts, epoch, log_offset, positioned))
         WITH CLUSTERING ORDER BY (kind ASC, conversation ASC, counts DESC, epoch DESC, log_offset DESC,
                                   positioned ASC))",
    // Read marks: read_offset USING TIMESTAMP read_offset, one row per epoch; the first row is the highest.
    R"(CREATE TABLE IF NOT EXISTS {ks}.inbox_read_mark (
         user_id text, conversation text, epoch int, read_offset bigint,
         PRIMARY KEY (user_id, conversation, epoch)) WITH CLUSTERING ORDER BY (conversation ASC, epoch DESC))",
    // Receipts of a conversation: read_through USING TIMESTAMP the message id's Outbox offset.
    R"(CREATE TABLE IF NOT EXISTS {ks}.inbox_receipt (
         conversation text, user_id text, read_through bigint,
         PRIMARY KEY (conversation, user_id)))",
    // A user's settings: every cell USING TIMESTAMP the setting's version (ms).
    R"(CREATE TABLE IF NOT EXISTS {ks}.inbox_setting (
         user_id text, name text, value text, version bigint,
         PRIMARY KEY (user_id, name)))",
};

int32_t i32(uint32_t v) {
  return static_cast<int32_t>(v);
}
int64_t i64(uint64_t v) {
  return static_cast<int64_t>(v);
}

// The outcome of a write as a Status naming `what`.
Status written(const cql::Result<cql::Rows>& result, std::string_view what) {
  if (!result.ok()) return scylla::to_error(result.error(), what);
  return {};
}

// The key of a conversation row: a call's entries raise it once, to their highest seq.
using RowKey = std::tuple<std::string, std::string, uint32_t>;  // user, conversation, epoch

// The inbox schema version the keyspace records, 0 for none (no keyspace, no table, no row). A failed
// read is an error, never "none": a keyspace of 1 or 2 taken for a new one would never have its rows copied.
Result<int> recorded_schema(const cql::Session& session, const CqlInboxOptions& options) {
  const cql::ExecOptions o{.consistency = options.consistency};
  QIM_ASSIGN_OR_RETURN(
      cql::Rows table,
      lift(session.query("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? "
                         "AND table_name = 'qim_schema_version'",
                         Values().text(options.keyspace), o),
           "inbox: look for qim_schema_version"));
  if (table.empty()) return 0;
  QIM_ASSIGN_OR_RETURN(cql::Rows version,
                       lift(session.query(fmt::format("SELECT version FROM {}.qim_schema_version WHERE "
                                                      "component = 'inbox'",
                                                      options.keyspace),
                                          {}, o),
                            "inbox: read the inbox schema version"));
  if (version.empty()) return 0;
  QIM_ASSIGN_OR_RETURN(int32_t v, lift(version.row(0).get_i32(0), "inbox: qim_schema_version.version"));
  return static_cast<int>(v);
}

}  // namespace

Result<std::unique_ptr<CqlInboxBackend>> CqlInboxBackend::open(const CqlInboxOptions& options) {
  if (!scylla::plain_identifier(options.keyspace)) {
    return Error(Errc::kConfig, "inbox keyspace '" + options.keyspace +
                                    "': expected 1..64 letters, digits and underscores (QIM_CQL_KEYSPACE)");
  }
  const int64_t ttl = (options.entry_ttl_ms + 999) / 1000;
  if (options.entry_ttl_ms <= 0 || ttl > kMaxTtlSeconds) {
    return Error(Errc::kConfig, fmt::format("inbox: entry TTL {} ms is outside 1 s..20 years (the mailbox "
                                            "retention plus its slack)",
                                            options.entry_ttl_ms));
  }
  if (options.batch_rows < 1 || options.batch_rows > 256) {
    return Error(Errc::kConfig, fmt::format("inbox: batch rows {} is outside 1..256 (QIM_CQL_BATCH_ROWS)",
                                            options.batch_rows));
  }
  QIM_ASSIGN_OR_RETURN(cql::Session session,
                       lift(cql::Session::connect(cql::SessionOptions{
                                .hosts = options.hosts, .request_timeout_ms = options.request_timeout_ms}),
                            "inbox: connect to CQL hosts"));
  // A keyspace of schema 1 or 2 keeps its rows in the older tables: inbox_user is made (the version kept),
  // the rows copied, and only then 3 recorded, so a copy cut short is done again by the next open.
  QIM_ASSIGN_OR_RETURN(const int recorded, recorded_schema(session, options));
  const bool migrate = recorded == 1 || recorded == 2;
  scylla::ComponentSchema schema{.component = "inbox",
                                 .version = migrate ? recorded : kInboxSchemaVersion,
                                 .keyspace = options.keyspace,
                                 .replication_factor = options.replication_factor,
                                 .tables = kTables};
  QIM_RETURN_IF_ERROR(scylla::ensure_component_schema(session, schema));
  std::unique_ptr<CqlInboxBackend> backend(new CqlInboxBackend(options, std::move(session)));
  backend->ttl_seconds_ = static_cast<int32_t>(ttl);
  backend->activity_ttl_seconds_ =
      static_cast<int32_t>(std::min(ttl + kActivityTtlSlackSeconds, kMaxTtlSeconds));
  QIM_RETURN_IF_ERROR(backend->prepare());
  if (migrate) {
    QIM_RETURN_IF_ERROR(backend->migrate_to_user_partitions(recorded));
    schema.version = kInboxSchemaVersion;
    QIM_RETURN_IF_ERROR(scylla::ensure_component_schema(backend->session_, schema));
  }
  return backend;
}

Status CqlInboxBackend::prepare() {
  auto one = [this](cql::Prepared& into, const char* text) -> Status {
    QIM_ASSIGN_OR_RETURN(into, scylla::prepare_in_keyspace(session_, options_.keyspace, text, "inbox"));
    return {};
  };
  // kind 1, a conversation row: (conversation, epoch) in the key, log_offset and positioned fixed.
  QIM_RETURN_IF_ERROR(
      one(conversation_write_,
          "INSERT INTO {ks}.inbox_user (user_id, kind, conversation, counts, epoch, log_offset, positioned, "
          "last_offset, message_id, sender, server_time_ms, last_counts, preview) "
          "VALUES (?, 1, ?, false, ?, 0, '', ?, ?, ?, ?, ?, ?) USING TIMESTAMP ? AND TTL ?"));
  QIM_RETURN_IF_ERROR(
      one(conversation_read_,
          "SELECT conversation, epoch, last_offset, WRITETIME(last_offset), message_id, sender, "
          "server_time_ms, last_counts, preview FROM {ks}.inbox_user WHERE user_id = ? AND kind = 1"));
  // kind 0, an index row: (conversation, counts, epoch, log_offset) in the key, positioned fixed.
  QIM_RETURN_IF_ERROR(one(
      index_write_,
      "INSERT INTO {ks}.inbox_user (user_id, kind, conversation, counts, epoch, log_offset, positioned, "
      "message_id, sender, server_time_ms, preview) VALUES (?, 0, ?, ?, ?, ?, '', ?, ?, ?, ?) USING TTL ?"));
  // One value of `counts` per read: a multi-column slice that includes it, so the slice stays in it.
  QIM_RETURN_IF_ERROR(
      one(index_read_,
          "SELECT epoch, log_offset, message_id, sender, server_time_ms, preview "
          "FROM {ks}.inbox_user WHERE user_id = ? AND kind = 0 AND conversation = ? "
          "AND (counts, epoch, log_offset) > (?, ?, ?) AND (counts, epoch, log_offset) <= (?, ?, ?) "
          "LIMIT ?"));
  QIM_RETURN_IF_ERROR(
      one(count_read_,
          "SELECT log_offset FROM {ks}.inbox_user WHERE user_id = ? AND kind = 0 AND conversation = ? "
          "AND (counts, epoch, log_offset) > (true, ?, ?) "
          "AND (counts, epoch, log_offset) <= (true, ?, ?) LIMIT ?"));
  QIM_RETURN_IF_ERROR(one(mark_write_,
                          "INSERT INTO {ks}.inbox_read_mark (user_id, conversation, epoch, read_offset) "
                          "VALUES (?, ?, ?, ?) USING TIMESTAMP ?"));
  QIM_RETURN_IF_ERROR(one(marks_read_,
                          "SELECT conversation, epoch, read_offset, WRITETIME(read_offset) "
                          "FROM {ks}.inbox_read_mark WHERE user_id = ?"));
  QIM_RETURN_IF_ERROR(one(mark_read_,
                          "SELECT conversation, epoch, read_offset, WRITETIME(read_offset) "
                          "FROM {ks}.inbox_read_mark WHERE user_id = ? AND conversation = ? LIMIT 1"));
  QIM_RETURN_IF_ERROR(one(receipt_write_,
                          "INSERT INTO {ks}.inbox_receipt (conversation, user_id, read_through) "
                          "VALUES (?, ?, ?) USING TIMESTAMP ?"));
  QIM_RETURN_IF_ERROR(one(receipts_read_,
                          "SELECT user_id, read_through, WRITETIME(read_through) FROM {ks}.inbox_receipt "
                          "WHERE conversation = ? LIMIT ?"));
  QIM_RETURN_IF_ERROR(
      one(setting_write_,
          "INSERT INTO {ks}.inbox_setting (user_id, name, value, version) VALUES (?, ?, ?, ?) "
          "USING TIMESTAMP ?"));
  QIM_RETURN_IF_ERROR(
      one(settings_read_,
          "SELECT name, value, version, WRITETIME(value) FROM {ks}.inbox_setting WHERE user_id = ?"));
  return prepare_activity();
}

cql::ExecOptions CqlInboxBackend::plain() const {
  return cql::ExecOptions{.consistency = options_.consistency, .idempotent = true};
}

Result<cql::Rows> CqlInboxBackend::read_all(const cql::Prepared& statement, const Values& values,
                                            std::string_view what, int64_t max_rows) {
  cql::ExecOptions o = plain();
  o.page_size = kPage;
  o.max_rows = max_rows;
  QIM_ASSIGN_OR_RETURN(cql::Rows rows,
                       lift(session_.execute(statement, values, o), "inbox: " + std::string(what)));
  counters_.reads += rows.size() / kPage + 1;
  round_trips_ += rows.size() / kPage + 1;  // a page waits for the one before it
  rows_read_ += rows.size();
  return rows;
}

// Every entry gets its index row; the highest entry of each (user, conversation, epoch) raises its row
// and has its position written. A user's rows of the call are added together, so they ride one batch:
// one partition, so one mutation, applied whole on each replica (a replica holding a row holds its
// position). All of it lands before write_chunks answers, so before the frontier can pass it, in one
// round trip (decision 0169).
namespace {

// Requests sent, or the error that kept them from being sent.
class SentWrites final : public EntrySink::Pending {
 public:
  explicit SentWrites(Result<std::vector<cql::PendingResult>> sent) : sent_(std::move(sent)) {}
  Status wait(bool) override {
    if (!sent_.ok()) return sent_.error();
    return lift(cql::wait_all(*sent_), "inbox: write index rows, conversation rows and positions");
  }

 private:
  Result<std::vector<cql::PendingResult>> sent_;
};

}  // namespace

Status CqlInboxBackend::entries_written(ShardId, Epoch, std::span<const MailboxEntry> entries) {
  return SentWrites(send_entries(entries)).wait(true);
}

std::unique_ptr<EntrySink::Pending> CqlInboxBackend::begin(ShardId, Epoch,
                                                           std::span<const MailboxEntry> entries) {
  return std::make_unique<SentWrites>(send_entries(entries));
}

Result<std::vector<cql::PendingResult>> CqlInboxBackend::send_entries(std::span<const MailboxEntry> entries) {
  // What every backend keeps of an entry (entry_ref.h: the same preview and unread flag everywhere), and
  // per (user, conversation, epoch) the highest of the call, checked before anything is sent.
  std::vector<InboxEntryRef> refs;
  refs.reserve(entries.size());
  std::map<RowKey, size_t> highest;
  for (size_t k = 0; k < entries.size(); ++k) {
    const MailboxEntry& e = entries[k];
    refs.push_back(inbox_ref_of(e));
    auto [top, fresh] =
        highest.try_emplace(RowKey{e.user.str(), e.message.conversation.str(), e.seq.epoch().value}, k);
    if (!fresh && entries[top->second].seq < e.seq) top->second = k;
  }
  struct UserWrites {
    std::vector<size_t> entries;
    std::vector<std::pair<size_t, int64_t>> rows;  // (entry, write timestamp)
  };
  std::map<std::string_view, UserWrites> by_user;
  for (size_t k = 0; k < entries.size(); ++k) by_user[entries[k].user.str()].entries.push_back(k);
  for (const auto& [key, k] : highest) {
    QIM_ASSIGN_OR_RETURN(int64_t ts, scylla::monotonic_max_timestamp(entries[k].seq.offset(), "inbox_user"));
    by_user[entries[k].user.str()].rows.emplace_back(k, ts);
  }

  cql::BatchWriter writes(session_, plain(), cql::BatchLimits{.max_statements = options_.batch_rows});
  auto key = [](const MailboxEntry& e, Values& v) -> Values& {
    return v.text(e.user.str()).text(e.message.conversation.str());
  };
  for (const auto& [user, w] : by_user) {
    writes.keep_together(w.entries.size() + 2 * w.rows.size());
    for (size_t k : w.entries) {
      const InboxEntryRef& r = refs[k];
      Values v;
      key(entries[k], v)
          .boolean(r.counts)
          .int32(i32(r.seq.epoch().value))
          .bigint(i64(r.seq.offset().value))
          .bigint(i64(r.message.value))
          .text(r.sender.str())
          .bigint(r.server_time_ms)
          .blob(std::string_view(r.preview))
          .int32(ttl_seconds_);
      writes.add(index_write_, std::move(v));
      counters_.inserts++;
    }
    for (const auto& [k, ts] : w.rows) {
      const InboxEntryRef& r = refs[k];
      Values v;
      key(entries[k], v)
          .int32(i32(r.seq.epoch().value))
          .bigint(i64(r.seq.offset().value))
          .bigint(i64(r.message.value))
          .text(r.sender.str())
          .bigint(r.server_time_ms)
          .boolean(r.counts)
          .blob(std::string_view(r.preview))
          .bigint(ts)
          .int32(ttl_seconds_);
      writes.add(conversation_write_, std::move(v));
      counters_.updates++;
      add_position(writes, entries[k].user, ActivityPosition{r.seq, entries[k].message.conversation}, ts,
                   activity_ttl_seconds_);
    }
  }
  if (!entries.empty()) round_trips_++;
  return writes.finish();
}

// Only the highest epoch's row of each conversation: it holds the highest seq the user has of it (a seq
// sorts by its epoch first), as the one row of an engine that keeps one. A lower epoch's row may be
// visible while the highest is not (the new owner's page not finished yet); the entry to show is then the
// highest visible index row, which a lower epoch's row is not (a higher epoch may have visible entries
// below its row), so the caller must look in the index, and does when the row it gets is not visible.
Result<std::vector<ConversationRow>> CqlInboxBackend::conversation_rows(const UserId& user) {
  QIM_ASSIGN_OR_RETURN(cql::Rows rows,
                       read_all(conversation_read_, Values().text(user.str()), "read conversation rows"));
  // The partition comes in clustering order, (conversation ASC, epoch DESC): a conversation's first row is
  // its highest epoch's, and the rows after it, of the same conversation, are skipped undecoded.
  std::vector<ConversationRow> out;
  out.reserve(rows.size());
  for (const cql::Row row : rows) {
    if (!out.empty()) {
      auto text = row.get_text(0);
      if (text.ok() && *text == out.back().conversation.str()) continue;
    }
    QIM_ASSIGN_OR_RETURN(ConversationRow r, inbox_cells::conversation_row(row));
    out.push_back(std::move(r));
  }
  return out;
}

Status CqlInboxBackend::raise_read_mark(const UserId& user, const ConversationId& c, MailboxSeq seq) {
  if (seq.is_zero()) return {};  // every mark starts at zero
  QIM_ASSIGN_OR_RETURN(int64_t ts, scylla::monotonic_max_timestamp(seq.offset(), "inbox_read_mark"));
  counters_.updates++;
  round_trips_++;
  return written(session_.execute(mark_write_,
                                  Values()
                                      .text(user.str())
                                      .text(c.str())
                                      .int32(i32(seq.epoch().value))
                                      .bigint(i64(seq.offset().value))
                                      .bigint(ts),
                                  plain()),
                 "inbox: raise read mark of " + c.str());
}

Result<std::vector<ReadMark>> CqlInboxBackend::read_marks(const UserId& user) {
  QIM_ASSIGN_OR_RETURN(cql::Rows rows, read_all(marks_read_, Values().text(user.str()), "read read marks"));
  std::map<ConversationId, MailboxSeq> best;
  for (const cql::Row row : rows) {
    QIM_ASSIGN_OR_RETURN(ReadMark m, inbox_cells::read_mark(row));
    MailboxSeq& b = best[m.conversation];
    b = std::max(b, m.seq);
  }
  std::vector<ReadMark> out;
  out.reserve(best.size());
  for (auto& [c, seq] : best) out.push_back(ReadMark{c, seq});
  return out;
}

Result<MailboxSeq> CqlInboxBackend::read_mark(const UserId& user, const ConversationId& c) {
  counters_.reads++;
  round_trips_++;
  QIM_ASSIGN_OR_RETURN(cql::Rows rows,
                       lift(session_.execute(mark_read_, Values().text(user.str()).text(c.str()), plain()),
                            "inbox: read the read mark of " + c.str()));
  rows_read_ += rows.size();
  if (rows.empty()) return MailboxSeq{};
  // Clustering by epoch DESC: the first row is the highest epoch's, and a seq sorts by its epoch first.
  QIM_ASSIGN_OR_RETURN(ReadMark m, inbox_cells::read_mark(rows[0]));
  return m.seq;
}

Status CqlInboxBackend::raise_receipt(const ConversationId& c, const UserId& user, MessageId read_through) {
  QIM_ASSIGN_OR_RETURN(
      int64_t ts, scylla::monotonic_max_timestamp(Offset{read_through.value & kMaxOffset}, "inbox_receipt"));
  counters_.updates++;
  round_trips_++;
  return written(
      session_.execute(receipt_write_,
                       Values().text(c.str()).text(user.str()).bigint(i64(read_through.value)).bigint(ts),
                       plain()),
      "inbox: raise the receipt of " + user.str() + " in " + c.str());
}

Status CqlInboxBackend::put_setting(const UserId& user, const std::string& key, const std::string& value,
                                    int64_t version) {
  if (version < 0 || static_cast<uint64_t>(version) > kMaxOffset) {
    return Error(
        Errc::kInvalidArgument,
        fmt::format("inbox: setting version {} of {} is outside 0..2^48-1 (it is the write timestamp)",
                    version, key));
  }
  counters_.updates++;
  round_trips_++;
  return written(
      session_.execute(setting_write_,
                       Values().text(user.str()).text(key).text(value).bigint(version).bigint(version),
                       plain()),
      "inbox: put setting " + key + " of " + user.str());
}

}  // namespace qim
