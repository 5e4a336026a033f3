#include "log/kafka/kafka_topics.h"

#include <thread>

#include "log/kafka/kafka_errors.h"
#include "log/kafka/kafka_handle.h"

namespace qim::kafka {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* md) const { rd_kafka_metadata_destroy(md); }
};
struct AdminOptionsDeleter {
  void operator()(rd_kafka_AdminOptions_t* o) const { rd_kafka_AdminOptions_destroy(o); }
};
struct NewTopicDeleter {
  void operator()(rd_kafka_NewTopic_t* t) const { rd_kafka_NewTopic_destroy(t); }
};
struct ConfigResourceDeleter {
  void operator()(rd_kafka_ConfigResource_t* r) const { rd_kafka_ConfigResource_destroy(r); }
};

int ms_of(milliseconds d) {
  return static_cast<int>(std::max<int64_t>(1, d.count()));
}

struct TopicState {
  bool exists = false;
  uint32_t partitions = 0;
  bool all_led = false;  // every partition has a leader
};

Result<TopicState> describe(rd_kafka_t* rk, const std::vector<std::string>& brokers, const std::string& topic,
                            milliseconds timeout) {
  const rd_kafka_metadata_t* raw = nullptr;
  // All topics, not just ours: asking for one topic by name could make a broker auto-create it.
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, nullptr, &raw, ms_of(timeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return error_of(err, "Kafka brokers " + broker_list(brokers) + " did not answer within " +
                             std::to_string(timeout.count()) + " ms");
  }
  std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter> md(raw);
  TopicState s;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& t = md->topics[i];
    if (topic != t.topic) continue;
    if (t.err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) return s;
    s.exists = true;
    s.partitions = static_cast<uint32_t>(t.partition_cnt);
    s.all_led = t.err == RD_KAFKA_RESP_ERR_NO_ERROR && t.partition_cnt > 0;
    for (int p = 0; p < t.partition_cnt; ++p) s.all_led = s.all_led && t.partitions[p].leader >= 0;
  }
  return s;
}

Status create(rd_kafka_t* rk, const TopicSpec& spec, milliseconds timeout) {
  char err[512];
  std::unique_ptr<rd_kafka_NewTopic_t, NewTopicDeleter> nt(rd_kafka_NewTopic_new(
      spec.name.c_str(), static_cast<int>(spec.partitions), spec.replication_factor, err, sizeof err));
  if (!nt) return Error(Errc::kConfig, "Kafka topic " + spec.name + ": " + err);
  for (const auto& [k, v] : spec.configs) {
    if (auto e = rd_kafka_NewTopic_set_config(nt.get(), k.c_str(), v.c_str());
        e != RD_KAFKA_RESP_ERR_NO_ERROR)
      return error_of(e, "Kafka topic " + spec.name + " config " + k + "=" + v);
  }
  std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter> opts(
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS));
  rd_kafka_AdminOptions_set_request_timeout(opts.get(), ms_of(timeout), err, sizeof err);
  rd_kafka_AdminOptions_set_operation_timeout(opts.get(), ms_of(timeout), err, sizeof err);
  Queue q(rd_kafka_queue_new(rk));
  rd_kafka_NewTopic_t* topics[] = {nt.get()};
  rd_kafka_CreateTopics(rk, topics, 1, opts.get(), q.get());
  // The admin request times out by itself; the margin only covers its delivery to this queue.
  Event ev(rd_kafka_queue_poll(q.get(), ms_of(timeout + milliseconds(2000))));
  if (!ev) return Error(Errc::kTimeout, "creating Kafka topic " + spec.name + ": no answer");
  if (auto e = rd_kafka_event_error(ev.get()); e != RD_KAFKA_RESP_ERR_NO_ERROR)
    return error_of(e, "creating Kafka topic " + spec.name);
  const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev.get());
  size_t n = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(res, &n);
  for (size_t i = 0; i < n; ++i) {
    const auto e = rd_kafka_topic_result_error(results[i]);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR || e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) continue;
    const char* why = rd_kafka_topic_result_error_string(results[i]);
    return error_of(e, "creating Kafka topic " + spec.name + (why ? std::string(" (") + why + ")" : ""));
  }
  return {};
}

}  // namespace

Result<std::optional<uint32_t>> topic_partitions(rd_kafka_t* rk, const std::vector<std::string>& brokers,
                                                 const std::string& topic, milliseconds timeout) {
  QIM_ASSIGN_OR_RETURN(TopicState s, describe(rk, brokers, topic, timeout));
  if (!s.exists) return std::optional<uint32_t>();
  return std::optional(s.partitions);
}

