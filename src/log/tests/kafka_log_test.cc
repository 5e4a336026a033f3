// What the Kafka log promises beyond the Log contract: topic settings, bounds when the cluster is away,
// retention's log start, the factory (label kafka; the cluster tests need QIM_TEST_KAFKA_BROKERS).
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <future>
#include <thread>

#include "gateway/protocol/wire_code.h"
#include "log/kafka/kafka_errors.h"
#include "log/kafka/kafka_handle.h"
#include "log/kafka/kafka_producer.h"
#include "log/open_log.h"
#include "log/tests/kafka_test_env.h"

namespace qim::testing {
namespace {

using namespace std::chrono_literals;

// Nothing listens on port 1 of the loopback address: connections are refused at once.
const std::vector<std::string> kUnreachable = {"127.0.0.1:1"};

std::shared_ptr<spdlog::logger> quiet() {
  return std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
}

class KafkaLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = kafka_unavailable(); !why.empty()) GTEST_SKIP() << why;
    for (const char* name : {"log", "keep", "outbox"}) cleaner_.add(prefix_ + name);
  }
  KafkaLogOptions options(uint32_t partitions) { return test_kafka_options(prefix_, "log", partitions); }

  // Deletes the records of `partition` below `before`, as retention does (DeleteRecords).
  void delete_records(const std::string& topic, uint32_t partition, uint64_t before) {
    auto rk = kafka::new_handle(RD_KAFKA_PRODUCER, test_kafka_brokers(), {}, nullptr).value();
    kafka::PartitionList list(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), static_cast<int32_t>(partition))->offset =
        static_cast<int64_t>(before);
    rd_kafka_DeleteRecords_t* del = rd_kafka_DeleteRecords_new(list.get());
    kafka::Queue q(rd_kafka_queue_new(rk.get()));
    rd_kafka_DeleteRecords(rk.get(), &del, 1, nullptr, q.get());
    rd_kafka_DeleteRecords_destroy(del);
    kafka::Event ev(rd_kafka_queue_poll(q.get(), 30'000));
    ASSERT_TRUE(ev);
    ASSERT_EQ(rd_kafka_event_error(ev.get()), RD_KAFKA_RESP_ERR_NO_ERROR)
        << rd_kafka_event_error_string(ev.get());
    const auto* res = rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(ev.get()));
    ASSERT_EQ(res->elems[0].err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(res->elems[0].err);
  }

  std::string prefix_ = fresh_topic_prefix();
  TopicCleaner cleaner_;
};

TEST_F(KafkaLogTest, TheCreatedTopicHasTheRetentionAndRecordLimit) {
  auto o = options(3);
  o.retention_ms = 123'456'789;
  auto log = KafkaLog::open(o).value();
  EXPECT_EQ(log->topic(), prefix_ + "log");
  auto configs = log->topic_configs();
  ASSERT_TRUE(configs.ok()) << configs.error().to_string();
  EXPECT_EQ((*configs)["retention.ms"], "123456789");
  EXPECT_EQ((*configs)["max.message.bytes"],
            std::to_string(o.max_record_bytes + KafkaLogOptions::kKeyAndFramingBytes));

  auto keep = options(1);
  keep.name = "keep";
  auto kept = KafkaLog::open(keep).value();
  EXPECT_EQ(kept->topic_configs()->at("retention.ms"), "-1")
      << "no retention: keep every record, as embedded";
}

TEST_F(KafkaLogTest, TheLargestRecordGoesThroughTheBroker) {
  auto o = options(1);  // the default max_record_bytes
  const std::string big(o.max_record_bytes, 'b');
  const std::string key(200, 'k');
  {
    auto log = KafkaLog::open(o).value();
    auto r = log->append_sync(0, key, big);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->value, 0u);
    EXPECT_EQ(log->append_sync(0, key, big + "b").code(), Errc::kInvalidArgument);
  }
  auto fresh = KafkaLog::open(o).value();
  auto records = fresh->read(0, Offset{0}, 10, 10s);
  ASSERT_TRUE(records.ok()) << records.error().to_string();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].value, big);
  EXPECT_EQ((*records)[0].key, key);
}

