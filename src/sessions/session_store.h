#pragma once
// Where sessions are kept (docs/adr/0099-session-revocation.md): the revocation marks (durable: a
// revocation outlives every restart) and what is known of each device's connections (best effort). Two
// implementations: FileSessionStore (sessions/file_session_store.h: `qim up`, in its data directory) and
// RedisSessionStore (sessions/redis/redis_session_store.h: the distributed deployment, in the routing Redis,
// seen by every gateway). Every method is thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/status.h"
#include "sessions/revocation.h"

namespace qim {

// One device of a user as far as the deployment knows it without a store of its own: the last AUTH the
// gateways saw of it, and its live connections.
struct DeviceSession {
  std::string device;
  int64_t last_auth_ms = 0;   // 0: no AUTH seen (the device is only named by a revocation)
  uint32_t live = 0;          // open authenticated connections, over every live gateway
  int64_t not_before_ms = 0;  // the not_before that applies to it (the user's or its own); 0: none
};

// The users whose revocation changed after a cursor (RevocationWatcher's catch-up).
struct RevocationChanges {
  uint64_t cursor = 0;        // pass it to the next call
  std::vector<UserId> users;  // changed after the cursor given (repeats possible)
  bool complete = true;       // false: some changes were forgotten (trimmed, or the store restarted):
                              // check every user
};

class SessionStore {
 public:
  virtual ~SessionStore() = default;

  // The user's marks (empty if never revoked). Transport/Timeout/Io when the store cannot be read: the
  // gateway then refuses the AUTH (fail closed).
  virtual Result<RevocationMarks> marks(const UserId& user) = 0;
  // Raises the not_before of the user (`device` unset: all of its sessions) or of one of its devices to
  // `not_before_ms` (never lowers it), durably once it returns ok, and makes the user visible to
  // changes_since. The error of the store otherwise (nothing, or only the mark, was recorded).
  virtual Status revoke(const UserId& user, const std::optional<DeviceId>& device, int64_t not_before_ms) = 0;
  // The users whose marks changed after `cursor`; no cursor: the current one and no users (a gateway
  // starting: every connection it will hold is checked at its AUTH).
  virtual Result<RevocationChanges> changes_since(std::optional<uint64_t> cursor) = 0;

  // Bookkeeping of the gateways for devices(): an AUTH accepted at `at_ms`, and the end of that
  // connection. Best effort (never fails the connection; a failure is logged by the store).
  virtual void connection_opened(const UserId& user, const DeviceId& device, int64_t at_ms) = 0;
  virtual void connection_closed(const UserId& user, const DeviceId& device) = 0;
  // The user's devices: every device seen at AUTH (or named by a revocation), by device id.
  virtual Result<std::vector<DeviceSession>> devices(const UserId& user) = 0;
};

}  // namespace qim