Status ensure_topic(rd_kafka_t* rk, const std::vector<std::string>& brokers, const TopicSpec& spec,
                    milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  auto left = [&] {
    return std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now()));
  };
  QIM_ASSIGN_OR_RETURN(TopicState s, describe(rk, brokers, spec.name, left()));
  bool created = false;
  while (true) {
    if (s.exists && s.partitions != spec.partitions) {
      return Error(Errc::kConfig, "Kafka topic " + spec.name + " has " + std::to_string(s.partitions) +
                                      " partitions, QIM is configured for " +
                                      std::to_string(spec.partitions) +
                                      " (a topic's partition count never changes under QIM: records are "
                                      "placed by it; use a new topic prefix or the old count)");
    }
    if (s.exists && s.all_led) return {};
    if (!s.exists && !created) {
      QIM_RETURN_IF_ERROR(create(rk, spec, left()));  // another process may create it meanwhile: fine
      created = true;
    } else if (SteadyClock::now() >= deadline) {
      return Error(Errc::kTimeout, "Kafka topic " + spec.name + " on " + broker_list(brokers) +
                                       " has no leader for every partition after " +
                                       std::to_string(timeout.count()) + " ms");
    } else {
      std::this_thread::sleep_for(milliseconds(50));  // metadata of a new topic spreads asynchronously
    }
    QIM_ASSIGN_OR_RETURN(s, describe(rk, brokers, spec.name, left()));
  }
}

Status delete_topic(rd_kafka_t* rk, const std::string& topic, milliseconds timeout) {
  char err[512];
  struct DeleteTopicDeleter {
    void operator()(rd_kafka_DeleteTopic_t* t) const { rd_kafka_DeleteTopic_destroy(t); }
  };
  std::unique_ptr<rd_kafka_DeleteTopic_t, DeleteTopicDeleter> dt(rd_kafka_DeleteTopic_new(topic.c_str()));
  std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter> opts(
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DELETETOPICS));
  rd_kafka_AdminOptions_set_request_timeout(opts.get(), ms_of(timeout), err, sizeof err);
  rd_kafka_AdminOptions_set_operation_timeout(opts.get(), ms_of(timeout), err, sizeof err);
  Queue q(rd_kafka_queue_new(rk));
  rd_kafka_DeleteTopic_t* topics[] = {dt.get()};
  rd_kafka_DeleteTopics(rk, topics, 1, opts.get(), q.get());
  Event ev(rd_kafka_queue_poll(q.get(), ms_of(timeout + milliseconds(2000))));
  if (!ev) return Error(Errc::kTimeout, "deleting Kafka topic " + topic + ": no answer");
  if (auto e = rd_kafka_event_error(ev.get()); e != RD_KAFKA_RESP_ERR_NO_ERROR)
    return error_of(e, "deleting Kafka topic " + topic);
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev.get()), &n);
  for (size_t i = 0; i < n; ++i) {
    const auto e = rd_kafka_topic_result_error(results[i]);
    if (e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
      return Error(Errc::kNotFound, "Kafka topic " + topic + " does not exist");
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return error_of(e, "deleting Kafka topic " + topic);
  }
  return {};
}

Result<std::map<std::string, std::string>> topic_configs(rd_kafka_t* rk, const std::string& topic,
                                                         milliseconds timeout) {
  char err[512];
  std::unique_ptr<rd_kafka_ConfigResource_t, ConfigResourceDeleter> res(
      rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str()));
  std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter> opts(
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS));
  rd_kafka_AdminOptions_set_request_timeout(opts.get(), ms_of(timeout), err, sizeof err);
  Queue q(rd_kafka_queue_new(rk));
  rd_kafka_ConfigResource_t* resources[] = {res.get()};
  rd_kafka_DescribeConfigs(rk, resources, 1, opts.get(), q.get());
  Event ev(rd_kafka_queue_poll(q.get(), ms_of(timeout + milliseconds(2000))));
  if (!ev) return Error(Errc::kTimeout, "describing Kafka topic " + topic + ": no answer");
  if (auto e = rd_kafka_event_error(ev.get()); e != RD_KAFKA_RESP_ERR_NO_ERROR)
    return error_of(e, "describing Kafka topic " + topic);
  size_t n = 0;
  const rd_kafka_ConfigResource_t** out =
      rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(ev.get()), &n);
  std::map<std::string, std::string> configs;
  for (size_t i = 0; i < n; ++i) {
    if (auto e = rd_kafka_ConfigResource_error(out[i]); e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
        return Error(Errc::kNotFound, "Kafka topic " + topic + " does not exist");
      return error_of(e, "describing Kafka topic " + topic);
    }
    size_t m = 0;
    const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(out[i], &m);
    for (size_t j = 0; j < m; ++j) {
      const char* v = rd_kafka_ConfigEntry_value(entries[j]);
      configs[rd_kafka_ConfigEntry_name(entries[j])] = v ? v : "";
    }
  }
  return configs;
}

}  // namespace qim::kafka
