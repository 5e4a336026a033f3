#pragma once
// The gateway's Prometheus metrics, and their text exposition for the admin server's /metrics.

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <memory>
#include <string>

#include "gateway/protocol/wire_code.h"

namespace qim {

class GatewayMetrics {
  // Declared first: the references below are bound to families registered in it.
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();

 public:
  GatewayMetrics();

  prometheus::Gauge& connections;                // open WebSocket connections
  prometheus::Counter& connections_total;        // accepted WebSocket connections
  prometheus::Counter& connections_refused;      // refused at the connection bound
  prometheus::Counter& unauthenticated_refused;  // closed at accept: the unauthenticated bound (per peer too)
  prometheus::Counter& token_expiry_closes;      // closed at the token's expiry
  prometheus::Counter& slow_consumer_closes;     // closed for an outbound queue over its bound
  prometheus::Counter& frames_in;
  prometheus::Counter& sends_acked;
  prometheus::Counter& sends_duplicate;  // answered from the idempotency table
  prometheus::Counter& sends_failed;
  prometheus::Counter& entries_pushed;  // DELIVER entries queued to connections
  prometheus::Counter& sync_needed;     // SYNC_NEEDED frames queued (a break in a shard's delivery chain)
  prometheus::Histogram& send_ack_seconds;

  prometheus::Counter& errors(WireCode code) { return *errors_[static_cast<size_t>(code)]; }

  // The text exposition format of every metric.
  std::string serialize() const;

 private:
  std::array<prometheus::Counter*, static_cast<size_t>(WireCode::kMessageRecalled) + 1>
      errors_{};  // the last code
};

}  // namespace qim
