// The CQL message state store (lifecycle/cql/cql_message_state_store.h) on the cluster of
// QIM_TEST_CQL_HOSTS: the store contract, then what only the engine shows (read with a plain SELECT): the
// state is the opaque bytes of encode_message_state written at its event's offset, the watermark's write
// time is its value, so writes landing out of order keep the maximum and an older decision never replaces
// a newer one, with no LWT. A keyspace per test, dropped after it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "lifecycle/cql/cql_message_state_store.h"
#include "lifecycle/tests/message_state_store_contract.h"

namespace qim {
namespace {

std::optional<std::string> cql_hosts() {
  const char* v = std::getenv("QIM_TEST_CQL_HOSTS");  // NOLINT(concurrency-mt-unsafe): read in SetUp only
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

class CqlMessageStateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cql_hosts()) GTEST_SKIP() << "QIM_TEST_CQL_HOSTS is unset: no CQL cluster to test against";
    static std::atomic<int> next{0};
    keyspace_ = "msgstate_test_" + std::to_string(::getpid()) + "_" + std::to_string(next++);
    auto admin = cql::Session::connect({.hosts = cql::split_hosts(*cql_hosts())});
    ASSERT_TRUE(admin.ok());
    admin_ = std::move(admin).value();
    CqlMessageStateOptions o;
    o.hosts = cql::split_hosts(*cql_hosts());
    o.keyspace = keyspace_;
    o.request_timeout_ms = 15'000;
    auto opened = CqlMessageStateStore::open(o);
    ASSERT_TRUE(opened.ok()) << opened.error().to_string();
    store_ = std::move(opened).value();
  }
  void TearDown() override {
    if (admin_.connected())
      (void)admin_.query("DROP KEYSPACE IF EXISTS " + keyspace_, {}, cql::ExecOptions{.timeout_ms = 60'000});
  }
  cql::Rows select(const std::string& what) {
    auto rows = admin_.query(what, {}, cql::ExecOptions{.consistency = cql::Consistency::kQuorum});
    EXPECT_TRUE(rows.ok()) << what;
    return rows.ok() ? std::move(rows).value() : cql::Rows();
  }

  std::string keyspace_;
  cql::Session admin_;
  std::unique_ptr<CqlMessageStateStore> store_;
};

TEST_F(CqlMessageStateStoreTest, Contract) {
  run_message_state_store_contract(*store_);
}

TEST_F(CqlMessageStateStoreTest, TheEngineHoldsOpaqueBytesAndAWatermarkWrittenAtItsValue) {
  const MessageState s = contract_message_state();
  ASSERT_TRUE(store_->put(s, 1, 20).ok());
  cql::Rows state = select("SELECT state, WRITETIME(state) FROM " + keyspace_ +
                           ".message_states WHERE message_id = " + std::to_string(s.id.value));
  ASSERT_EQ(state.size(), 1u);
  auto bytes = state[0].get_blob(0).value();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), encode_message_state(s));
  EXPECT_EQ(state[0].get_i64(1).value(), 20);
  cql::Rows w = select("SELECT watermark, WRITETIME(watermark) FROM " + keyspace_ +
                       ".message_watermarks WHERE outbox_partition = 1");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].get_i64(0).value(), 21);
  EXPECT_EQ(w[0].get_i64(1).value(), 21);
}

TEST_F(CqlMessageStateStoreTest, WritesLandingOutOfOrderKeepTheNewestStateAndTheHighestWatermark) {
  const MessageState newer = contract_message_state();  // recalled at 20
  MessageState older = newer;
  older.events.clear();
  ASSERT_TRUE(store_->put(newer, 1, 20).ok());
  ASSERT_TRUE(store_->put(older, 1, 15).ok());  // a delayed write of a fanout that lost the partition
  EXPECT_EQ(*store_->load(newer.id).value(), newer);
  // A plain overwrite with a lower value at a lower write time (what a late retry is) does not win.
  select("INSERT INTO " + keyspace_ +
         ".message_watermarks (outbox_partition, watermark) VALUES (1, 5) USING TIMESTAMP 5");
  EXPECT_EQ(store_->watermark(1).value(), 21u);
}

}  // namespace
}  // namespace qim