TEST_F(KafkaLogTest, ReadsBelowTheLogStartAreExpiredCursor) {
  auto log = KafkaLog::open(options(1)).value();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(log->append_sync(0, "", std::to_string(i)).ok());
  ASSERT_EQ(log->read(0, Offset{0}, 2, 5s)->size(), 2u);
  delete_records(log->topic(), 0, 6);
  EXPECT_EQ(log->start_offset(0)->value, 6u);
  EXPECT_EQ(log->end_offset(0)->value, 10u);
  // The reader that read 0..1 may still hand out what it prefetched, but only contiguously from 2.
  auto continued = log->read(0, Offset{2}, 10, 1s);
  if (continued.ok()) {
    ASSERT_FALSE(continued->empty());
    EXPECT_EQ((*continued)[0].offset.value, 2u) << "never a silent jump";
  } else {
    EXPECT_EQ(continued.code(), Errc::kExpiredCursor);
  }
  // Any read that has to fetch below the start says so.
  auto below = log->read(0, Offset{3}, 10, 1s);
  ASSERT_FALSE(below.ok());
  EXPECT_EQ(below.code(), Errc::kExpiredCursor);
  EXPECT_NE(below.error().message().find("below the log start 6"), std::string::npos)
      << below.error().message();
  EXPECT_EQ(log->read(0, Offset{0}, 10, 1s).code(), Errc::kExpiredCursor);
  auto from_start = log->read(0, Offset{6}, 10, 5s);
  ASSERT_TRUE(from_start.ok()) << from_start.error().to_string();
  ASSERT_FALSE(from_start->empty());
  EXPECT_EQ((*from_start)[0].value, "6");
}

