#include "lifecycle/cql/cql_message_state_store.h"

#include "mailbox/scylla/component_schema.h"
#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/write_timestamps.h"

namespace qim {

namespace {

using cql::Values;
using scylla::lift;

inline constexpr int kMessagesSchemaVersion = 1;

const char* const kTables[] = {
    R"(CREATE TABLE IF NOT EXISTS {ks}.message_states (message_id bigint PRIMARY KEY, state blob))",
    R"(CREATE TABLE IF NOT EXISTS {ks}.message_watermarks (outbox_partition int PRIMARY KEY, watermark bigint))",
};

std::string bytes_of(std::span<const uint8_t> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

Result<std::optional<MessageState>> decode_rows(const cql::Rows& rows, MessageId id) {
  if (rows.empty()) return std::optional<MessageState>();
  auto cell = rows[0].get_blob(0);
  if (!cell.ok())
    return Error(Errc::kCorruptEntry, "message state of " + std::to_string(id.value) + ": no state cell");
  auto state = decode_message_state(bytes_of(*cell));
  if (!state.ok())
    return Error(Errc::kCorruptEntry,
                 "message state of " + std::to_string(id.value) + ": " + state.error().message());
  return std::optional<MessageState>(*std::move(state));
}

}  // namespace

Result<std::unique_ptr<CqlMessageStateStore>> CqlMessageStateStore::open(
    const CqlMessageStateOptions& options) {
  if (!scylla::plain_identifier(options.keyspace)) {
    return Error(Errc::kConfig, "message state keyspace '" + options.keyspace +
                                    "': expected 1..64 letters, digits and underscores (QIM_CQL_KEYSPACE)");
  }
  QIM_ASSIGN_OR_RETURN(cql::Session session,
                       lift(cql::Session::connect(cql::SessionOptions{
                                .hosts = options.hosts, .request_timeout_ms = options.request_timeout_ms}),
                            "message states: connect to CQL hosts"));
  QIM_RETURN_IF_ERROR(scylla::ensure_component_schema(
      session, scylla::ComponentSchema{.component = "messages",
                                       .version = kMessagesSchemaVersion,
                                       .keyspace = options.keyspace,
                                       .replication_factor = options.replication_factor,
                                       .tables = kTables}));
  std::unique_ptr<CqlMessageStateStore> store(new CqlMessageStateStore(options, std::move(session)));
  QIM_RETURN_IF_ERROR(store->prepare());
  return store;
}

Status CqlMessageStateStore::prepare() {
  auto one = [this](cql::Prepared& into, const char* text) -> Status {
    QIM_ASSIGN_OR_RETURN(into, scylla::prepare_in_keyspace(session_, options_.keyspace, text, "messages"));
    return {};
  };
  QIM_RETURN_IF_ERROR(one(state_write_, "INSERT INTO {ks}.message_states (message_id, state) VALUES (?, ?)"));
  QIM_RETURN_IF_ERROR(one(state_read_, "SELECT state FROM {ks}.message_states WHERE message_id = ?"));
  QIM_RETURN_IF_ERROR(one(watermark_write_,
                          "INSERT INTO {ks}.message_watermarks (outbox_partition, watermark) VALUES (?, ?)"));
  return one(watermark_read_, "SELECT watermark FROM {ks}.message_watermarks WHERE outbox_partition = ?");
}

Status CqlMessageStateStore::put(const MessageState& state, uint32_t partition, uint64_t event_offset) {
  QIM_ASSIGN_OR_RETURN(int64_t ts, scylla::monotonic_max_timestamp(Offset{event_offset}, "message_states"));
  counters_.updates++;
  // The state first: the archiver treats the event as decided only once the watermark is past it.
  QIM_RETURN_IF_ERROR(
      lift(session_.execute(
               state_write_,
               Values().bigint(static_cast<int64_t>(state.id.value)).blob(encode_message_state(state)),
               cql::ExecOptions{.consistency = options_.consistency, .timestamp_us = ts, .idempotent = true}),
           "message states: write the state of " + std::to_string(state.id.value)));
  return raise_watermark(partition, event_offset);
}

Status CqlMessageStateStore::raise_watermark(uint32_t partition, uint64_t event_offset) {
  // The value is its own timestamp: of two writes the larger wins, in whatever order they land.
  QIM_ASSIGN_OR_RETURN(int64_t ts,
                       scylla::monotonic_max_timestamp(Offset{event_offset + 1}, "message_watermarks"));
  counters_.updates++;
  QIM_RETURN_IF_ERROR(
      lift(session_.execute(
               watermark_write_, Values().int32(static_cast<int32_t>(partition)).bigint(ts),
               cql::ExecOptions{.consistency = options_.consistency, .timestamp_us = ts, .idempotent = true}),
           "message states: raise the watermark of " + std::to_string(partition)));
  return {};
}

Result<uint64_t> CqlMessageStateStore::watermark(uint32_t partition) {
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(
      cql::Rows rows,
      lift(session_.execute(watermark_read_, Values().int32(static_cast<int32_t>(partition)),
                            cql::ExecOptions{.consistency = options_.consistency, .idempotent = true}),
           "message states: read the watermark of " + std::to_string(partition)));
  if (rows.empty()) return uint64_t{0};
  auto v = rows[0].get_i64(0);
  if (!v.ok() || *v < 0)
    return Error(Errc::kCorruptEntry,
                 "message state store: the watermark of " + std::to_string(partition) + " is not a count");
  return static_cast<uint64_t>(*v);
}

Result<std::optional<MessageState>> CqlMessageStateStore::load(MessageId id) {
  QIM_ASSIGN_OR_RETURN(auto many, load_many(std::span(&id, 1)));
  return std::move(many.at(0));
}

Result<std::vector<std::optional<MessageState>>> CqlMessageStateStore::load_many(
    std::span<const MessageId> ids) {
  std::vector<cql::PendingResult> pending;
  pending.reserve(ids.size());
  for (MessageId id : ids) {
    pending.push_back(
        session_.execute_async(state_read_, Values().bigint(static_cast<int64_t>(id.value)),
                               cql::ExecOptions{.consistency = options_.consistency, .idempotent = true}));
  }
  counters_.reads += ids.size();
  QIM_RETURN_IF_ERROR(lift(cql::wait_all(pending), "message states: read"));
  std::vector<std::optional<MessageState>> out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    QIM_ASSIGN_OR_RETURN(auto s, decode_rows(pending[i].get().value(), ids[i]));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace qim
