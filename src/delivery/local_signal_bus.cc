#include "delivery/local_signal_bus.h"

namespace qim {

LocalSignalBus::LocalSignalBus(size_t max_queued)
    : queue_(
          "signals",
          [this](std::vector<Signal>& batch) {
            SignalSink* sink = sink_.load();
            if (sink == nullptr) return;
            for (Signal& s : batch)
              sink->deliver_signal(s.users, std::make_shared<const std::string>(std::move(s.frame)),
                                   s.except_connection);
          },
          max_queued) {}

LocalSignalBus::~LocalSignalBus() = default;

void LocalSignalBus::send(std::span<const UserId> users, std::string frame, uint64_t except_connection) {
  if (users.empty()) return;
  queue_.push(Signal{std::vector<UserId>(users.begin(), users.end()), std::move(frame), except_connection});
}

}  // namespace qim
