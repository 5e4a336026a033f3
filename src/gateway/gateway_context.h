#pragma once
// What every connection of one gateway shares: options, dependencies, the idempotency table, the live
// connection registry (the push router), metrics, and the pools that run blocking store reads. Owned by
// the gateway; outlives every connection (stop() drains them first).

#include <boost/asio/ssl/context.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "attachments/attachment_service.h"
#include "delivery/local_signal_bus.h"
#include "gateway/connection_registry.h"
#include "gateway/fair_pool.h"
#include "gateway/gateway.h"
#include "gateway/gateway_metrics.h"
#include "gateway/parser_pool.h"
#include "gateway/send_dedup.h"
#include "gateway/unauthenticated_slots.h"
#include "presence/memory_presence_exchange.h"
#include "presence/presence_hub.h"

namespace qim {

enum class DeliveryMode { kHybrid, kPush, kPull };

struct GatewayContext {
  GatewayContext(GatewayOptions o, GatewayDeps d, DeliveryMode m)
      : options(std::move(o)),
        deps(std::move(d)),
        mode(m),
        memory_dedup(options.dedup_capacity, options.dedup_window_ms),
        dedup(deps.send_dedup ? deps.send_dedup : &memory_dedup),
        registry(mode != DeliveryMode::kPull, deps.shard_count, metrics, options.block_cache_ms),
        unauthenticated(options.max_unauthenticated, options.max_unauthenticated_per_peer),
        blocking("gateway-read", options.blocking_threads),
        group_ops("gateway-group", 2) {
    registry.set_quote_sources(deps.history, deps.messages);
    if (deps.signals == nullptr) {
      own_signals = std::make_unique<LocalSignalBus>();
      own_signals->attach(&registry);
    }
    signals = deps.signals != nullptr ? deps.signals : own_signals.get();
    if (deps.presence == nullptr) {
      own_presence_exchange = std::make_unique<MemoryPresenceExchange>();
      own_presence = std::make_unique<PresenceHub>(*own_presence_exchange, nullptr, deps.clock);
    }
    presence = deps.presence != nullptr ? deps.presence : own_presence.get();
    if (deps.objects != nullptr) {
      // Attachment ids are keyed by the auth secret, and the daily budgets kept in deps.upload_budget: every
      // gateway of a deployment shares both.
      attachments = std::make_unique<attachments::AttachmentService>(
          *deps.objects, options.auth_secret, deps.attachment_options, deps.clock, deps.upload_budget);
    }
  }
  ~GatewayContext() {
    if (own_signals) own_signals->attach(nullptr);
  }

  const GatewayOptions options;
  const GatewayDeps deps;
  const DeliveryMode mode;
  GatewayMetrics metrics;
  MemorySendDedup memory_dedup;  // the default table (unused when the deps bring a shared one)
  SendDedup* dedup;
  ConnectionRegistry registry;
  UnauthenticatedSlots unauthenticated;  // connections from accept to AUTH_OK (bounded apart)
  ParserPool parsers;                    // shared: a parser's buffers grow to the largest frame it saw
  // Both pools have one lane per connection (fair_pool.h); stop() stops them before the io_context their
  // tasks post answers to goes. SYNC, HISTORY and the membership checks of group SENDs:
  FairPool blocking;
  // GROUP_* frames: their checks, lists and the polls of a change's outcome (no thread waits for fanout).
  FairPool group_ops;
  // Ephemeral signals (typing, presence): deps.signals, else own_signals over the registry.
  std::unique_ptr<LocalSignalBus> own_signals;
  SignalBus* signals = nullptr;
  // Presence: deps.presence, else a hub of this gateway's own.
  std::unique_ptr<MemoryPresenceExchange> own_presence_exchange;
  std::unique_ptr<PresenceHub> own_presence;
  PresenceHub* presence = nullptr;
  // The attachment rules over deps.objects; null without an object store (ATTACHMENTS_DISABLED).
  std::unique_ptr<attachments::AttachmentService> attachments;
  // Set by start() before the first accept when TLS is configured; null: plain ws://.
  std::shared_ptr<boost::asio::ssl::context> tls;

  // SENDs appended but not yet answered; stop() waits for zero.
  void send_started() { in_flight_sends.fetch_add(1); }
  void send_answered() {
    if (in_flight_sends.fetch_sub(1) == 1) {
      std::lock_guard lock(drain_mu);
      drained.notify_all();
    }
  }
  std::atomic<uint64_t> in_flight_sends{0};
  std::mutex drain_mu;
  std::condition_variable drained;

  std::atomic<uint32_t> open_connections{0};
};

std::string_view delivery_mode_name(DeliveryMode mode);

}  // namespace qim
