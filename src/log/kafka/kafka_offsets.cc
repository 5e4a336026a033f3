#include "log/kafka/kafka_offsets.h"

#include <algorithm>
#include <thread>

#include "log/kafka/kafka_errors.h"

namespace qim::kafka {

namespace {

PartitionList one_partition(const std::string& topic, uint32_t partition) {
  PartitionList list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), static_cast<int32_t>(partition));
  return list;
}

}  // namespace

void GroupOffsets::serve_events() {
  std::lock_guard lock(mu_);
  for (auto& [group, rk] : groups_) rd_kafka_poll(rk.get(), 0);
}

uint64_t GroupOffsets::replacements() const {
  std::lock_guard lock(mu_);
  return replacements_;
}

void GroupOffsets::replace(const std::string& group, const Shared& stale, const std::string& why) {
  std::lock_guard lock(mu_);
  auto it = groups_.find(group);
  if (it == groups_.end() || it->second != stale) return;  // another call replaced it already
  groups_.erase(it);
  ++replacements_;
  options_.logger->warn("Kafka topic {}: {}; the next commit of group {} uses a new client", options_.topic,
                        why, group);
}

Result<GroupOffsets::Shared> GroupOffsets::group_handle(const std::string& group) {
  std::lock_guard lock(mu_);
  if (auto it = groups_.find(group); it != groups_.end()) return it->second;
  const std::map<std::string, std::string> settings = {
      {"group.id", group},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
  };
  QIM_ASSIGN_OR_RETURN(Handle rk,
                       new_handle(RD_KAFKA_CONSUMER, options_.brokers, settings, options_.logger.get()));
  Shared shared(rk.release(), HandleDeleter{});
  groups_.emplace(group, shared);
  return shared;
}

Status GroupOffsets::commit(const std::string& group, uint32_t partition, uint64_t next) {
  QIM_ASSIGN_OR_RETURN(Shared handle, group_handle(group));  // before q: outlives it
  rd_kafka_t* rk = handle.get();
  const std::string what = "committing group " + group + " at offset " + std::to_string(next) +
                           " of Kafka topic " + options_.topic + " partition " + std::to_string(partition);
  PartitionList list = one_partition(options_.topic, partition);
  list->elems[0].offset = static_cast<int64_t>(next);
  // The asynchronous form with our own queue, so the wait is bounded (rd_kafka_commit would wait for
  // the coordinator as long as it takes).
  Queue q(rd_kafka_queue_new(rk));
  if (auto err = rd_kafka_commit_queue(rk, list.get(), q.get(), nullptr, nullptr);
      err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return error_of(err, what);
  }
  Event ev(rd_kafka_queue_poll(q.get(), static_cast<int>(options_.timeout.count())));
  if (!ev) {
    Error timeout(Errc::kTimeout, what + ": the group coordinator did not answer within " +
                                      std::to_string(options_.timeout.count()) + " ms");
    replace(group, handle, timeout.message());
    return timeout;
  }
  if (auto err = rd_kafka_event_error(ev.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return error_of(err, what);
  if (const auto* done = rd_kafka_event_topic_partition_list(ev.get()); done) {
    for (int i = 0; i < done->cnt; ++i) {
      if (done->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) return error_of(done->elems[i].err, what);
    }
  }
  return {};
}

Result<std::optional<uint64_t>> GroupOffsets::committed(const std::string& group, uint32_t partition) {
  QIM_ASSIGN_OR_RETURN(Shared handle, group_handle(group));
  const std::string what = "reading the position of group " + group + " in Kafka topic " + options_.topic +
                           " partition " + std::to_string(partition);
  // The coordinator may not be there yet (a new cluster creates its offsets topic on the first request,
  // a restarted broker loads it): asked again within the bound, since a role reads its positions at start
  // and cannot start without them.
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  PartitionList list;
  for (;;) {
    list = one_partition(options_.topic, partition);
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    rd_kafka_resp_err_t err =
        rd_kafka_committed(handle.get(), list.get(), static_cast<int>(std::max<int64_t>(left.count(), 1)));
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) err = list->elems[0].err;
    const bool coordinator_moving = err == RD_KAFKA_RESP_ERR_NOT_COORDINATOR ||
                                    err == RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE ||
                                    err == RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS;
    if (coordinator_moving && std::chrono::steady_clock::now() + std::chrono::milliseconds(100) < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
    Error e = error_of(err, what);
    if (e.code() == Errc::kTimeout) replace(group, handle, e.message());
    return e;
  }
  const auto& e = list->elems[0];
  if (e.offset < 0) return std::optional<uint64_t>();  // RD_KAFKA_OFFSET_INVALID: never committed
  return std::optional(static_cast<uint64_t>(e.offset));
}

}  // namespace qim::kafka
