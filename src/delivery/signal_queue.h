#pragma once
// The bounded queue in front of a SignalBus: send() never waits for the bus's downstream (a gateway's
// connections, the routing Redis); one thread takes everything queued at once and hands it on as one
// batch, so a slow downstream serves many signals per call. Past `max_queued` signals a new one is
// dropped and counted (qim_signals_dropped_total): signals are ephemeral (docs/adr/0080), a dropped one
// costs a typing indicator or a presence dot until the next, never a message.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/name.h"

namespace qim {

struct Signal {
  std::vector<UserId> users;
  std::string frame;
  uint64_t except_connection = 0;
};

class SignalQueue {
 public:
  using Dispatch = std::function<void(std::vector<Signal>& batch)>;
  // Starts the thread that calls `dispatch` with each batch (in the order the signals were queued).
  SignalQueue(std::string thread_name, Dispatch dispatch, size_t max_queued = 10'000);
  // Hands on what is queued, then stops.
  ~SignalQueue();
  SignalQueue(const SignalQueue&) = delete;
  SignalQueue& operator=(const SignalQueue&) = delete;

  // False (and counted as dropped) when the queue is full. Thread-safe, never blocks for long.
  bool push(Signal signal);
  // Returns once everything queued before the call was handed to dispatch.
  void flush();

  uint64_t queued_total() const { return queued_.load(); }
  uint64_t dropped_total() const { return dropped_.load(); }
  // Prometheus text: qim_signals_queued_total, qim_signals_dropped_total, with `labels` (e.g.
  // `bus="local"`) when not empty.
  std::string metrics_text(std::string_view labels = {}) const;

 private:
  void run();

  const Dispatch dispatch_;
  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Signal> pending_;
  uint64_t taken_ = 0;   // signals taken by the thread (under mu_)
  uint64_t handed_ = 0;  // signals handed to dispatch (under mu_)
  uint64_t pushed_ = 0;  // signals accepted (under mu_)
  bool stopping_ = false;
  std::atomic<uint64_t> queued_{0}, dropped_{0};
  std::thread thread_;
};

}  // namespace qim
