#include <gtest/gtest.h>

#include "archiver/rocks_history_store.h"
#include "log/testing/temp_dir.h"

namespace qim {
namespace {

Message message(const std::string& conversation, uint64_t id, const std::string& body) {
  Message m;
  m.id = MessageId{id};
  m.conversation = ConversationId::parse(conversation).value();
  m.sender = UserId::parse("alice").value();
  m.client_msg_id = "c" + std::to_string(id);
  m.server_time_ms = 1'700'000'000'000 + static_cast<int64_t>(id);
  m.body = body;
  return m;
}

std::vector<uint64_t> ids(const HistoryPage& page) {
  std::vector<uint64_t> out;
  for (const auto& m : page.messages) out.push_back(m.id.value);
  return out;
}

class HistoryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = RocksHistoryStore::open(dir_.sub("history")).value(); }
  testing::TempDir dir_;
  std::unique_ptr<RocksHistoryStore> store_;
};

TEST_F(HistoryStoreTest, PagesBackNewestFirstWithBefore) {
  for (uint64_t id = 1; id <= 7; ++id) ASSERT_TRUE(store_->append(message("d:alice:bob", id, "m")).ok());
  ASSERT_TRUE(store_->append(message("d:alice:carol", 100, "other")).ok());
  auto page =
      store_->read(HistoryQuery{ConversationId::parse("d:alice:bob").value(), std::nullopt, 3}).value();
  EXPECT_EQ(ids(page), (std::vector<uint64_t>{7, 6, 5}));
  EXPECT_TRUE(page.more);
  page = store_->read(HistoryQuery{ConversationId::parse("d:alice:bob").value(), MessageId{5}, 3}).value();
  EXPECT_EQ(ids(page), (std::vector<uint64_t>{4, 3, 2}));
  EXPECT_TRUE(page.more);
  page = store_->read(HistoryQuery{ConversationId::parse("d:alice:bob").value(), MessageId{2}, 3}).value();
  EXPECT_EQ(ids(page), (std::vector<uint64_t>{1}));
  EXPECT_FALSE(page.more);
  EXPECT_EQ(page.messages[0], message("d:alice:bob", 1, "m"));
  page = store_->read(HistoryQuery{ConversationId::parse("d:alice:carol").value(), std::nullopt, 50}).value();
  EXPECT_EQ(ids(page), std::vector<uint64_t>{100});
  page = store_->read(HistoryQuery{ConversationId::parse("d:here:nobody").value(), std::nullopt, 50}).value();
  EXPECT_TRUE(page.messages.empty());
}

TEST_F(HistoryStoreTest, AppendingTheSameMessageTwiceKeepsOne) {
  ASSERT_TRUE(store_->append(message("d:a:b", 9, "x")).ok());
  ASSERT_TRUE(store_->append(message("d:a:b", 9, "x")).ok());
  auto page = store_->read(HistoryQuery{ConversationId::parse("d:a:b").value(), std::nullopt, 10}).value();
  EXPECT_EQ(ids(page), std::vector<uint64_t>{9});
  EXPECT_EQ(store_->op_counts().inserts, 4u);  // two rows per append, as counted
}

TEST_F(HistoryStoreTest, ConversationsThatArePrefixesOfEachOtherStayApart) {
  ASSERT_TRUE(store_->append(message("d:a:b", 1, "x")).ok());
  ASSERT_TRUE(store_->append(message("d:a:bc", 2, "y")).ok());
  auto page = store_->read(HistoryQuery{ConversationId::parse("d:a:b").value(), std::nullopt, 10}).value();
  EXPECT_EQ(ids(page), std::vector<uint64_t>{1});
}

TEST_F(HistoryStoreTest, RefusesBadQueriesAndMessages) {
  EXPECT_EQ(store_->read(HistoryQuery{ConversationId::parse("d:a:b").value(), std::nullopt, 0}).code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(store_->read(HistoryQuery{ConversationId::parse("d:a:b").value(), std::nullopt, 201}).code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(store_->append(message("d:a:b", 1, std::string(kMaxBodyBytes + 1, 'x'))).code(),
            Errc::kInvalidArgument);
}

TEST_F(HistoryStoreTest, SurvivesAReopen) {
  ASSERT_TRUE(store_->append(message("d:a:b", 3, "kept")).ok());
  ASSERT_TRUE(store_->sync().ok());
  store_.reset();
  store_ = RocksHistoryStore::open(dir_.sub("history")).value();
  auto page = store_->read(HistoryQuery{ConversationId::parse("d:a:b").value(), std::nullopt, 10}).value();
  ASSERT_EQ(page.messages.size(), 1u);
  EXPECT_EQ(page.messages[0].body, "kept");
  EXPECT_EQ(RocksHistoryStore::open(dir_.sub("history")).code(), Errc::kIo);  // one process at a time
}

// History index keys are "c" + id + NUL + message id: a conversation whose id is a prefix of another's
// never reads the other's rows (issue 8, item 1 audit; ids themselves have one reading, core/conversation.h).
TEST_F(HistoryStoreTest, ConversationsWhoseIdsArePrefixesOfOthersStayApart) {
  const std::vector<std::string> convs = {"d:a:b", "d:a:b.c", "d:a:bc", "d:a.b:c", "d:a:b@x"};
  for (size_t i = 0; i < convs.size(); ++i)
    ASSERT_TRUE(store_->append(message(convs[i], 10 + i, convs[i])).ok()) << convs[i];
  ASSERT_TRUE(store_->sync().ok());
  store_.reset();  // read through a fresh store over the same files
  store_ = RocksHistoryStore::open(dir_.sub("history")).value();
  for (size_t i = 0; i < convs.size(); ++i) {
    auto page = store_->read(HistoryQuery{ConversationId::parse(convs[i]).value(), std::nullopt, 50});
    ASSERT_TRUE(page.ok()) << page.error().to_string();
    EXPECT_EQ(ids(*page), std::vector<uint64_t>{10 + i}) << convs[i];
  }
}

}  // namespace
}  // namespace qim
