#include "archiver/cql/cql_history_store.h"

#include <algorithm>

#include "mailbox/scylla/component_schema.h"
#include "mailbox/scylla/cql/batch_writer.h"
#include "mailbox/scylla/cql_cells.h"
#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/message_values.h"

namespace qim {

namespace {

using cql::Values;
using scylla::cell;
using scylla::lift;
using scylla::name_cell;

inline constexpr int kHistorySchemaVersion = 1;

// {ks} is replaced by the keyspace.
const char* const kTables[] = {
    // The message, by id: the "colder" row of ADR-0018, readable without knowing the conversation.
    R"(CREATE TABLE IF NOT EXISTS {ks}.history_message (
         message_id bigint PRIMARY KEY,
         conversation text, sender text, sender_device text, client_msg_id text,
         server_time_ms bigint, body blob, reply_to bigint))",
    // The conversation's index, newest first: HISTORY is one slice of one partition.
    R"(CREATE TABLE IF NOT EXISTS {ks}.history_index (
         conversation text, message_id bigint,
         PRIMARY KEY (conversation, message_id)) WITH CLUSTERING ORDER BY (message_id DESC))",
};

int64_t i64(uint64_t v) {
  return static_cast<int64_t>(v);
}

Values message_values(const Message& m) {
  Values values;
  scylla::bind_message_columns(values, m);
  return values;
}

Values index_values(const Message& m) {
  return Values().text(m.conversation.str()).bigint(i64(m.id.value));
}

}  // namespace

Result<std::unique_ptr<CqlHistoryStore>> CqlHistoryStore::open(const CqlHistoryOptions& options) {
  if (!scylla::plain_identifier(options.keyspace)) {
    return Error(Errc::kConfig, "history keyspace '" + options.keyspace +
                                    "': expected 1..64 letters, digits and underscores (QIM_CQL_KEYSPACE)");
  }
  QIM_ASSIGN_OR_RETURN(cql::Session session,
                       lift(cql::Session::connect(cql::SessionOptions{
                                .hosts = options.hosts, .request_timeout_ms = options.request_timeout_ms}),
                            "history: connect to CQL hosts"));
  QIM_RETURN_IF_ERROR(scylla::ensure_component_schema(
      session, scylla::ComponentSchema{.component = "history",
                                       .version = kHistorySchemaVersion,
                                       .keyspace = options.keyspace,
                                       .replication_factor = options.replication_factor,
                                       .tables = kTables}));
  // Replies (docs/adr/0125): a table created before them gains the column.
  QIM_RETURN_IF_ERROR(
      scylla::ensure_column(session, options.keyspace, "history_message", "reply_to", "bigint"));
  std::unique_ptr<CqlHistoryStore> store(new CqlHistoryStore(options, std::move(session)));
  QIM_RETURN_IF_ERROR(store->prepare());
  return store;
}

