#pragma once
// Ephemeral signals (docs/adr/0080): typing, presence, read-state updates and receipts travel the delivery
// and routing path to users' live connections on every gateway and are never stored. A signal that finds
// no live connection is dropped; the state it announces (if any) is readable from the store (a read mark,
// CONVERSATIONS), so a client that missed one loses nothing it cannot pull.
//
// Embedded: the process's ConnectionRegistry. Distributed: the routing Redis (route:<user> names the
// gateways holding the user's connections; PUBLISH gw:<G>), as entries_visible is routed.
//
// Implementations: LocalSignalBus (delivery/local_signal_bus.h: one process, `qim up`) and RedisSignalBus
// (delivery/redis/redis_signal_bus.h: gateways and MailboxNodes of a distributed deployment). Either can
// be made in a process without a gateway (a MailboxNode sending DELIVERED): the Redis one needs only the
// routing options.

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/name.h"

namespace qim {

class SignalBus {
 public:
  virtual ~SignalBus() = default;
  // Sends `frame` (one server frame's JSON text, complete) to every live connection of each of `users`,
  // except the connection whose id is `except_connection` (0: none; the sender's own socket). Never
  // blocks for long: queued and bounded (drops counted in qim_signals_dropped_total). Thread-safe.
  // A connection id names a connection of the gateway the caller runs in (the distributed bus passes it
  // only to that gateway; a caller without a gateway passes 0).
  virtual void send(std::span<const UserId> users, std::string frame, uint64_t except_connection = 0) = 0;
};

// The receiving end of signals on one gateway: its live connections (the ConnectionRegistry).
class SignalSink {
 public:
  virtual ~SignalSink() = default;
  // Queues `frame` to each live connection of `users` on this gateway but `except_connection`, as a push
  // (behind the answers waiting, like DELIVER). Never blocks on a connection. Thread-safe.
  virtual void deliver_signal(std::span<const UserId> users, std::shared_ptr<const std::string> frame,
                              uint64_t except_connection) = 0;
};

}  // namespace qim
