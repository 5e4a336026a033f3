#include "archiver/rocks_history_store.h"

#include <algorithm>

#include "core/big_endian.h"
#include "core/mailbox_seq.h"
#include "mailbox/embedded/insert_hint.h"
#include "mailbox/embedded/rocks_info_log.h"
#include "mailbox/message_codec.h"

namespace qim {

namespace {

Status rocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return {};
  return Error(s.IsCorruption() ? Errc::kCorruptEntry : Errc::kIo,
               "history store: " + std::string(what) + ": " + s.ToString());
}

std::string message_key(MessageId id) {
  std::string k = "m";
  put_be64(k, id.value);
  return k;
}

std::string index_prefix(const ConversationId& conversation) {
  std::string k = "c";
  k += conversation.str();
  k.push_back('\0');
  return k;
}

}  // namespace

Result<std::unique_ptr<RocksHistoryStore>> RocksHistoryStore::open(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  // Both kinds of row end with the message id, whose low 6 bytes are the Outbox offset: without them,
  // a key names an Outbox partition (message rows) or a conversation (index rows: a conversation has
  // one Outbox partition), whose rows arrive in offset order, so each such group keeps its own insert hint
  // (insert_hint.h).
  options.memtable_insert_with_hint_prefix_extractor =
      std::make_shared<embedded::InsertHintGroups>("qim.HistoryHint", kOffsetBits / 8);
  // Through a full disk: no SyncWAL while a write error stops the database, resumed once space returns.
  auto gate = std::make_shared<embedded::RocksWriteGate>();
  options.listeners.push_back(gate);
  options.info_log = embedded::rocks_info_log("history store");  // not a LOG file on the data disk
  rocksdb::DB* raw = nullptr;
  QIM_RETURN_IF_ERROR(rocks(rocksdb::DB::Open(options, dir, &raw), "open " + dir));
  gate->attach(raw);
  return std::unique_ptr<RocksHistoryStore>(
      new RocksHistoryStore(std::unique_ptr<rocksdb::DB>(raw), std::move(gate)));
}

Status RocksHistoryStore::append(const Message& message) {
  return append_all(std::span<const Message>(&message, 1));
}

Status RocksHistoryStore::append_all(std::span<const Message> messages) {
  for (const Message& m : messages) QIM_RETURN_IF_ERROR(validate_history_message(m));
  // The rows go into the batch in key order: the messages (by id, so one Outbox partition's are
  // consecutive keys), then the conversation index rows. RocksDB inserts each row of a batch starting
  // from where the one before it went in the memtable's skip list, so rows in key order land next to each
  // other; interleaved, every row searched the list from the top, a third of the archiver's CPU at 8,000
  // msg/s (docs/benchmarks.md, "Rows in key order").
  std::vector<const Message*> by_id;
  std::vector<std::string> index_rows;
  by_id.reserve(messages.size());
  index_rows.reserve(messages.size());
  for (const Message& m : messages) {
    by_id.push_back(&m);
    std::string index = index_prefix(m.conversation);
    put_be64(index, m.id.value);
    index_rows.push_back(std::move(index));
  }
  std::stable_sort(by_id.begin(), by_id.end(),
                   [](const Message* a, const Message* b) { return a->id < b->id; });
  std::sort(index_rows.begin(), index_rows.end());
  rocksdb::WriteBatch batch;
  for (const Message* m : by_id) {
    QIM_RETURN_IF_ERROR(rocks(batch.Put(message_key(m->id), encode_message(*m)), "batch"));
  }
  for (const std::string& index : index_rows)
    QIM_RETURN_IF_ERROR(rocks(batch.Put(index, rocksdb::Slice()), "batch"));
  rocksdb::WriteOptions write;
  write.memtable_insert_hint_per_batch = true;  // the same when RocksDB inserts batches in parallel
  QIM_RETURN_IF_ERROR(rocks(gate_->ready(), "append: the store stopped after a write error"));
  QIM_RETURN_IF_ERROR(rocks(db_->Write(write, &batch), "append"));
  counters_.inserts += 2 * messages.size();
  return {};
}

Status RocksHistoryStore::sync() {
  QIM_RETURN_IF_ERROR(rocks(gate_->ready(), "sync: the store stopped after a write error"));
  return rocks(db_->SyncWAL(), "sync");
}

Result<HistoryPage> RocksHistoryStore::read(const HistoryQuery& query) {
  QIM_RETURN_IF_ERROR(validate_history_query(query));
  const std::string prefix = index_prefix(query.conversation);
  std::string start = prefix;
  put_be64(start, query.before ? query.before->value : ~uint64_t{0});

  std::vector<uint64_t> ids;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  counters_.reads++;
  for (it->SeekForPrev(start); it->Valid() && ids.size() <= query.limit; it->Prev()) {
    const rocksdb::Slice key = it->key();
    if (!key.starts_with(prefix)) break;
    if (key.size() != prefix.size() + 8) {
      return Error(Errc::kCorruptEntry,
                   "history index row of " + query.conversation.str() + " has a bad key");
    }
    const uint64_t id = get_be64(std::string_view(key.data() + prefix.size(), 8));
    if (query.before && id >= query.before->value) continue;  // `before` is exclusive
    ids.push_back(id);
  }
  QIM_RETURN_IF_ERROR(rocks(it->status(), "scan " + query.conversation.str()));

  HistoryPage page;
  page.more = ids.size() > query.limit;
  ids.resize(std::min<size_t>(ids.size(), query.limit));
  std::vector<std::string> keys;
  for (uint64_t id : ids) keys.push_back(message_key(MessageId{id}));
  std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
  std::vector<std::string> values;
  const auto statuses = db_->MultiGet(rocksdb::ReadOptions(), slices, &values);
  counters_.reads += keys.size();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (statuses[i].IsNotFound()) {
      return Error(Errc::kCorruptEntry, "history index names message " + std::to_string(ids[i]) + " of " +
                                            query.conversation.str() + " but the message row is missing");
    }
    QIM_RETURN_IF_ERROR(rocks(statuses[i], "read message " + std::to_string(ids[i])));
    auto m = decode_message(values[i]);
    if (!m.ok() || m->id.value != ids[i] || m->conversation != query.conversation) {
      return Error(
          Errc::kCorruptEntry,
          "history message " + std::to_string(ids[i]) + " of " + query.conversation.str() +
              " does not decode: " + (m.ok() ? "it holds another id or conversation" : m.error().message()));
    }
    page.messages.push_back(std::move(m).value());
  }
  return page;
}

}  // namespace qim
