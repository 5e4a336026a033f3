#pragma once
// The Kafka cluster tests talk to: QIM_TEST_KAFKA_BROKERS (host:port[,host:port...]); tests skip,
// naming the variable, when it is unset. Every test log gets a topic of its own.

#include <atomic>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "log/kafka/kafka_handle.h"
#include "log/kafka/kafka_log.h"
#include "log/kafka/kafka_topics.h"

namespace qim::testing {

inline std::vector<std::string> test_kafka_brokers() {
  std::vector<std::string> out;
  const char* v = std::getenv("QIM_TEST_KAFKA_BROKERS");
  if (!v) return out;
  std::string s(v);
  for (size_t start = 0; start <= s.size();) {
    const size_t comma = std::min(s.find(',', start), s.size());
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

inline std::string kafka_unavailable() {
  return test_kafka_brokers().empty() ? "set QIM_TEST_KAFKA_BROKERS=host:port to run the Kafka log tests"
                                      : std::string();
}

// A prefix no earlier run used: "qim-test.<random>.<n>.".
inline std::string fresh_topic_prefix() {
  static std::atomic<int> n{0};
  static const uint64_t run = std::random_device{}() * uint64_t{2654435761u} ^ std::random_device{}();
  return "qim-test." + std::to_string(run % 100'000'000) + "." + std::to_string(n++) + ".";
}

// Options for a test log on the test cluster with short bounds.
inline KafkaLogOptions test_kafka_options(const std::string& prefix, const std::string& name,
                                          uint32_t partitions) {
  KafkaLogOptions o;
  o.brokers = test_kafka_brokers();
  o.topic_prefix = prefix;
  o.name = name;
  o.partitions = partitions;
  o.connect_timeout = std::chrono::milliseconds(20'000);
  return o;
}

// Deletes the test's topics when the test ends, so repeated runs do not pile them up on the broker.
class TopicCleaner {
 public:
  ~TopicCleaner() {
    if (topics_.empty()) return;
    auto rk = kafka::new_handle(RD_KAFKA_PRODUCER, test_kafka_brokers(), {}, nullptr);
    if (!rk.ok()) return;
    for (const auto& t : topics_) (void)kafka::delete_topic(rk->get(), t, std::chrono::milliseconds(10'000));
  }
  void add(const std::string& topic) { topics_.push_back(topic); }

 private:
  std::vector<std::string> topics_;
};

}  // namespace qim::testing
