#include "app/config.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

EnvLookup env(std::map<std::string, std::string> vars) {
  return with_overrides([](const std::string&) { return std::optional<std::string>(); }, std::move(vars));
}

TEST(AppConfigTest, DefaultsOwnEveryShardAtEpochOne) {
  auto c = app_config_from_env(env({})).value();
  EXPECT_EQ(c.data_dir, "qim-data");
  EXPECT_EQ(c.store.data_dir, "qim-data/mailbox");
  EXPECT_EQ(c.store.backend, "embedded");
  EXPECT_EQ(c.log.backend, "embedded");
  EXPECT_EQ(c.owned_shards.size(), 16u);
  EXPECT_EQ(c.epoch, Epoch{1});
  EXPECT_EQ(c.delivery_mode, "hybrid");
}

TEST(AppConfigTest, ReadsOurVariables) {
  auto c = app_config_from_env(env({{"QIM_DATA_DIR", "/tmp/x"},
                                    {"QIM_SHARDS", "8"},
                                    {"QIM_OWNED_SHARDS", "0-3"},
                                    {"QIM_EPOCH", "7"},
                                    {"QIM_OUTBOX_PARTITIONS", "4"},
                                    {"QIM_DELIVERY_MODE", "pull"}}))
               .value();
  EXPECT_EQ(c.log.data_dir, "/tmp/x");
  EXPECT_EQ(c.store.data_dir, "/tmp/x/mailbox");
  EXPECT_EQ(c.shards, 8u);
  EXPECT_EQ(c.owned_shards.size(), 4u);
  EXPECT_EQ(c.epoch, Epoch{7});
  EXPECT_EQ(c.outbox_partitions, 4u);
  EXPECT_EQ(c.delivery_mode, "pull");
}

TEST(AppConfigTest, EveryBadValueNamesItsVariable) {
  const std::map<std::string, std::string> bad = {
      {"QIM_EPOCH", "0"},         {"QIM_EPOCH", "65536"},         {"QIM_OWNED_SHARDS", "0-16"},
      {"QIM_LOG_BACKEND", "nfs"}, {"QIM_DELIVERY_MODE", "fast"},  {"QIM_OUTBOX_PARTITIONS", "x"},
      {"QIM_LOG_LEVEL", "loud"},  {"QIM_DRAIN_TIMEOUT_MS", "-1"}, {"QIM_FANOUT_CHUNK_ENTRIES", "0"},
      {"QIM_KAFKA_BROKERS", ","}};
  for (const auto& [var, value] : bad) {
    auto c = app_config_from_env(env({{var, value}}));
    ASSERT_FALSE(c.ok()) << var << "=" << value;
    EXPECT_EQ(c.code(), Errc::kConfig);
    EXPECT_NE(c.error().message().find(var), std::string::npos) << c.error().message();
  }
}