Status CqlHistoryStore::prepare() {
  auto one = [this](cql::Prepared& into, const char* text) -> Status {
    QIM_ASSIGN_OR_RETURN(into, scylla::prepare_in_keyspace(session_, options_.keyspace, text, "history"));
    return {};
  };
  QIM_RETURN_IF_ERROR(
      one(message_write_,
          "INSERT INTO {ks}.history_message (message_id, conversation, sender, sender_device, "
          "client_msg_id, server_time_ms, body, reply_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
  QIM_RETURN_IF_ERROR(
      one(index_write_, "INSERT INTO {ks}.history_index (conversation, message_id) VALUES (?, ?)"));
  QIM_RETURN_IF_ERROR(
      one(index_read_, "SELECT message_id FROM {ks}.history_index WHERE conversation = ? LIMIT ?"));
  QIM_RETURN_IF_ERROR(
      one(index_read_before_,
          "SELECT message_id FROM {ks}.history_index WHERE conversation = ? AND message_id < ? "
          "LIMIT ?"));
  return one(message_read_,
             "SELECT conversation, sender, sender_device, client_msg_id, server_time_ms, body, reply_to "
             "FROM {ks}.history_message WHERE message_id = ?");
}

cql::ExecOptions CqlHistoryStore::write_options() const {
  return cql::ExecOptions{.consistency = options_.consistency, .idempotent = true};
}

cql::ExecOptions CqlHistoryStore::read_options() const {
  return cql::ExecOptions{.consistency = options_.consistency, .idempotent = true};
}

Status CqlHistoryStore::append(const Message& message) {
  return append_all(std::span<const Message>(&message, 1));
}

Status CqlHistoryStore::append_all(std::span<const Message> messages) {
  for (const Message& m : messages) QIM_RETURN_IF_ERROR(validate_history_message(m));
  // Messages first, acknowledged, then their index rows: the index never names an unwritten message.
  const cql::BatchLimits limits{.max_statements = options_.batch_rows};
  cql::BatchWriter rows(session_, write_options(), limits);
  for (const Message& m : messages) rows.add(message_write_, message_values(m));
  counters_.inserts += messages.size();
  QIM_RETURN_IF_ERROR(lift(cql::wait_all(rows.finish()), "history: write message rows"));
  cql::BatchWriter index(session_, write_options(), limits);
  for (const Message& m : messages) index.add(index_write_, index_values(m));
  counters_.inserts += messages.size();
  return lift(cql::wait_all(index.finish()), "history: write index rows");
}

Result<HistoryPage> CqlHistoryStore::read(const HistoryQuery& query) {
  QIM_RETURN_IF_ERROR(validate_history_query(query));
  const auto want = static_cast<int32_t>(query.limit + 1);  // one more than asked: is there more?
  counters_.reads++;
  // Stored ids are below 2^63 (validate_history_message): a `before` above every bigint bounds nothing.
  const bool bounded = query.before && query.before->value <= uint64_t{INT64_MAX};
  auto slice = bounded
                   ? session_.execute(
                         index_read_before_,
                         Values().text(query.conversation.str()).bigint(i64(query.before->value)).int32(want),
                         read_options())
                   : session_.execute(index_read_, Values().text(query.conversation.str()).int32(want),
                                      read_options());
  QIM_ASSIGN_OR_RETURN(cql::Rows index,
                       lift(std::move(slice), "history: read index of " + query.conversation.str()));
  std::vector<uint64_t> ids;
  for (const cql::Row row : index) {
    auto id = row.get_i64(0);
    if (!id.ok() || *id < 0) {
      return Error(Errc::kCorruptEntry, "history index row " + std::to_string(row.index()) + " of " +
                                            query.conversation.str() + " has a bad message id");
    }
    ids.push_back(static_cast<uint64_t>(*id));
  }
  HistoryPage page;
  page.more = ids.size() > query.limit;
  ids.resize(std::min<size_t>(ids.size(), query.limit));

  std::vector<cql::PendingResult> pending;
  pending.reserve(ids.size());
  for (uint64_t id : ids)
    pending.push_back(session_.execute_async(message_read_, Values().bigint(i64(id)), read_options()));
  counters_.reads += ids.size();
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto& rows = pending[i].get();
    if (!rows.ok()) {
      return scylla::to_error(rows.error(), "history: read message " + std::to_string(ids[i]) + " of " +
                                                query.conversation.str());
    }
    QIM_ASSIGN_OR_RETURN(Message m, decode(query.conversation, ids[i], *rows));
    page.messages.push_back(std::move(m));
  }
  return page;
}

Result<Message> CqlHistoryStore::decode(const ConversationId& conversation, uint64_t id,
                                        const cql::Rows& rows) const {
  const std::string where = "history message " + std::to_string(id) + " of " + conversation.str();
  if (rows.empty())
    return Error(Errc::kCorruptEntry, where + ": the index names it but the message row is missing");
  const cql::Row row = rows[0];
  auto decoded = [&]() -> Result<Message> {
    Message m;
    m.id = MessageId{id};
    QIM_ASSIGN_OR_RETURN(m.conversation, name_cell<ConversationId>(row, 0, "history_message.conversation"));
    QIM_ASSIGN_OR_RETURN(m.sender, name_cell<UserId>(row, 1, "history_message.sender"));
    QIM_ASSIGN_OR_RETURN(m.sender_device, name_cell<DeviceId>(row, 2, "history_message.sender_device", true));
    if (!row.is_null(3)) {
      QIM_ASSIGN_OR_RETURN(auto client_id, cell(row.get_text(3), "history_message.client_msg_id"));
      m.client_msg_id = std::string(client_id);
    }
    QIM_ASSIGN_OR_RETURN(m.server_time_ms, cell(row.get_i64(4), "history_message.server_time_ms"));
    if (!row.is_null(5)) {
      QIM_ASSIGN_OR_RETURN(auto body, cell(row.get_blob(5), "history_message.body"));
      m.body.assign(reinterpret_cast<const char*>(body.data()), body.size());
    }
    if (!row.is_null(6)) {
      QIM_ASSIGN_OR_RETURN(int64_t reply_to, cell(row.get_i64(6), "history_message.reply_to"));
      m.reply_to = MessageId{static_cast<uint64_t>(reply_to)};
    }
    if (m.conversation != conversation)
      return Error(Errc::kCorruptEntry, "it belongs to conversation " + m.conversation.str());
    if (Status s = validate_message(m); !s.ok()) return Error(Errc::kCorruptEntry, s.error().message());
    return m;
  }();
  if (!decoded.ok())
    return Error(Errc::kCorruptEntry, where + " does not decode: " + decoded.error().message());
  return decoded;
}

}  // namespace qim
