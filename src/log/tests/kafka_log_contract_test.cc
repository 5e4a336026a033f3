// The Log contract on Kafka (label kafka, QIM_TEST_KAFKA_BROKERS): each test on a topic of its own.
#include "log/tests/kafka_test_env.h"
#include "log/tests/log_contract.h"

namespace qim::testing {
namespace {

class KafkaLogUnderTest final : public LogUnderTest {
 public:
  Result<std::unique_ptr<Log>> open(uint32_t partitions, size_t max_record_bytes,
                                    std::shared_ptr<const Clock> clock) override {
    KafkaLogOptions o = test_kafka_options(prefix_, "contract", partitions);
    o.max_record_bytes = max_record_bytes;
    o.clock = std::move(clock);
    QIM_ASSIGN_OR_RETURN(auto log, KafkaLog::open(std::move(o)));
    if (!cleaner_added_) cleaner_.add(log->topic());
    cleaner_added_ = true;
    return std::unique_ptr<Log>(std::move(log));
  }
  bool multi_instance() const override { return true; }

 private:
  std::string prefix_ = fresh_topic_prefix();
  TopicCleaner cleaner_;
  bool cleaner_added_ = false;
};

INSTANTIATE_TEST_SUITE_P(Kafka, LogContractTest,
                         ::testing::Values(LogBackend{"kafka", kafka_unavailable,
                                                      [] { return std::make_unique<KafkaLogUnderTest>(); }}),
                         backend_name);

}  // namespace
}  // namespace qim::testing
