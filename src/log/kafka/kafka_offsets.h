#pragma once
// Consumer positions of a topic in Kafka's group offsets (__consumer_offsets). Each group gets a client
// handle with its group.id that never subscribes: commits are standalone (no membership, no rebalance),
// with the explicit partition and offset, so several processes may commit to one group for different
// partitions (each MailboxNode its own shards) and a commit is never refused for being "not assigned".
//
// Thread safety: every method may be called concurrently from any thread.

#include <librdkafka/rdkafka.h>
#include <spdlog/logger.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "log/kafka/kafka_handle.h"

namespace qim::kafka {

struct GroupOffsetsOptions {
  std::vector<std::string> brokers;
  std::string topic;
  std::chrono::milliseconds timeout{5000};  // bound of one commit or fetch, coordinator lookup included
  std::shared_ptr<spdlog::logger> logger;   // must not be null
};

class GroupOffsets {
 public:
  explicit GroupOffsets(GroupOffsetsOptions options) : options_(std::move(options)) {}

  // Stores `next` (the first offset not finished) for the group and partition once the group coordinator
  // acknowledged it. Transport or Timeout (within `timeout`) if it could not.
  Status commit(const std::string& group, uint32_t partition, uint64_t next);
  // The last committed position, nullopt if the group never committed this partition.
  Result<std::optional<uint64_t>> committed(const std::string& group, uint32_t partition);
  // Serves the group handles' queued events (errors to the logger); call it regularly.
  void serve_events();

 private:
  Result<rd_kafka_t*> group_handle(const std::string& group);

  GroupOffsetsOptions options_;
  std::mutex mu_;
  std::map<std::string, Handle> groups_;  // guarded by mu_; a handle lives as long as this object
};

}  // namespace qim::kafka
