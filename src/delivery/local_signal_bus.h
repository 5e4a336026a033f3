#pragma once
// The SignalBus of one process (`qim up`): signals go to the gateway's own live connections, through the
// bounded queue (signal_queue.h). The sink (the gateway's ConnectionRegistry) is attached once the gateway
// exists, so the bus can be made first and handed to the gateway and the MailboxNode alike:
//
//   LocalSignalBus bus;
//   deps.signals = &bus;
//   auto gateway = make_gateway(options, deps);
//   bus.attach(&gateway->signal_sink());

#include <atomic>
#include <memory>

#include "delivery/signal_bus.h"
#include "delivery/signal_queue.h"

namespace qim {

class LocalSignalBus final : public SignalBus {
 public:
  explicit LocalSignalBus(size_t max_queued = 10'000);
  ~LocalSignalBus() override;

  // Where signals go from now on (null: nowhere, they are dropped as finding no connection). The sink
  // must outlive the bus or be detached (attach(nullptr)) first.
  void attach(SignalSink* sink) { sink_.store(sink); }

  void send(std::span<const UserId> users, std::string frame, uint64_t except_connection = 0) override;
  // Returns once every signal sent before the call reached the sink (tests).
  void flush() { queue_.flush(); }
  std::string metrics_text() const { return queue_.metrics_text("bus=\"local\""); }
  uint64_t dropped() const { return queue_.dropped_total(); }

 private:
  std::atomic<SignalSink*> sink_{nullptr};
  SignalQueue queue_;  // last: its thread stops before sink_ goes
};

}  // namespace qim
