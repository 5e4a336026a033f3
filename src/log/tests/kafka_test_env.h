#pragma once
// The Kafka cluster tests talk to: QIM_TEST_KAFKA_BROKERS (host:port[,host:port...]); tests skip,
// naming the variable, when it is unset. Every test log gets a topic of its own.

#include <atomic>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "log/kafka/kafka_log.h"

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

}  // namespace qim::testing
