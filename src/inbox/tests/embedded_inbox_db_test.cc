// The embedded inbox lives in the mailbox store's own RocksDB database (docs/adr/0088): opened as
// `qim up` opens it (open_inbox, then open_mailbox_store with the inbox as its sink), its rows go into the
// mailbox's families and log, no database of its own appears, and an inbox database of decision 69 found
// in the data directory moves in (read marks, receipts and settings included) and is removed.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <stdlib.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <memory>

#include "inbox/embedded/inbox_rows.h"
#include "inbox/inbox.h"
#include "inbox/open_inbox.h"
#include "inbox/tests/inbox_test_helpers.h"
#include "mailbox/embedded/side_rows.h"
#include "mailbox/store_options.h"

namespace qim::test {
namespace {

namespace fs = std::filesystem;

class EmbeddedInboxInMailboxDb : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "qim-inbox-db-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    clock_ = std::make_shared<ManualClock>(20'000 * kDayMs);
    options_.backend = "embedded";
    options_.data_dir = dir_ + "/mailbox";
    options_.shard_count = 2;
    options_.clock = clock_;
    shards_ = *ShardMap::create(2);
    alice_ = user_in_shard(shards_, kInboxShard, 0);
    bob_ = user_in_shard(shards_, kInboxShard, 1);
    c_ = *direct_conversation(alice_, bob_);
  }
  void TearDown() override {
    close();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // As app/pipeline.cc opens them.
  Status open() {
    QIM_ASSIGN_OR_RETURN(inbox_, open_inbox(options_, dir_));
    QIM_ASSIGN_OR_RETURN(store_, open_mailbox_store(options_, inbox_.get()));
    return {};
  }
  void close() {
    store_.reset();  // detaches the inbox
    inbox_.reset();
  }

  std::string dir_;
  std::shared_ptr<ManualClock> clock_;
  StoreOptions options_;
  ShardMap shards_ = *ShardMap::create(1);
  UserId alice_, bob_;
  ConversationId c_;
  std::unique_ptr<InboxBackend> inbox_;
  std::unique_ptr<MailboxStore> store_;
};

std::vector<std::string> families_of(const std::string& dir) {
  std::vector<std::string> names;
  EXPECT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names).ok());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(EmbeddedInboxInMailboxDb, RowsGoIntoTheMailboxDatabaseNotOneOfTheirOwn) {
  ASSERT_TRUE(is_ok(open()));
  std::deque<DispatchRecord> records;
  uint64_t offset = 1;
  for (uint64_t id = 1; id <= 3; ++id) {
    records.push_back(inbox_record(inbox_message(id, c_, bob_, clock_->now_ms()), {alice_}));
    ASSERT_TRUE(is_ok(deliver(*store_, Epoch{1}, std::span(&records.back(), 1), offset)));
  }
  Inbox inbox(*store_, *inbox_);
  auto page = inbox.conversations(alice_, std::nullopt, 50);
  ASSERT_TRUE(is_ok(page));
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].unread, 3u);
  auto read = inbox.mark_read(alice_, c_, page->items[0].last.seq);
  ASSERT_TRUE(is_ok(read));
  EXPECT_FALSE(fs::exists(dir_ + "/inbox")) << "the inbox opened a database of its own";
  close();
  const auto names = families_of(options_.data_dir);
  for (std::string_view family : embedded::kSideFamilyNames) {
    EXPECT_TRUE(std::count(names.begin(), names.end(), std::string(family)) == 1)
        << family << " is not a family of the mailbox database";
  }
  // After a restart the rows and the mark are read back from the mailbox's database.
  ASSERT_TRUE(is_ok(open()));
  Inbox again(*store_, *inbox_);
  auto unread = again.unread(alice_, c_);
  ASSERT_TRUE(is_ok(unread));
  EXPECT_EQ(unread->first, 0u);
  auto rows = inbox_->conversation_rows(alice_);
  ASSERT_TRUE(is_ok(rows));
  EXPECT_EQ(rows->size(), 1u);
}

