#pragma once
// Owning wrappers of librdkafka objects and the one function that creates a client handle with the
// settings every QIM handle shares (brokers, logging into spdlog, bounded connection retries).
// A handle is thread-safe as librdkafka documents it; these wrappers add no state.

#include <librdkafka/rdkafka.h>
#include <spdlog/logger.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace qim::kafka {

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const;
};
struct TopicDeleter {
  void operator()(rd_kafka_topic_t* rkt) const { rd_kafka_topic_destroy(rkt); }
};
struct QueueDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* ev) const { rd_kafka_event_destroy(ev); }
};
struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const { rd_kafka_topic_partition_list_destroy(l); }
};
struct MessageDeleter {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};

using Handle = std::unique_ptr<rd_kafka_t, HandleDeleter>;
using Topic = std::unique_ptr<rd_kafka_topic_t, TopicDeleter>;
using Queue = std::unique_ptr<rd_kafka_queue_t, QueueDeleter>;
using Event = std::unique_ptr<rd_kafka_event_t, EventDeleter>;
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;
using Message = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;

// "host:port,host:port" as librdkafka's bootstrap.servers takes it.
std::string broker_list(const std::vector<std::string>& brokers);

// A new producer or consumer handle on `brokers` with `settings` on top of the shared ones. `logger`
// receives librdkafka's log lines and errors and must outlive the handle. `conf_hook`, if given, may set
// callbacks on the configuration before the handle is created. Errors reach the logger from
// rd_kafka_poll(): every handle must be polled (they queue up otherwise). Config naming the setting if
// librdkafka refuses one.
Result<Handle> new_handle(rd_kafka_type_t type, const std::vector<std::string>& brokers,
                          const std::map<std::string, std::string>& settings, spdlog::logger* logger,
                          void (*conf_hook)(rd_kafka_conf_t*) = nullptr);

}  // namespace qim::kafka
