#include "app/config.h"

#include <gtest/gtest.h>

#include <fstream>

#include "log/embedded/embedded_log.h"
#include "log/testing/temp_dir.h"

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
  // A data directory that does not exist yet gets one shard and Outbox partition per CPU (decision 51).
  const uint32_t fresh = embedded_default_partitions(allowed_cpus().value().size());
  EXPECT_EQ(c.shards, fresh);
  EXPECT_EQ(c.store.shard_count, fresh);
  EXPECT_EQ(c.outbox_partitions, fresh);
  EXPECT_EQ(c.owned_shards.size(), fresh);
  EXPECT_EQ(c.log.batch_interval, std::chrono::microseconds(3000));
  EXPECT_EQ(c.epoch, Epoch{1});
  EXPECT_EQ(c.delivery_mode, "hybrid");
}

TEST(AppConfigTest, ANewEmbeddedDataDirectoryGetsAShardPerCpuFromTwoToSixteen) {
  EXPECT_EQ(embedded_default_partitions(0), 2u);  // the kernel did not say
  EXPECT_EQ(embedded_default_partitions(1), 2u);
  EXPECT_EQ(embedded_default_partitions(2), 2u);
  EXPECT_EQ(embedded_default_partitions(8), 8u);
  EXPECT_EQ(embedded_default_partitions(64), 16u);
}

TEST(AppConfigTest, ARemoteStoreKeepsSixteenShardsOnEmbeddedLogs) {
  for (const char* store : {"redis", "scylla", "scylla-lwt"}) {
    auto c = app_config_from_env(env({{"QIM_MAILBOX_STORE_BACKEND", store}})).value();
    EXPECT_EQ(c.shards, 16u) << store;
    EXPECT_EQ(c.store.shard_count, 16u) << store;
    EXPECT_EQ(c.outbox_partitions, 16u) << store;
  }
}

TEST(AppConfigTest, KafkaLogsKeepSixteenShards) {
  auto c = app_config_from_env(env({{"QIM_LOG_BACKEND", "kafka"}})).value();
  EXPECT_EQ(c.shards, 16u);
  EXPECT_EQ(c.store.shard_count, 16u);
  EXPECT_EQ(c.outbox_partitions, 16u);
}