TEST_F(KafkaLogTest, OpenLogOpensKafkaForSeparateProcesses) {
  LogOptions lo;
  lo.backend = "kafka";
  lo.kafka_brokers = test_kafka_brokers();
  lo.kafka_topic_prefix = prefix_;
  EXPECT_FALSE(log_is_single_process(lo));
  auto log = open_log(lo, "outbox", 4, quiet(), nullptr, 60'000);
  ASSERT_TRUE(log.ok()) << log.error().to_string();
  EXPECT_EQ((*log)->partition_count(), 4u);
  EXPECT_EQ((*log)->append_sync(3, "c", "v")->value, 0u);
  auto* kafka = dynamic_cast<KafkaLog*>(log->get());
  ASSERT_NE(kafka, nullptr);
  EXPECT_EQ(kafka->topic(), prefix_ + "outbox");
  EXPECT_EQ(kafka->topic_configs()->at("retention.ms"), "60000");
  EXPECT_EQ(open_log(lo, "outbox", 8, quiet()).code(), Errc::kConfig);
}

TEST_F(KafkaLogTest, AFatalProducerErrorIsFollowedByANewProducer) {
  auto log = KafkaLog::open(options(1)).value();
  ASSERT_EQ(log->append_sync(0, "", "before")->value, 0u);
  log->producer().simulate_fatal_error("test: unrecoverable sequence gap");
  // Appends right after the fatal error may fail (Transport: retry later); then a new producer takes them.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  Result<Offset> after = Error(Errc::kTransport, "not tried");
  while (!after.ok() && std::chrono::steady_clock::now() < deadline) {
    after = log->append_sync(0, "", "after");
    if (!after.ok()) {
      EXPECT_EQ(wire_code_of(after.code()), WireCode::kUnavailable) << after.error().to_string();
    }
  }
  ASSERT_TRUE(after.ok()) << after.error().to_string();
  EXPECT_GE(log->producer().replacements(), 1u);
  auto records = KafkaLog::open(options(1)).value()->read(0, Offset{0}, 10, 5s);
  ASSERT_TRUE(records.ok()) << records.error().to_string();
  ASSERT_FALSE(records->empty());
  EXPECT_EQ(records->front().value, "before");
  EXPECT_EQ(records->back().value, "after");
  EXPECT_EQ(records->back().offset, *after);
}

// A reader that paused longer than the idle stop (its partition stopped fetching, so idle lanes do not
// cost the broker) continues where it was: the next read repositions and nothing is skipped or repeated.
TEST_F(KafkaLogTest, AReaderIdleLongerThanTheIdleStopContinuesWhereItWas) {
  auto o = options(1);
  o.reader_idle_stop = 300ms;
  auto log = KafkaLog::open(o).value();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(log->append_sync(0, "", "r" + std::to_string(i)).ok());
  auto first = log->read(0, Offset{0}, 3, 5s);
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  ASSERT_EQ(first->size(), 3u);
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (log->readers().idle_stops() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  ASSERT_GE(log->readers().idle_stops(), 1u) << "the idle partition kept fetching";
  ASSERT_TRUE(log->append_sync(0, "", "r5").ok());
  std::vector<std::string> rest;
  for (uint64_t next = 3; rest.size() < 3 && std::chrono::steady_clock::now() < deadline;) {
    auto more = log->read(0, Offset{next}, 10, 1s);
    ASSERT_TRUE(more.ok()) << more.error().to_string();
    for (const auto& r : *more) {
      EXPECT_EQ(r.offset.value, next);
      rest.push_back(r.value);
      next = r.offset.value + 1;
    }
  }
  EXPECT_EQ(rest, (std::vector<std::string>{"r3", "r4", "r5"}));
}

TEST_F(KafkaLogTest, ACreateTimeFarAheadOfTheBrokerIsRefusedAsTheServersProblem) {
  auto o = options(1);
  auto clock = std::make_shared<ManualClock>(SystemClock().now_ms() + 2 * 86'400'000);  // two days ahead
  o.clock = clock;
  // The broker's default bound (one hour ahead), set on the topic: the test broker of scripts/test.sh
  // accepts any future time for scenario 13's clock, and a topic config overrides the broker's.
  o.topic_configs["message.timestamp.after.max.ms"] = "3600000";
  auto log = KafkaLog::open(o).value();
  auto r = log->append_sync(0, "", "from the future");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Errc::kConfig) << r.error().to_string();
  EXPECT_NE(r.error().message().find("INVALID_TIMESTAMP"), std::string::npos) << r.error().message();
  EXPECT_EQ(log->end_offset(0)->value, 0u);
}

// No cluster needed: these run everywhere.
TEST(KafkaLogBoundsTest, OpenFailsWithinTheBoundNamingTheBrokers) {
  KafkaLogOptions o;
  o.brokers = kUnreachable;
  o.connect_timeout = 1500ms;
  auto opened = std::async(std::launch::async, [&] { return KafkaLog::open(o); });
  ASSERT_EQ(opened.wait_for(60s), std::future_status::ready) << "open waited far beyond its bound";
  auto log = opened.get();
  ASSERT_FALSE(log.ok());
  EXPECT_TRUE(log.code() == Errc::kTransport || log.code() == Errc::kTimeout) << log.error().to_string();
  EXPECT_NE(log.error().message().find("127.0.0.1:1"), std::string::npos) << log.error().message();
  EXPECT_EQ(wire_code_of(log.code()), WireCode::kUnavailable);
}

TEST(KafkaLogBoundsTest, AnAppendThatIsNeverAcknowledgedFailsWithinTheBound) {
  auto producer =
      kafka::Producer::open({kUnreachable, "qim-test.unreachable", 1000ms, 1 << 20, quiet()}).value();
  std::promise<Result<Offset>> done;
  auto result = done.get_future();
  producer->produce(0, "k", "v", 0, [&](Result<Offset> r) { done.set_value(std::move(r)); });
  ASSERT_EQ(result.wait_for(60s), std::future_status::ready) << "the append waited far beyond its bound";
  auto r = result.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Errc::kTimeout) << r.error().to_string();
  EXPECT_EQ(wire_code_of(r.code()), WireCode::kUnavailable) << "the gateway answers UNAVAILABLE: retry later";
}

TEST(KafkaLogBoundsTest, BrokerErrorsMapToWhatTheGatewayCanAnswer) {
  EXPECT_EQ(wire_code_of(kafka::errc_of(RD_KAFKA_RESP_ERR__TRANSPORT)), WireCode::kUnavailable);
  EXPECT_EQ(wire_code_of(kafka::errc_of(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)), WireCode::kUnavailable);
  EXPECT_EQ(wire_code_of(kafka::errc_of(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS)), WireCode::kUnavailable);
  EXPECT_EQ(wire_code_of(kafka::errc_of(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION)), WireCode::kUnavailable);
  EXPECT_EQ(wire_code_of(kafka::errc_of(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)), WireCode::kUnavailable);
  EXPECT_EQ(wire_code_of(kafka::errc_of(RD_KAFKA_RESP_ERR__QUEUE_FULL)), WireCode::kUnavailable);
  EXPECT_EQ(wire_code_of(kafka::errc_of(RD_KAFKA_RESP_ERR__FATAL)), WireCode::kUnavailable);
  EXPECT_EQ(wire_code_of(kafka::errc_of(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)), WireCode::kInvalidArgument);
  EXPECT_EQ(wire_code_of(kafka::errc_of(RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP)), WireCode::kInternal);
}

}  // namespace
}  // namespace qim::testing
