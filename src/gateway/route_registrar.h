#pragma once
// Where a gateway records which users hold live connections on it, so frontier moves reach it when the
// MailboxNodes run in other processes (docs/architecture.md "Routing across gateways"). Optional: without
// one (`qim up`, one process) the node's notifier is the gateway's own and nothing is recorded.

#include "core/ids.h"

namespace qim {

class RouteRegistrar {
 public:
  virtual ~RouteRegistrar() = default;
  // A connection of `user` passed AUTH. Called on the connection's strand BEFORE AUTH_OK is queued, so a
  // frontier move looked up after it finds the route, and one looked up before it happened before the
  // client's SYNC (which follows AUTH_OK) reads the mailbox: one of the two covers every entry. May block
  // for one round trip to the routing store. A failure is the registrar's to heal (it retries, and tells
  // the user's connections to SYNC once the route is back); the connection goes on. Thread-safe.
  virtual void connection_authenticated(const UserId& user) = 0;
  // That connection closed (once per connection_authenticated). Must not block. Thread-safe.
  virtual void connection_closed(const UserId& user) = 0;
};

}  // namespace qim
