// The message state store on local disk (RocksDB), for the embedded deployment. Rows:
//
//   's' | be64(message id)   -> encode_message_state
//   'w' | be32(partition)    -> be64(watermark)
//
// put() writes both in one synced batch, so fanout's Outbox commit never runs ahead of a decision.

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <mutex>

#include "core/big_endian.h"
#include "lifecycle/message_state_store.h"
#include "mailbox/embedded/rocks_info_log.h"

namespace qim {

namespace {

Status rocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return {};
  return Error(s.IsCorruption() ? Errc::kCorruptEntry : Errc::kIo,
               "message state store: " + std::string(what) + ": " + s.ToString());
}

std::string state_key(MessageId id) {
  std::string k = "s";
  put_be64(k, id.value);
  return k;
}
std::string watermark_key(uint32_t partition) {
  std::string k = "w";
  put_be64(k, partition);
  return k;
}

class RocksMessageStateStore final : public MessageStateStore {
 public:
  explicit RocksMessageStateStore(std::unique_ptr<rocksdb::DB> db) : db_(std::move(db)) {}

  Result<std::optional<MessageState>> load(MessageId id) override {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), state_key(id), &value);
    if (s.IsNotFound()) return std::optional<MessageState>();
    QIM_RETURN_IF_ERROR(rocks(s, "read " + std::to_string(id.value)));
    auto state = decode_message_state(value);
    if (!state.ok()) {
      return Error(Errc::kCorruptEntry,
                   "message state of " + std::to_string(id.value) + ": " + state.error().message());
    }
    return std::optional<MessageState>(*std::move(state));
  }

  Result<std::vector<std::optional<MessageState>>> load_many(std::span<const MessageId> ids) override {
    std::vector<std::optional<MessageState>> out;
    out.reserve(ids.size());
    for (MessageId id : ids) {
      QIM_ASSIGN_OR_RETURN(auto s, load(id));
      out.push_back(std::move(s));
    }
    return out;
  }

  Status put(const MessageState& state, uint32_t partition, uint64_t event_offset) override {
    // One writer per partition (fanout), so the read-modify-write of the watermark races with nothing but
    // another partition's, which is another key; the mutex covers a fanout with several partition threads.
    std::lock_guard lock(mu_);
    QIM_ASSIGN_OR_RETURN(uint64_t w, watermark(partition));
    rocksdb::WriteBatch batch;
    batch.Put(state_key(state.id), encode_message_state(state));
    if (event_offset + 1 > w) {
      std::string v;
      put_be64(v, event_offset + 1);
      batch.Put(watermark_key(partition), v);
    }
    rocksdb::WriteOptions sync;
    sync.sync = true;
    return rocks(db_->Write(sync, &batch), "write " + std::to_string(state.id.value));
  }

  Status raise_watermark(uint32_t partition, uint64_t event_offset) override {
    std::lock_guard lock(mu_);
    QIM_ASSIGN_OR_RETURN(uint64_t w, watermark(partition));
    if (event_offset + 1 <= w) return {};
    std::string v;
    put_be64(v, event_offset + 1);
    rocksdb::WriteOptions sync;
    sync.sync = true;
    return rocks(db_->Put(sync, watermark_key(partition), v), "write watermark");
  }

  Result<uint64_t> watermark(uint32_t partition) override {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), watermark_key(partition), &value);
    if (s.IsNotFound()) return uint64_t{0};
    QIM_RETURN_IF_ERROR(rocks(s, "read watermark"));
    if (value.size() != 8)
      return Error(Errc::kCorruptEntry,
                   "message state store: watermark row of " + std::to_string(partition) + " is not 8 bytes");
    return get_be64(value);
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::mutex mu_;
};

}  // namespace

Result<std::unique_ptr<MessageStateStore>> open_rocks_message_state_store(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.info_log = embedded::rocks_info_log("message state store");
  rocksdb::DB* raw = nullptr;
  QIM_RETURN_IF_ERROR(rocks(rocksdb::DB::Open(options, dir, &raw), "open " + dir));
  return std::unique_ptr<MessageStateStore>(
      std::make_unique<RocksMessageStateStore>(std::unique_ptr<rocksdb::DB>(raw)));
}

}  // namespace qim
