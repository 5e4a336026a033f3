#pragma once
// Topics through the Admin API: finding a topic's partition count, creating a topic with QIM's settings,
// reading a topic's configuration back, deleting a topic. Each call takes any client handle and is bounded by
// `timeout`; safe from any thread (librdkafka's admin calls are).

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace qim::kafka {

struct TopicSpec {
  std::string name;
  uint32_t partitions = 1;
  int replication_factor = 1;
  std::map<std::string, std::string> configs;  // topic configs at creation, e.g. retention.ms
};

// The partition count of `topic`, nullopt if the cluster has no such topic. Transport (naming
// `brokers`) or Timeout if the cluster did not answer within `timeout`.
Result<std::optional<uint32_t>> topic_partitions(rd_kafka_t* rk, const std::vector<std::string>& brokers,
                                                 const std::string& topic, std::chrono::milliseconds timeout);

// Makes sure `spec.name` exists with `spec.partitions` partitions, creating it with `spec` if missing (an
// existing topic keeps its configs), and waits until every partition has a leader. Config naming both
// counts if the topic exists with another partition count, or if the broker refuses the spec; Transport
// or Timeout (naming `brokers`) if the cluster cannot be reached within `timeout`.
Status ensure_topic(rd_kafka_t* rk, const std::vector<std::string>& brokers, const TopicSpec& spec,
                    std::chrono::milliseconds timeout);

// Deletes `topic` and its records (tests, tools). NotFound if there is no such topic.
Status delete_topic(rd_kafka_t* rk, const std::string& topic, std::chrono::milliseconds timeout);

// Every config entry of `topic` as the broker reports it (DescribeConfigs). NotFound for a missing topic.
Result<std::map<std::string, std::string>> topic_configs(rd_kafka_t* rk, const std::string& topic,
                                                         std::chrono::milliseconds timeout);

}  // namespace qim::kafka
