// The archiver writing to CQL: an embedded Outbox in, the CQL history store out, read back through a
// fresh store (a gateway's, in the distributed deployment). Label scylla (QIM_TEST_CQL_HOSTS).
#include <gtest/gtest.h>

#include "archiver/archiver.h"
#include "archiver/tests/cql_history_fixture.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "mailbox/scylla/cql_status.h"
#include "outbox/outbox_record.h"

namespace qim::test {
namespace {

using namespace std::chrono_literals;

class CqlArchiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test_cql_hosts()) GTEST_SKIP() << kCqlSkipMessage;
    outbox_ = testing::open_test_log(dir_.sub("outbox"), 4, "outbox");
    auto admin = cql::Session::connect({.hosts = cql::split_hosts(*test_cql_hosts())});
    ASSERT_TRUE(admin.ok()) << admin.error().to_string();
    admin_ = std::move(admin).value();
  }
  void TearDown() override {
    if (admin_.connected())
      (void)admin_.query("DROP KEYSPACE IF EXISTS " + keyspace_, {}, cql::ExecOptions{.timeout_ms = 60'000});
  }
  void send(const std::string& from, const std::string& to, const std::string& body) {
    OutboxRecord r;
    r.sender = UserId::parse(from).value();
    r.conversation = direct_conversation(r.sender, UserId::parse(to).value()).value();
    r.server_time_ms = 1'700'000'000'000;
    r.body = body;
    ASSERT_TRUE(
        outbox_->append_sync(outbox_partition_of(r.conversation, 4), "", encode_outbox_record(r)).ok());
  }
  std::unique_ptr<CqlHistoryStore> open_store() {
    auto store = CqlHistoryStore::open(test_cql_history_options(keyspace_));
    EXPECT_TRUE(store.ok()) << store.error().to_string();
    return store.ok() ? std::move(store).value() : nullptr;
  }
  std::vector<std::string> bodies(HistoryStore& store, const std::string& a, const std::string& b) {
    auto conversation = direct_conversation(UserId::parse(a).value(), UserId::parse(b).value()).value();
    std::vector<std::string> out;
    auto page = store.read(HistoryQuery{conversation, std::nullopt, 200});
    EXPECT_TRUE(page.ok()) << page.error().to_string();
    if (page.ok())
      for (const auto& m : page->messages) out.push_back(m.body);
    return out;
  }
  void archive_all(HistoryStore& store, uint64_t expect_messages) {
    ArchiverOptions o;
    o.consumer.poll_wait = 10ms;
    Archiver a(*outbox_, store, std::move(o));
    ASSERT_TRUE(a.start().ok());
    ASSERT_TRUE(a.drain(120s).ok());
    EXPECT_EQ(a.metrics().messages, expect_messages);
  }

  testing::TempDir dir_;
  std::unique_ptr<EmbeddedLog> outbox_;
  cql::Session admin_;
  std::string keyspace_ = unique_history_keyspace();
};

TEST_F(CqlArchiverTest, WritesEveryMessageToCqlOnceEvenWhenReplayed) {
  for (int i = 0; i < 30; ++i)
    send(i % 2 ? "bob" : "alice", i % 2 ? "alice" : "bob", "ab" + std::to_string(i));
  send("carol", "dave", "elsewhere");
  ASSERT_TRUE(outbox_->append_sync(1, "", "not an outbox record").ok());
  auto writer = open_store();
  ASSERT_NE(writer, nullptr);
  archive_all(*writer, 31);
  EXPECT_EQ(writer->op_counts().inserts, 62u);  // the seed's count: 2 archive inserts per message

  auto reader = open_store();  // another process's store: nothing cached
  ASSERT_NE(reader, nullptr);
  std::vector<std::string> expected;
  for (int i = 29; i >= 0; --i) expected.push_back("ab" + std::to_string(i));
  EXPECT_EQ(bodies(*reader, "alice", "bob"), expected);
  EXPECT_EQ(bodies(*reader, "carol", "dave"), std::vector<std::string>{"elsewhere"});

  // A replay of the whole Outbox (lost positions) rewrites the same rows: still one of each.
  for (uint32_t p = 0; p < 4; ++p) ASSERT_TRUE(outbox_->commit(kArchiverGroup, p, Offset{0}).ok());
  writer.reset();
  writer = open_store();
  ASSERT_NE(writer, nullptr);
  archive_all(*writer, 31);
  EXPECT_EQ(bodies(*reader, "alice", "bob"), expected);
  // Two rows per message in CQL itself, counted by the engine rather than by the store.
  auto rows = admin_.query("SELECT COUNT(*) FROM " + keyspace_ + ".history_message", {},
                           cql::ExecOptions{.consistency = cql::Consistency::kQuorum});
  ASSERT_TRUE(rows.ok()) << rows.error().to_string();
  EXPECT_EQ(rows->row(0).get_i64(0).value(), 31);
  rows = admin_.query("SELECT COUNT(*) FROM " + keyspace_ + ".history_index", {},
                      cql::ExecOptions{.consistency = cql::Consistency::kQuorum});
  ASSERT_TRUE(rows.ok()) << rows.error().to_string();
  EXPECT_EQ(rows->row(0).get_i64(0).value(), 31);
}

}  // namespace
}  // namespace qim::test
