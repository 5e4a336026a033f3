#pragma once
// What an operator or the server API does with sessions (docs/adr/0099-session-revocation.md), over a
// SessionStore and the signal bus that reaches every gateway holding a user's connections:
//
//   SessionService sessions(store, &bus, clock);
//   sessions.revoke(user, device);   // not_before = now, durable, pushed to the gateways
//   sessions.devices(user);          // the user's devices, their last AUTH and live connections
//
// revoke() records the mark first and only then pushes: a gateway that misses the push (a dropped
// pub/sub message, a full queue) still refuses the token at AUTH and closes its live connections at its
// next RevocationWatcher round (revocation_watcher.h). Thread-safe.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "delivery/signal_bus.h"
#include "sessions/session_store.h"

namespace qim {

class SessionService {
 public:
  // `store` and `bus` (null: no push; the gateways catch up by their watcher) must outlive the service.
  SessionService(SessionStore& store, SignalBus* bus, std::shared_ptr<const Clock> clock)
      : store_(store), bus_(bus), clock_(std::move(clock)) {}

  // Revokes every session of `user` issued until now (`device` unset) or those of one device: the
  // not_before recorded (now by the clock). The store's error if it could not be recorded (nothing was
  // pushed then).
  Result<int64_t> revoke(const UserId& user, const std::optional<DeviceId>& device);
  Result<std::vector<DeviceSession>> devices(const UserId& user) { return store_.devices(user); }
  Result<RevocationMarks> marks(const UserId& user) { return store_.marks(user); }
  SessionStore& store() { return store_; }

 private:
  SessionStore& store_;
  SignalBus* bus_;
  std::shared_ptr<const Clock> clock_;
};

// {"user":..,"not_before":<user's ms or 0>,"devices":[{"device":..,"last_auth":<ms or 0>,"live":n,
// "not_before":<ms or 0>},...]}: the answer of GET /admin/sessions (and the API's device list).
std::string devices_json(const UserId& user, const RevocationMarks& marks,
                         const std::vector<DeviceSession>& devices);

}  // namespace qim
