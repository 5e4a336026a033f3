#include "archiver/archiver.h"

#include <gtest/gtest.h>

#include "archiver/rocks_history_store.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

class ArchiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outbox_ = testing::open_test_log(dir_.sub("outbox"), 2, "outbox");
    history_ = RocksHistoryStore::open(dir_.sub("history")).value();
  }
  void send(const std::string& from, const std::string& to, const std::string& body,
            const std::string& client_msg_id = "", int64_t server_time_ms = 1'700'000'000'000) {
    OutboxRecord r;
    r.sender = UserId::parse(from).value();
    r.conversation = direct_conversation(r.sender, UserId::parse(to).value()).value();
    r.client_msg_id = client_msg_id;
    r.server_time_ms = server_time_ms;
    r.body = body;
    ASSERT_TRUE(
        outbox_->append_sync(outbox_partition_of(r.conversation, 2), "", encode_outbox_record(r)).ok());
  }
  std::vector<std::string> history(const std::string& a, const std::string& b) {
    auto conv = direct_conversation(UserId::parse(a).value(), UserId::parse(b).value()).value();
    std::vector<std::string> out;
    const HistoryPage page = history_->read(HistoryQuery{conv, std::nullopt, 200}).value();
    for (const auto& m : page.messages) out.push_back(m.body);
    return out;
  }
  ArchiverOptions options() {
    ArchiverOptions o;
    o.consumer.poll_wait = 10ms;
    o.make_durable = [this] {
      ++syncs_;
      return history_->sync();
    };
    return o;
  }

  testing::TempDir dir_;
  std::unique_ptr<EmbeddedLog> outbox_;
  std::unique_ptr<RocksHistoryStore> history_;
  int syncs_ = 0;
};

TEST_F(ArchiverTest, WritesEveryMessageOnceEvenWhenReplayed) {
  send("alice", "bob", "one");
  send("bob", "alice", "two");
  send("carol", "dave", "elsewhere");
  ASSERT_TRUE(outbox_->append_sync(0, "", "not an outbox record").ok());
  {
    Archiver a(*outbox_, *history_, options());
    ASSERT_TRUE(a.start().ok());
    ASSERT_TRUE(a.drain(60s).ok());
    EXPECT_EQ(a.metrics().messages, 3u);
    EXPECT_EQ(a.metrics().skipped, 1u);
  }
  EXPECT_GE(syncs_, 1);
  EXPECT_LE(syncs_, 2);  // once per partition's commit, not once per batch
  EXPECT_EQ(history("alice", "bob"), (std::vector<std::string>{"two", "one"}));
  // A replay of the whole Outbox (e.g. the positions were lost) rewrites the same rows.
  for (uint32_t p = 0; p < 2; ++p) ASSERT_TRUE(outbox_->commit(kArchiverGroup, p, Offset{0}).ok());
  Archiver again(*outbox_, *history_, options());
  ASSERT_TRUE(again.start().ok());
  ASSERT_TRUE(again.drain(60s).ok());
  EXPECT_EQ(history("alice", "bob"), (std::vector<std::string>{"two", "one"}));
  EXPECT_EQ(history("carol", "dave"), std::vector<std::string>{"elsewhere"});
}

// A SEND stored twice (its retry appended after the first attempt was stored unknown to the gateway) is
// archived once: HISTORY shows it once.
TEST_F(ArchiverTest, ASendStoredTwiceIsArchivedOnce) {
  send("alice", "bob", "once", "retried");
  send("bob", "alice", "reply", "r1");
  send("alice", "bob", "once", "retried", 1'700'000'006'000);
  Archiver a(*outbox_, *history_, options());
  ASSERT_TRUE(a.start().ok());
  ASSERT_TRUE(a.drain(60s).ok());
  EXPECT_EQ(a.metrics().messages, 2u);
  EXPECT_EQ(a.metrics().repeats, 1u);
  EXPECT_EQ(history("alice", "bob"), (std::vector<std::string>{"reply", "once"}));
}

}  // namespace
}  // namespace qim
