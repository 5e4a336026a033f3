#pragma once
// The idempotent producer of one topic: enable.idempotence=true (acks=all, ordered retries without
// duplicates), so a record's offset is known only from its delivery report and every record of a
// partition lands in call order exactly once. A record that is not acknowledged within message_timeout
// fails (Timeout) instead of waiting for the broker forever; if its request had reached the broker, the
// error's message adds "(the broker may have stored it)": a retry may then store it twice.
//
// A fatal error of the idempotent producer (librdkafka then refuses every record) replaces the client
// handle; the records in the old one fail with Transport.
//
// Thread safety: produce() and close() may be called from any thread. Every `done` is called exactly
// once, from the producer's poll thread (also a refusal detected before sending); only after close() is a
// record refused on the caller's thread.

#include <librdkafka/rdkafka.h>
#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "log/kafka/kafka_defaults.h"
#include "log/kafka/kafka_handle.h"
#include "log/log.h"

namespace qim::kafka {

struct ProducerOptions {
  std::vector<std::string> brokers;
  std::string topic;
  // message.timeout.ms: the bound of one append.
  std::chrono::milliseconds message_timeout = kDefaultAppendTimeout;
  size_t max_message_bytes = 1 << 20;                 // message.max.bytes (= the topic's max.message.bytes)
  std::shared_ptr<spdlog::logger> logger;             // must not be null
  std::chrono::milliseconds linger = kDefaultLinger;  // linger.ms: SEND_ACK waits for the batch too
};

class Producer {
 public:
  // Creates the handle and starts the poll thread (no broker is contacted yet). Config if librdkafka
  // refuses a setting.
  static Result<std::unique_ptr<Producer>> open(ProducerOptions options);
  // close(), then destroys the handle.
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Sends one record to `partition` with `timestamp_ms` as its CreateTime. `done` gets the record's offset
  // once the broker acknowledged it from every in-sync replica, or the error.
  void produce(uint32_t partition, std::string key, std::string value, int64_t timestamp_ms,
               AppendCallback done);
  // Calls `done(error)` from the poll thread (a record refused before it reached the producer), or at once
  // on this thread after close().
  void fail(AppendCallback done, Error error);
  // Waits up to message_timeout for records in flight, fails the rest (Transport) and stops taking
  // records (later ones fail with Transport). Idempotent.
  void close();
  // How many times a fatal error made the producer replace its client handle.
  uint64_t replacements() const { return replacements_.load(); }
  // Tests: raises a fatal error in the client as the broker's answers could.
  void simulate_fatal_error(const std::string& reason);

 private:
  Producer(ProducerOptions options, Handle rk);
  static Result<Handle> new_producer_handle(const ProducerOptions& options);
  void poll_loop();
  // After a fatal error: a new handle takes the records from now on, the old one's fail.
  void replace_after_fatal(const std::string& reason);
  // Queues `done(error)` for the poll thread; the caller holds gate_ shared and saw closing_ false.
  void refuse(AppendCallback done, Error error);
  void run_refusals();

  ProducerOptions options_;
  std::shared_mutex gate_;  // produce() holds it shared; close() and a replacement exclusively
  Handle rk_;               // guarded by gate_ (replaced only by the poll thread, which reads it freely)
  bool closing_ = false;    // guarded by gate_
  std::atomic<uint64_t> replacements_{0};
  std::mutex refused_mu_;
  std::vector<std::pair<AppendCallback, Error>> refused_;  // guarded by refused_mu_
  std::atomic<bool> stop_poll_{false};
  std::thread poller_;
};

}  // namespace qim::kafka
