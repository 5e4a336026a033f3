#include "log/kafka/kafka_producer.h"

#include <utility>

#include "core/mailbox_seq.h"
#include "core/thread_name.h"
#include "log/kafka/kafka_errors.h"

namespace qim::kafka {

namespace {

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  std::unique_ptr<AppendCallback> done(static_cast<AppendCallback*>(m->_private));
  if (!done) return;
  const std::string where = std::string("Kafka topic ") + rd_kafka_topic_name(m->rkt) + " partition " +
                            std::to_string(m->partition);
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // A record whose request reached the broker but got no answer (a timeout, a broker gone mid-request)
    // may have been stored: the caller's error says so, since a retry may then store it twice.
    const bool maybe_stored = rd_kafka_message_status(m) == RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED;
    (*done)(error_of(
        m->err, "append to " + where + " failed" + (maybe_stored ? " (the broker may have stored it)" : "")));
  } else if (m->offset < 0 || static_cast<uint64_t>(m->offset) > kMaxOffset) {
    (*done)(Error(Errc::kResourceExhausted,
                  where + ": offset " + std::to_string(m->offset) + " is outside QIM's 48-bit offsets"));
  } else {
    (*done)(Offset{static_cast<uint64_t>(m->offset)});
  }
}

void set_delivery_callback(rd_kafka_conf_t* conf) {
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
}

}  // namespace

Result<Handle> Producer::new_producer_handle(const ProducerOptions& options) {
  const std::map<std::string, std::string> settings = {
      {"enable.idempotence", "true"},  // implies acks=all and ordered, de-duplicated retries
      // A failed batch never leaves a gap that later records of its partition fill (it would reorder a
      // retried fanout batch): such an error becomes fatal and the producer is replaced (docs/adr/0056).
      {"enable.gapless.guarantee", "true"},
      {"acks", "all"},
      {"message.timeout.ms", std::to_string(options.message_timeout.count())},
      {"request.timeout.ms", std::to_string(std::min<int64_t>(options.message_timeout.count(), 30000))},
      {"message.max.bytes", std::to_string(options.max_message_bytes)},
      {"linger.ms", std::to_string(options.linger.count())},
  };
  return new_handle(RD_KAFKA_PRODUCER, options.brokers, settings, options.logger.get(),
                    set_delivery_callback);
}

Result<std::unique_ptr<Producer>> Producer::open(ProducerOptions options) {
  QIM_ASSIGN_OR_RETURN(Handle rk, new_producer_handle(options));
  std::unique_ptr<Producer> p(new Producer(std::move(options), std::move(rk)));
  p->poller_ = std::thread([raw = p.get()] {
    set_thread_name("kafka-poll");
    raw->poll_loop();
  });
  return p;
}

Producer::Producer(ProducerOptions options, Handle rk) : options_(std::move(options)), rk_(std::move(rk)) {}

Producer::~Producer() {
  close();
}

void Producer::produce(uint32_t partition, std::string key, std::string value, int64_t timestamp_ms,
                       AppendCallback done) {
  std::shared_lock gate(gate_);
  if (closing_) {
    gate.unlock();
    done(Error(Errc::kTransport, "Kafka topic " + options_.topic + ": the log is closed"));
    return;
  }
  auto owned = std::make_unique<AppendCallback>(std::move(done));
  rd_kafka_resp_err_t err = rd_kafka_producev(
      rk_.get(), RD_KAFKA_V_TOPIC(options_.topic.c_str()),
      RD_KAFKA_V_PARTITION(static_cast<int32_t>(partition)), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
      RD_KAFKA_V_KEY(key.data(), key.size()), RD_KAFKA_V_VALUE(value.data(), value.size()),
      RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_OPAQUE(owned.get()), RD_KAFKA_V_END);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    (void)owned.release();  // on_delivery owns it now
    return;
  }
  refuse(std::move(*owned), error_of(err, "append to Kafka topic " + options_.topic + " partition " +
                                              std::to_string(partition) + " refused"));
}

void Producer::fail(AppendCallback done, Error error) {
  std::shared_lock gate(gate_);
  if (closing_) {
    gate.unlock();
    done(std::move(error));
    return;
  }
  refuse(std::move(done), std::move(error));
}

void Producer::refuse(AppendCallback done, Error error) {
  std::lock_guard lock(refused_mu_);
  refused_.emplace_back(std::move(done), std::move(error));
}

void Producer::run_refusals() {
  std::vector<std::pair<AppendCallback, Error>> refused;
  {
    std::lock_guard lock(refused_mu_);
    refused.swap(refused_);
  }
  for (auto& [done, error] : refused) done(std::move(error));
}

void Producer::poll_loop() {
  while (!stop_poll_) {
    rd_kafka_poll(rk_.get(), 20);  // serves delivery reports
    run_refusals();
    char reason[512];
    if (rd_kafka_fatal_error(rk_.get(), reason, sizeof reason) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      replace_after_fatal(reason);
    }
  }
}

void Producer::replace_after_fatal(const std::string& reason) {
  // An idempotent producer that hit a fatal error (e.g. an unrecoverable sequence gap) refuses every
  // later record; a new one starts a new producer id. Records still in the old one fail (Transport), so
  // none is acknowledged twice or out of order.
  options_.logger->error("Kafka topic {}: the producer hit a fatal error, replacing it: {}", options_.topic,
                         reason);
  auto fresh = new_producer_handle(options_);
  if (!fresh.ok()) {
    options_.logger->error("Kafka topic {}: cannot create a new producer: {}", options_.topic,
                           fresh.error().to_string());
    return;  // tried again on the next round
  }
  Handle old;
  {
    std::unique_lock gate(gate_);
    old = std::exchange(rk_, std::move(fresh).value());
  }
  rd_kafka_purge(old.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  for (int i = 0; i < 50 && rd_kafka_outq_len(old.get()) > 0; ++i) rd_kafka_poll(old.get(), 100);
  replacements_++;
}

void Producer::close() {
  {
    std::unique_lock gate(gate_);
    if (closing_) return;
    closing_ = true;
  }
  stop_poll_ = true;
  if (poller_.joinable()) poller_.join();
  // From here on this thread serves the delivery reports.
  if (rd_kafka_flush(rk_.get(), static_cast<int>(options_.message_timeout.count())) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    options_.logger->warn("Kafka topic {}: {} records not acknowledged at close; they fail", options_.topic,
                          rd_kafka_outq_len(rk_.get()));
  }
  rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  for (int i = 0; i < 50 && rd_kafka_outq_len(rk_.get()) > 0; ++i) rd_kafka_poll(rk_.get(), 100);
  run_refusals();
}

void Producer::simulate_fatal_error(const std::string& reason) {
  std::shared_lock gate(gate_);
  rd_kafka_test_fatal_error(rk_.get(), RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, reason.c_str());
}

}  // namespace qim::kafka