TEST(AppConfigTest, KafkaVariables) {
  auto defaults = app_config_from_env(env({})).value();
  EXPECT_EQ(defaults.log.kafka_brokers, std::vector<std::string>{"127.0.0.1:19092"});
  EXPECT_EQ(defaults.log.kafka_topic_prefix, "qim.");
  EXPECT_EQ(defaults.log.kafka_append_timeout, std::chrono::milliseconds(5000));
  EXPECT_EQ(defaults.log.kafka_replication_factor, 1);
  auto c = app_config_from_env(env({{"QIM_LOG_BACKEND", "kafka"},
                                    {"QIM_KAFKA_BROKERS", "10.0.0.1:9092,kafka-2:9093"},
                                    {"QIM_KAFKA_TOPIC_PREFIX", "prod_qim-1."},
                                    {"QIM_KAFKA_APPEND_TIMEOUT_MS", "2500"},
                                    {"QIM_KAFKA_REPLICATION_FACTOR", "3"}}))
               .value();
  EXPECT_EQ(c.log.backend, "kafka");
  EXPECT_FALSE(log_is_single_process(c.log));
  EXPECT_EQ(c.log.kafka_brokers, (std::vector<std::string>{"10.0.0.1:9092", "kafka-2:9093"}));
  EXPECT_EQ(c.log.kafka_topic_prefix, "prod_qim-1.");
  EXPECT_EQ(c.log.kafka_append_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(c.log.kafka_replication_factor, 3);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"QIM_KAFKA_BROKERS", ","},
      {"QIM_KAFKA_BROKERS", "localhost"},
      {"QIM_KAFKA_BROKERS", "127.0.0.1:19092,:9092"},
      {"QIM_KAFKA_BROKERS", "127.0.0.1:port"},
      {"QIM_KAFKA_BROKERS", "127.0.0.1:70000"},
      {"QIM_KAFKA_TOPIC_PREFIX", "qim/"},
      {"QIM_KAFKA_TOPIC_PREFIX", "q i m"},
      {"QIM_KAFKA_TOPIC_PREFIX", std::string(201, 'q')},
      {"QIM_KAFKA_APPEND_TIMEOUT_MS", "0"},
      {"QIM_KAFKA_APPEND_TIMEOUT_MS", "99"},
      {"QIM_KAFKA_APPEND_TIMEOUT_MS", "300001"},
      {"QIM_KAFKA_APPEND_TIMEOUT_MS", "5s"},
      {"QIM_KAFKA_REPLICATION_FACTOR", "0"},
      {"QIM_KAFKA_REPLICATION_FACTOR", "17"}};
  for (const auto& [var, value] : bad) {
    auto r = app_config_from_env(env({{var, value}}));
    ASSERT_FALSE(r.ok()) << var << "=" << value;
    EXPECT_EQ(r.code(), Errc::kConfig);
    EXPECT_NE(r.error().message().find(var + "='" + value + "'"), std::string::npos) << r.error().message();
  }
}

TEST(AppConfigTest, RetentionSweepVariables) {
  auto defaults = app_config_from_env(env({})).value();
  EXPECT_EQ(defaults.retention_sweep_interval, std::chrono::milliseconds(60'000));
  EXPECT_EQ(defaults.retention_sweep_batch, 1000u);
  auto c = app_config_from_env(
               env({{"QIM_RETENTION_SWEEP_INTERVAL_MS", "250"}, {"QIM_RETENTION_SWEEP_BATCH", "7"}}))
               .value();
  EXPECT_EQ(c.retention_sweep_interval, std::chrono::milliseconds(250));
  EXPECT_EQ(c.retention_sweep_batch, 7u);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"QIM_RETENTION_SWEEP_INTERVAL_MS", "0"},
      {"QIM_RETENTION_SWEEP_INTERVAL_MS", "99"},
      {"QIM_RETENTION_SWEEP_INTERVAL_MS", "86400001"},
      {"QIM_RETENTION_SWEEP_INTERVAL_MS", "1s"},
      {"QIM_RETENTION_SWEEP_BATCH", "0"},
      {"QIM_RETENTION_SWEEP_BATCH", "100001"},
      {"QIM_RETENTION_SWEEP_BATCH", "-5"}};
  for (const auto& [var, value] : bad) {
    auto r = app_config_from_env(env({{var, value}}));
    ASSERT_FALSE(r.ok()) << var << "=" << value;
    EXPECT_EQ(r.code(), Errc::kConfig);
    EXPECT_NE(r.error().message().find(var + "='" + value + "'"), std::string::npos) << r.error().message();
  }
}

TEST(AppConfigTest, FlagsOverrideTheEnvironment) {
  auto base = env({{"QIM_EPOCH", "2"}});
  auto c = app_config_from_env(with_overrides(base, {{"QIM_EPOCH", "3"}})).value();
  EXPECT_EQ(c.epoch, Epoch{3});
}

}  // namespace
}  // namespace qim
