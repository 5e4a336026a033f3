// The Redis message state store (lifecycle/redis/redis_message_state_store.h) on the instances of
// QIM_TEST_REDIS: the store contract, then what only the engine shows (read with plain Redis commands):
// the state is the opaque bytes of encode_message_state, an older decision never replaces a newer one,
// and a key of another type is a corrupt row, not a crash. A key prefix per test, deleted after it.
#include <gtest/gtest.h>

#include "lifecycle/redis/redis_message_state_store.h"
#include "lifecycle/tests/message_state_store_contract.h"
#include "mailbox/redis/redis_test_env.h"

namespace qim {
namespace {

class RedisMessageStateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoints_ = test_redis_endpoints();
    if (endpoints_.empty()) GTEST_SKIP() << kTestRedisSkipMessage;
    prefix_ = unique_test_prefix("msgstate");
    RedisMessageStateOptions o;
    o.endpoints = endpoints_;
    o.key_prefix = prefix_;
    auto opened = RedisMessageStateStore::open(o);
    ASSERT_TRUE(opened.ok()) << opened.error().to_string();
    store_ = std::move(opened).value();
  }
  void TearDown() override {
    if (!prefix_.empty()) (void)delete_test_prefix(endpoints_, prefix_);
  }
  // One plain command on the instance of `partition`.
  RedisReply raw(uint32_t partition, RedisCommand command) {
    auto endpoint = RedisEndpoint::parse(endpoints_[store_->instance_of(partition)]).value();
    auto conn = RedisConnection::open(endpoint, RedisTimeouts{}).value();
    return conn->run(command).value();
  }

  std::vector<std::string> endpoints_;
  std::string prefix_;
  std::unique_ptr<RedisMessageStateStore> store_;
};

TEST_F(RedisMessageStateStoreTest, Contract) {
  run_message_state_store_contract(*store_);
}

TEST_F(RedisMessageStateStoreTest, TheEngineHoldsTheStateAsOpaqueBytesBesideItsPartitionsWatermark) {
  const MessageState s = contract_message_state();
  ASSERT_TRUE(store_->put(s, 1, 20).ok());
  // Both keys on the partition's instance: one script wrote them together.
  RedisReply state = raw(1, {"HGET", message_state_key(prefix_, s.id), "s"});
  EXPECT_EQ(state.str, encode_message_state(s));
  EXPECT_EQ(raw(1, {"HGET", message_state_key(prefix_, s.id), "at"}).str, "20");
  EXPECT_EQ(raw(1, {"GET", message_watermark_key(prefix_, 1)}).str, "21");
}

TEST_F(RedisMessageStateStoreTest, AnOlderDecisionNeverReplacesANewerOne) {
  const MessageState newer = contract_message_state();  // recalled at 20
  MessageState older = newer;
  older.events.clear();
  ASSERT_TRUE(store_->put(newer, 1, 20).ok());
  ASSERT_TRUE(store_->put(older, 1, 15).ok());  // e.g. a delayed write of a fanout that lost the partition
  EXPECT_EQ(*store_->load(newer.id).value(), newer);
  EXPECT_EQ(store_->watermark(1).value(), 21u);
}

TEST_F(RedisMessageStateStoreTest, AForeignKeyIsACorruptRowAndNothingIsWritten) {
  const MessageState s = contract_message_state();
  ASSERT_FALSE(raw(1, {"SET", message_state_key(prefix_, s.id), "not a hash"}).is_error());
  auto loaded = store_->load(s.id);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.code(), Errc::kCorruptEntry) << loaded.error().to_string();
  Status put = store_->put(s, 1, 20);
  EXPECT_EQ(put.code(), Errc::kCorruptEntry) << (put.ok() ? "" : put.error().to_string());
  auto w = store_->watermark(1);
  ASSERT_TRUE(w.ok()) << w.error().to_string();
  EXPECT_EQ(*w, 0u);  // the script checked before its first write
  ASSERT_FALSE(raw(2, {"SET", message_watermark_key(prefix_, 2), "x"}).is_error());
  auto bad = store_->watermark(2);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), Errc::kCorruptEntry) << bad.error().to_string();
}

TEST_F(RedisMessageStateStoreTest, APutOfAnotherPartitionsMessageIsRefused) {
  EXPECT_EQ(store_->put(contract_message_state(), 0, 20).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace qim
