#include "delivery/signal_queue.h"

#include "core/thread_name.h"

namespace qim {

SignalQueue::SignalQueue(std::string thread_name, Dispatch dispatch, size_t max_queued)
    : dispatch_(std::move(dispatch)), max_queued_(max_queued == 0 ? 1 : max_queued) {
  thread_ = std::thread([this, name = std::move(thread_name)] {
    set_thread_name(name);
    run();
  });
}

SignalQueue::~SignalQueue() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool SignalQueue::push(Signal signal) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || pending_.size() >= max_queued_) {
      dropped_++;
      return false;
    }
    pending_.push_back(std::move(signal));
    pushed_++;
  }
  queued_++;
  cv_.notify_all();
  return true;
}

void SignalQueue::flush() {
  std::unique_lock lock(mu_);
  const uint64_t target = pushed_;
  cv_.wait(lock, [&] { return handed_ >= target || (stopping_ && pending_.empty() && handed_ == taken_); });
}

void SignalQueue::run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
    if (pending_.empty()) break;  // stopping, nothing left
    std::vector<Signal> batch;
    batch.swap(pending_);
    taken_ += batch.size();
    lock.unlock();
    dispatch_(batch);
    lock.lock();
    handed_ += batch.size();
    cv_.notify_all();
  }
  cv_.notify_all();
}

std::string SignalQueue::metrics_text(std::string_view labels) const {
  const std::string l = labels.empty() ? std::string() : "{" + std::string(labels) + "}";
  std::string out;
  out +=
      "# HELP qim_signals_queued_total Ephemeral signals (typing, presence, read state) queued for "
      "delivery.\n# TYPE qim_signals_queued_total counter\nqim_signals_queued_total" +
      l + " " + std::to_string(queued_total()) + "\n";
  out +=
      "# HELP qim_signals_dropped_total Ephemeral signals dropped: the signal queue was full.\n"
      "# TYPE qim_signals_dropped_total counter\nqim_signals_dropped_total" +
      l + " " + std::to_string(dropped_total()) + "\n";
  return out;
}

}  // namespace qim