TEST(AppConfigTest, AnEmbeddedDataDirectoryKeepsTheCountsItWasCreatedWith) {
  testing::TempDir dir;
  for (auto [name, partitions] : {std::pair{"mailbox", 16u}, std::pair{"outbox", 8u}}) {
    EmbeddedLogOptions o;
    o.dir = dir.sub(std::string(name) + "-log");
    o.name = name;
    o.partitions = partitions;
    ASSERT_TRUE(EmbeddedLog::open(o).ok());
  }
  auto c = app_config_from_env(env({{"QIM_DATA_DIR", dir.path()}})).value();
  EXPECT_EQ(c.shards, 16u);
  EXPECT_EQ(c.store.shard_count, 16u);
  EXPECT_EQ(c.owned_shards.size(), 16u);
  EXPECT_EQ(c.outbox_partitions, 8u);
  // A count given is taken as is: opening the log then refuses it if it differs.
  c = app_config_from_env(env({{"QIM_DATA_DIR", dir.path()}, {"QIM_SHARDS", "4"}})).value();
  EXPECT_EQ(c.shards, 4u);
  EXPECT_EQ(c.outbox_partitions, 8u);
  // A log whose partition count cannot be read stops the start, naming the variable and the file.
  std::ofstream(dir.sub("mailbox-log/META"), std::ios::trunc) << "garbage\n";
  auto bad = app_config_from_env(env({{"QIM_DATA_DIR", dir.path()}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), Errc::kConfig);
  EXPECT_NE(bad.error().message().find("QIM_SHARDS"), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("mailbox-log/META"), std::string::npos) << bad.error().message();
}

TEST(AppConfigTest, ReadsOurVariables) {
  auto c = app_config_from_env(env({{"QIM_DATA_DIR", "/tmp/x"},
                                    {"QIM_SHARDS", "8"},
                                    {"QIM_OWNED_SHARDS", "0-3"},
                                    {"QIM_EPOCH", "7"},
                                    {"QIM_OUTBOX_PARTITIONS", "4"},
                                    {"QIM_CPU_PLACEMENT", "1:0"},
                                    {"QIM_LOG_BATCH_INTERVAL_US", "0"},
                                    {"QIM_DELIVERY_MODE", "pull"}}))
               .value();
  EXPECT_EQ(c.log.data_dir, "/tmp/x");
  EXPECT_EQ(c.store.data_dir, "/tmp/x/mailbox");
  EXPECT_EQ(c.shards, 8u);
  EXPECT_EQ(c.owned_shards.size(), 4u);
  EXPECT_EQ(c.epoch, Epoch{7});
  EXPECT_EQ(c.outbox_partitions, 4u);
  EXPECT_EQ(c.cpu_placement.pipeline, std::vector<int>{1});
  EXPECT_EQ(c.cpu_placement.gateway, std::vector<int>{0});
  EXPECT_EQ(c.log.batch_interval, std::chrono::microseconds(0));
  EXPECT_EQ(c.delivery_mode, "pull");
}

TEST(AppConfigTest, EveryBadValueNamesItsVariable) {
  const std::map<std::string, std::string> bad = {{"QIM_EPOCH", "0"},
                                                  {"QIM_EPOCH", "65536"},
                                                  {"QIM_OWNED_SHARDS", "0-16"},
                                                  {"QIM_LOG_BACKEND", "nfs"},
                                                  {"QIM_DELIVERY_MODE", "fast"},
                                                  {"QIM_OUTBOX_PARTITIONS", "x"},
                                                  {"QIM_LOG_BATCH_INTERVAL_US", "100001"},
                                                  {"QIM_CPU_PLACEMENT", "1-0:2"},
                                                  {"QIM_LOG_LEVEL", "loud"},
                                                  {"QIM_DRAIN_TIMEOUT_MS", "-1"},
                                                  {"QIM_FANOUT_CHUNK_ENTRIES", "0"},
                                                  {"QIM_KAFKA_BROKERS", ","},
                                                  {"QIM_KAFKA_TOPIC_PREFIX", "a b"},
                                                  {"QIM_KAFKA_APPEND_TIMEOUT_MS", "0"},
                                                  {"QIM_HISTORY_BACKEND", "rocks"}};
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
  EXPECT_EQ(defaults.log.kafka_linger, std::chrono::milliseconds(5));
  EXPECT_EQ(defaults.log.kafka_fetch_wait, std::chrono::milliseconds(25));
  auto c = app_config_from_env(env({{"QIM_LOG_BACKEND", "kafka"},
                                    {"QIM_KAFKA_BROKERS", "10.0.0.1:9092,kafka-2:9093"},
                                    {"QIM_KAFKA_TOPIC_PREFIX", "prod_qim-1."},
                                    {"QIM_KAFKA_APPEND_TIMEOUT_MS", "2500"},
                                    {"QIM_KAFKA_REPLICATION_FACTOR", "3"},
                                    {"QIM_KAFKA_LINGER_MS", "0"},
                                    {"QIM_KAFKA_FETCH_WAIT_MS", "20"}}))
               .value();
  EXPECT_EQ(c.log.backend, "kafka");
  EXPECT_FALSE(log_is_single_process(c.log));
  EXPECT_EQ(c.log.kafka_brokers, (std::vector<std::string>{"10.0.0.1:9092", "kafka-2:9093"}));
  EXPECT_EQ(c.log.kafka_topic_prefix, "prod_qim-1.");
  EXPECT_EQ(c.log.kafka_append_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(c.log.kafka_replication_factor, 3);
  EXPECT_EQ(c.log.kafka_linger, std::chrono::milliseconds(0));
  EXPECT_EQ(c.log.kafka_fetch_wait, std::chrono::milliseconds(20));
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
      {"QIM_KAFKA_REPLICATION_FACTOR", "17"},
      {"QIM_KAFKA_LINGER_MS", "1001"},
      {"QIM_KAFKA_LINGER_MS", "-1"},
      {"QIM_KAFKA_FETCH_WAIT_MS", "1001"},
      {"QIM_KAFKA_FETCH_WAIT_MS", "5ms"}};
  for (const auto& [var, value] : bad) {
    auto r = app_config_from_env(env({{var, value}}));
    ASSERT_FALSE(r.ok()) << var << "=" << value;
    EXPECT_EQ(r.code(), Errc::kConfig);
    EXPECT_NE(r.error().message().find(var + "='" + value + "'"), std::string::npos) << r.error().message();
  }
}

// History lives where the separate archiver and gateway processes can all reach it: by default where
// the mailbox store does (docs/adr/0017-history-follows-store-backend.md).
TEST(AppConfigTest, HistoryBackendFollowsTheStoreUnlessSet) {
  const std::map<std::string, std::string> follows = {{"memory", "embedded"},
                                                      {"embedded", "embedded"},
                                                      {"scylla", "scylla"},
                                                      {"scylla-lwt", "scylla"},
                                                      {"redis", "redis"}};
  for (const auto& [store, history] : follows) {
    auto c = app_config_from_env(env({{"QIM_MAILBOX_STORE_BACKEND", store}}));
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    EXPECT_EQ(c->history.backend, history) << store;
  }
  auto c = app_config_from_env(env({{"QIM_MAILBOX_STORE_BACKEND", "scylla"},
                                    {"QIM_HISTORY_BACKEND", "embedded"},
                                    {"QIM_DATA_DIR", "/tmp/q"},
                                    {"QIM_CQL_KEYSPACE", "ks1"},
                                    {"QIM_CQL_RF", "3"},
                                    {"QIM_MAILBOX_REDIS_PREFIX", "p1:"}}))
               .value();
  EXPECT_EQ(c.history.backend, "embedded");
  EXPECT_EQ(c.history.dir, "/tmp/q/history");
  EXPECT_EQ(c.history.cql_keyspace, "ks1");
  EXPECT_EQ(c.history.cql_replication_factor, 3u);
  EXPECT_EQ(c.history.redis_key_prefix, "p1:");
  c = app_config_from_env(
          env({{"QIM_HISTORY_BACKEND", "redis"}, {"QIM_MAILBOX_REDIS", "10.0.0.1:7000,10.0.0.2:7000"}}))
          .value();
  EXPECT_EQ(c.store.backend, "embedded");
  EXPECT_EQ(c.history.backend, "redis");
  EXPECT_EQ(c.history.redis_endpoints, (std::vector<std::string>{"10.0.0.1:7000", "10.0.0.2:7000"}));
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

TEST(AppConfigTest, AdminAddressAndPortOfARole) {
  auto defaults = app_config_from_env(env({})).value();
  EXPECT_EQ(defaults.admin_address, "127.0.0.1");
  EXPECT_EQ(defaults.admin_port, 7401);
  auto c = app_config_from_env(env({{"QIM_ADMIN_LISTEN", "::1"}, {"QIM_ADMIN_PORT", "0"}})).value();
  EXPECT_EQ(c.admin_address, "::1");
  EXPECT_EQ(c.admin_port, 0);
  for (const auto& [var, value] : std::vector<std::pair<std::string, std::string>>{
           {"QIM_ADMIN_PORT", "65536"}, {"QIM_ADMIN_PORT", "x"}, {"QIM_ADMIN_LISTEN", ""}}) {
    auto r = app_config_from_env(env({{var, value}}));
    ASSERT_FALSE(r.ok()) << var << "=" << value;
    EXPECT_EQ(r.code(), Errc::kConfig);
    EXPECT_NE(r.error().message().find(var), std::string::npos) << r.error().message();
  }
}

// A role alone needs a log and a store other processes share; the refusal names the variable to change.

TEST(AppConfigTest, ARoleAloneRefusesWhatOnlyOneProcessCanUse) {
  const std::vector<std::string> roles = {"gateway", "fanout", "mailbox", "archiver"};
  for (const auto& role : roles) {
    auto embedded = app_config_from_env(env({})).value();
    Status s = check_role_config(role, embedded);
    ASSERT_FALSE(s.ok()) << role;
    EXPECT_EQ(s.code(), Errc::kConfig);
    EXPECT_NE(s.error().message().find("QIM_LOG_BACKEND='embedded'"), std::string::npos)
        << s.error().message();
    EXPECT_NE(s.error().message().find("`qim " + role + "`"), std::string::npos) << s.error().message();

    for (const char* store : {"embedded", "memory"}) {
      auto c = app_config_from_env(env({{"QIM_LOG_BACKEND", "kafka"}, {"QIM_MAILBOX_STORE_BACKEND", store}}))
                   .value();
      Status local = check_role_config(role, c);
      ASSERT_FALSE(local.ok()) << role << " " << store;
      EXPECT_EQ(local.code(), Errc::kConfig);
      EXPECT_NE(local.error().message().find(std::string("QIM_MAILBOX_STORE_BACKEND='") + store + "'"),
                std::string::npos)
          << local.error().message();
    }
    for (const char* store : {"redis", "scylla"}) {
      auto c = app_config_from_env(env({{"QIM_LOG_BACKEND", "kafka"}, {"QIM_MAILBOX_STORE_BACKEND", store}}))
                   .value();
      EXPECT_TRUE(check_role_config(role, c).ok()) << role << " " << store;
      EXPECT_EQ(c.history.backend, store) << "history follows the store";
      // History kept in one process's directory: the archiver's writes would not reach the gateways.
      auto local = app_config_from_env(env({{"QIM_LOG_BACKEND", "kafka"},
                                            {"QIM_MAILBOX_STORE_BACKEND", store},
                                            {"QIM_HISTORY_BACKEND", "embedded"}}))
                       .value();
      Status s = check_role_config(role, local);
      ASSERT_FALSE(s.ok()) << role << " " << store;
      EXPECT_NE(s.error().message().find("QIM_HISTORY_BACKEND='embedded'"), std::string::npos)
          << s.error().message();
    }
  }
}

}  // namespace
}  // namespace qim

namespace qim {
namespace {

// Decision 106: the Outbox's queue bound behind a slow disk.
TEST(AppConfigTest, LogMaxQueuedAppends) {
  EXPECT_EQ(app_config_from_env(env({})).value().log.max_queued_appends, 8192u);
  EXPECT_EQ(app_config_from_env(env({{"QIM_LOG_MAX_QUEUED_APPENDS", "0"}})).value().log.max_queued_appends,
            0u);
  EXPECT_EQ(app_config_from_env(env({{"QIM_LOG_MAX_QUEUED_APPENDS", "100"}})).value().log.max_queued_appends,
            100u);
  for (const std::string value : {"-1", "1000001", "many"}) {
    auto r = app_config_from_env(env({{"QIM_LOG_MAX_QUEUED_APPENDS", value}}));
    ASSERT_FALSE(r.ok()) << value;
    EXPECT_EQ(r.code(), Errc::kConfig);
    EXPECT_NE(r.error().message().find("QIM_LOG_MAX_QUEUED_APPENDS"), std::string::npos)
        << r.error().message();
  }
}

}  // namespace
}  // namespace qim
