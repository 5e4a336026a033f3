#pragma once
// The SignalBus of a distributed deployment (docs/adr/0080), as frontier moves are routed
// (routed_notifier.h), over the routing Redis: a batch of queued signals (signal_queue.h) is sent by
//   - looking up the routes of its users (one pipelined ZRANGEBYSCORE route:<user> per routing instance;
//     the routes are the ones the gateways write at AUTH),
//   - publishing to each gateway concerned ONE payload of kind 2 (signal_payload.h) holding every signal
//     of the batch with that gateway's users only (PUBLISH gw:<G>, on G's instance).
// The gateway's RouteSubscriber hands it to its ConnectionRegistry (SignalSink). Nothing is retried: a
// batch Redis does not take is dropped and counted (qim_signals_unpublished_total).
//
// Usable from any process of the deployment: a gateway (origin = its gateway id, so `except_connection`
// reaches its own channel only) or a MailboxNode (no origin; except_connection must be 0).

#include <atomic>
#include <memory>
#include <string>

#include "delivery/redis/routing_redis.h"
#include "delivery/signal_bus.h"
#include "delivery/signal_queue.h"

namespace qim {

class RedisSignalBus final : public SignalBus {
 public:
  // `redis` must outlive the bus. `origin_gateway`: the id of the gateway this process runs (empty: none).
  RedisSignalBus(RoutingRedis& redis, std::string origin_gateway, size_t max_queued = 10'000);
  // The same over routing instances of its own (a MailboxNode process). Config error for bad endpoints.
  static Result<std::unique_ptr<RedisSignalBus>> create(const RoutingOptions& routing,
                                                        size_t max_queued = 10'000);
  // Publishes what is queued (as far as Redis answers), then stops.
  ~RedisSignalBus() override;

  void send(std::span<const UserId> users, std::string frame, uint64_t except_connection = 0) override;
  void flush() { queue_.flush(); }

  uint64_t published() const { return published_.load(); }      // payloads published to a listening gateway
  uint64_t unpublished() const { return unpublished_.load(); }  // signals lost: Redis did not take them
  uint64_t dropped() const { return queue_.dropped_total(); }
  std::string metrics_text() const;

 private:
  void dispatch(std::vector<Signal>& batch);

  std::unique_ptr<RoutingRedis> owned_;
  RoutingRedis& redis_;
  const std::string origin_;
  std::atomic<uint64_t> published_{0}, unpublished_{0};
  SignalQueue queue_;  // last: its thread stops before the rest goes
};

}  // namespace qim
