// The embedded (RocksDB) history store under the contract suite: a directory per harness.
#include "archiver/rocks_history_store.h"
#include "archiver/tests/history_fixture.h"
#include "core/big_endian.h"
#include "log/testing/temp_dir.h"

namespace qim::test {

namespace {

class RocksHarness final : public HistoryHarness {
 public:
  Result<std::unique_ptr<HistoryStore>> open() override {
    QIM_ASSIGN_OR_RETURN(auto store, RocksHistoryStore::open(dir_.sub("history")));
    return std::unique_ptr<HistoryStore>(std::move(store));
  }
  // The key layout of rocks_history_store.h.
  Status plant_corrupt(HistoryStore& current, const ConversationId& conversation, MessageId id) override {
    auto* rocks = dynamic_cast<RocksHistoryStore*>(&current);
    if (rocks == nullptr) return Error(Errc::kInvalidArgument, "not a RocksHistoryStore");
    std::string message_key = "m";
    put_be64(message_key, id.value);
    std::string index_key = "c" + conversation.str();
    index_key.push_back('\0');
    put_be64(index_key, id.value);
    rocksdb::WriteBatch batch;
    if (!batch.Put(message_key, "not a message").ok() || !batch.Put(index_key, rocksdb::Slice()).ok() ||
        !rocks->raw_db().Write(rocksdb::WriteOptions(), &batch).ok()) {
      return Error(Errc::kIo, "plant corrupt history row");
    }
    return {};
  }
  // Every key and value of the database (the conversation is in the index keys, the body in the message
  // values): an iterator sees what a reader of the files would after compaction, which runs first.
  Result<bool> holds(HistoryStore& current, const ConversationId&, std::string_view bytes) override {
    auto* rocks = dynamic_cast<RocksHistoryStore*>(&current);
    if (rocks == nullptr) return Error(Errc::kInvalidArgument, "not a RocksHistoryStore");
    if (!rocks->raw_db().CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok())
      return Error(Errc::kIo, "compact");
    std::unique_ptr<rocksdb::Iterator> it(rocks->raw_db().NewIterator(rocksdb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (it->key().ToStringView().find(bytes) != std::string_view::npos ||
          it->value().ToStringView().find(bytes) != std::string_view::npos)
        return true;
    }
    return false;
  }

 private:
  testing::TempDir dir_;
};

}  // namespace

HistoryFixture history_fixture() {
  HistoryFixture f;
  f.name = "embedded";
  f.make_harness = []() -> Result<std::unique_ptr<HistoryHarness>> {
    return std::unique_ptr<HistoryHarness>(std::make_unique<RocksHarness>());
  };
  return f;
}

}  // namespace qim::test
