#include "archiver/rocks_history_store.h"

#include <algorithm>

#include "core/big_endian.h"
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
  rocksdb::DB* raw = nullptr;
  QIM_RETURN_IF_ERROR(rocks(rocksdb::DB::Open(options, dir, &raw), "open " + dir));
  return std::unique_ptr<RocksHistoryStore>(new RocksHistoryStore(std::unique_ptr<rocksdb::DB>(raw)));
}

Status RocksHistoryStore::append(const Message& message) {
  return append_all(std::span<const Message>(&message, 1));
}

Status RocksHistoryStore::append_all(std::span<const Message> messages) {
  for (const Message& m : messages) QIM_RETURN_IF_ERROR(validate_history_message(m));
  rocksdb::WriteBatch batch;
  for (const Message& m : messages) {
    std::string index = index_prefix(m.conversation);
    put_be64(index, m.id.value);
    QIM_RETURN_IF_ERROR(rocks(batch.Put(message_key(m.id), encode_message(m)), "batch"));
    QIM_RETURN_IF_ERROR(rocks(batch.Put(index, rocksdb::Slice()), "batch"));
  }
  QIM_RETURN_IF_ERROR(rocks(db_->Write(rocksdb::WriteOptions(), &batch), "append"));
  counters_.inserts += 2 * messages.size();
  return {};
}

Status RocksHistoryStore::sync() {
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