// Writes an inbox database as decision 69 kept it, in `dir`, with `extra` families besides its own.
void write_old_inbox(const std::string& dir, const UserId& alice, const ConversationId& c, MailboxSeq seq,
                     int64_t expires_ms, std::vector<std::string> extra = {}) {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  rocksdb::ColumnFamilyOptions merged;
  merged.merge_operator = std::make_shared<embedded::Max16Merge>();
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {{rocksdb::kDefaultColumnFamilyName, {}}};
  for (std::string_view name : embedded::kSideFamilyNames) {
    if (name == "inbox_activity") continue;  // decision 89 came after the old inbox
    families.emplace_back(std::string(name), name == "inbox_index" ? rocksdb::ColumnFamilyOptions() : merged);
  }
  for (const std::string& name : extra) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> h;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(db_options, dir, families, &h, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  InboxEntryRef ref{seq, MessageId{42}, UserId::unchecked("bob-old"), 1234, true, "hello"};
  const std::string value = inbox_rows::ref_value(ref, expires_ms);
  rocksdb::WriteOptions w;
  ASSERT_TRUE(db->Put(w, h[1], inbox_rows::index_key(alice, c, seq), value).ok());
  ASSERT_TRUE(db->Merge(w, h[2], inbox_rows::pair_prefix(alice.str(), c.str()), value).ok());
  ASSERT_TRUE(
      db->Merge(w, h[3], inbox_rows::pair_prefix(alice.str(), c.str()), inbox_rows::max16_value(seq.raw()))
          .ok());
  ASSERT_TRUE(
      db->Merge(w, h[4], inbox_rows::pair_prefix(c.str(), alice.str()), inbox_rows::max16_value(42)).ok());
  std::string setting;
  inbox_rows::put_name(setting, alice.str());
  setting += "receipts";
  ASSERT_TRUE(db->Merge(w, h[5], setting, inbox_rows::max16_value(7, "off")).ok());
  for (auto* handle : h) ASSERT_TRUE(db->DestroyColumnFamilyHandle(handle).ok());
  ASSERT_TRUE(db->Close().ok());
}

TEST_F(EmbeddedInboxInMailboxDb, AnOlderInboxDatabaseMovesInAndIsRemoved) {
  const MailboxSeq seq = *compose(Epoch{1}, Offset{5});
  write_old_inbox(dir_ + "/inbox", alice_, c_, seq, clock_->now_ms() + kDayMs);
  fs::create_directories(dir_ + "/inbox.moved/leftover");  // a finished move a crash interrupted
  for (int round = 0; round < 2; ++round) {  // the second open finds nothing to move and reads the same
    ASSERT_TRUE(is_ok(open())) << round;
    EXPECT_FALSE(fs::exists(dir_ + "/inbox")) << round;
    EXPECT_FALSE(fs::exists(dir_ + "/inbox.moved")) << round;
    auto mark = inbox_->read_mark(alice_, c_);
    ASSERT_TRUE(is_ok(mark));
    EXPECT_EQ(*mark, seq);
    auto settings = inbox_->settings(alice_);
    ASSERT_TRUE(is_ok(settings));
    EXPECT_EQ((*settings)["receipts"], "off");
    auto receipts = inbox_->receipts(c_, 10);
    ASSERT_TRUE(is_ok(receipts));
    ASSERT_EQ(receipts->size(), 1u);
    EXPECT_EQ(receipts->front().read_through, MessageId{42});
    auto rows = inbox_->conversation_rows(alice_);
    ASSERT_TRUE(is_ok(rows));
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ(rows->front().last.preview, "hello");
    auto index = inbox_->index_rows_desc(alice_, c_, MailboxSeq{}, seq, 10);
    ASSERT_TRUE(is_ok(index));
    EXPECT_EQ(index->size(), 1u);
    // The rows that moved in got their activity positions (decision 89), so the list shows them.
    auto positions = inbox_->activity_desc(alice_, MailboxSeq{}, MailboxSeq::from_raw(~uint64_t{0}), 10);
    ASSERT_TRUE(is_ok(positions));
    EXPECT_EQ(*positions, (std::vector<ActivityPosition>{{seq, c_}}));
    close();
  }
}

TEST_F(EmbeddedInboxInMailboxDb, AnUnknownDatabaseWhereTheOldInboxWasIsRefused) {
  write_old_inbox(dir_ + "/inbox", alice_, c_, *compose(Epoch{1}, Offset{5}), clock_->now_ms() + kDayMs,
                  {"something_else"});
  Status opened = open();
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.code(), Errc::kCorruptEntry) << opened.error().to_string();
  EXPECT_TRUE(fs::exists(dir_ + "/inbox")) << "left as it was";
}

}  // namespace
}  // namespace qim::test
