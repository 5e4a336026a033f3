#pragma once
// Ephemeral signals (docs/adr/0080): typing, presence, read-state updates and receipts travel the delivery
// and routing path to users' live connections on every gateway and are never stored. A signal that finds
// no live connection is dropped; the state it announces (if any) is readable from the store (a read mark,
// CONVERSATIONS), so a client that missed one loses nothing it cannot pull.
//
// Embedded: the process's ConnectionRegistry. Distributed: the routing Redis (route:<user> names the
// gateways holding the user's connections; PUBLISH gw:<G>), as entries_visible is routed.

#include <cstdint>
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
  virtual void send(std::span<const UserId> users, std::string frame, uint64_t except_connection = 0) = 0;
};

}  // namespace qim
