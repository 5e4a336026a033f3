#include "gateway/gateway_metrics.h"

#include <prometheus/text_serializer.h>

namespace qim {

namespace {

prometheus::Counter& counter(prometheus::Registry& r, const std::string& name, const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r).Add({});
}

}  // namespace

GatewayMetrics::GatewayMetrics()
    : connections(prometheus::BuildGauge()
                      .Name("qim_gateway_connections")
                      .Help("Open WebSocket connections")
                      .Register(*registry_)
                      .Add({})),
      connections_total(
          counter(*registry_, "qim_gateway_connections_total", "Accepted WebSocket connections")),
      connections_refused(
          counter(*registry_, "qim_gateway_connections_refused_total", "Connections refused at the bound")),
      unauthenticated_refused(counter(*registry_, "qim_gateway_unauthenticated_refused_total",
                                      "Connections closed at accept: too many not yet authenticated (in "
                                      "all, or from their peer address)")),
      token_expiry_closes(counter(*registry_, "qim_gateway_token_expiry_closes_total",
                                  "Connections closed at their token's expiry")),
      revoked_closes(
          counter(*registry_, "qim_gateway_revoked_closes_total",
                  "Connections closed because their session was revoked (live, or refused at AUTH)")),
      slow_consumer_closes(counter(*registry_, "qim_gateway_slow_consumer_closes_total",
                                   "Connections closed because their outbound queue overflowed")),
      frames_in(counter(*registry_, "qim_gateway_frames_in_total", "Frames received from clients")),
      sends_acked(
          counter(*registry_, "qim_gateway_sends_acked_total", "SENDs acknowledged after a durable append")),
      sends_duplicate(counter(*registry_, "qim_gateway_sends_duplicate_total",
                              "SENDs answered from the idempotency table")),
      sends_failed(counter(*registry_, "qim_gateway_sends_failed_total", "SENDs whose Outbox append failed")),
      sends_late(
          counter(*registry_, "qim_gateway_sends_late_total",
                  "SENDs refused UNAVAILABLE at their deadline (QIM_SEND_ACK_DEADLINE_MS): not durable in "
                  "time; they may still be stored")),
      entries_pushed(
          counter(*registry_, "qim_gateway_entries_pushed_total", "Mailbox entries pushed in DELIVER")),
      sync_needed(counter(*registry_, "qim_gateway_sync_needed_total",
                          "SYNC_NEEDED frames queued: pushes a connection cannot get, so it SYNCs")),
      send_ack_seconds(prometheus::BuildHistogram()
                           .Name("qim_gateway_send_ack_seconds")
                           .Help("From a SEND's arrival to its SEND_ACK being queued")
                           .Register(*registry_)
                           .Add({}, prometheus::Histogram::BucketBoundaries{0.001, 0.002, 0.005, 0.01, 0.02,
                                                                            0.05, 0.1, 0.25, 0.5, 1, 2.5})) {
  auto& family = prometheus::BuildCounter()
                     .Name("qim_gateway_errors_total")
                     .Help("ERROR frames sent, by code")
                     .Register(*registry_);
  for (size_t i = 0; i < errors_.size(); ++i) {
    errors_[i] = &family.Add({{"code", std::string(wire_code_name(static_cast<WireCode>(i)))}});
  }
}

std::string GatewayMetrics::serialize() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace qim
