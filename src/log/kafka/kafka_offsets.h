#pragma once
// Consumer positions of a topic in Kafka's group offsets (__consumer_offsets). Each group gets a client
// handle with its group.id that never subscribes: commits are standalone (no membership, no rebalance),
// with the explicit partition and offset, so several processes may commit to one group for different
// partitions (each MailboxNode its own shards) and a commit is never refused for being "not assigned".
//
// A commit or position read that gets no answer within `timeout` replaces the group's handle: after a
// broker restart a handle's coordinator requests were seen to stay unanswered for good (every later
// commit timed out too) while a new handle finds the coordinator at once. Calls in flight on the old
// handle finish on it.
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
  // acknowledged it. Transport or Timeout (within `timeout`; the group's handle is then replaced) if it
  // could not.
  Status commit(const std::string& group, uint32_t partition, uint64_t next);
  // The last committed position, nullopt if the group never committed this partition. Errors as commit().
  Result<std::optional<uint64_t>> committed(const std::string& group, uint32_t partition);
  // Serves the group handles' queued events (errors to the logger); call it regularly.
  void serve_events();
  // How many times a handle was replaced after a timeout.
  uint64_t replacements() const;

 private:
  using Shared = std::shared_ptr<rd_kafka_t>;
  Result<Shared> group_handle(const std::string& group);
  // Drops `stale` as the group's handle (if it still is): the next call creates a new one.
  void replace(const std::string& group, const Shared& stale, const std::string& why);

  GroupOffsetsOptions options_;
  mutable std::mutex mu_;
  // Guarded by mu_; a handle lives while it is here or a call uses it.
  std::map<std::string, Shared> groups_;
  uint64_t replacements_ = 0;  // guarded by mu_
};

}  // namespace qim::kafka
