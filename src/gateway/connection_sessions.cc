// Session revocation on a connection (docs/adr/0099-session-revocation.md, docs/protocol.md "Session
// revocation"): the check at AUTH, the close of a live connection whose session was revoked, and what the
// session store is told of the connection (its devices list).
#include <boost/asio/post.hpp>

#include "gateway/connection.h"
#include "gateway/gateway_context.h"
#include "sessions/session_store.h"

namespace qim {

namespace net = boost::asio;
namespace websocket = boost::beast::websocket;

namespace {

std::string revoked_message(const Principal& who, int64_t not_before_ms) {
  return "session revoked: this token of device '" + who.device.str() + "' was issued at " +
         std::to_string(who.issued_at_ms) + ", before its sessions' not_before " +
         std::to_string(not_before_ms) + " (ms since the epoch); log in again for a new token";
}

}  // namespace

bool Connection::check_session_at_auth(const std::string& ref, const Principal& who) {
  SessionStore* sessions = ctx_.deps.sessions;
  if (sessions == nullptr) return true;
  // Read on the strand, as the route is written at AUTH: one round trip to the store (in memory for `qim
  // up`). Fail closed: a session the gateway cannot check is not let in.
  auto marks = sessions->marks(who.user);
  if (!marks.ok()) {
    send_error(ref, WireCode::kUnavailable,
               "the session could not be checked for revocation (" + marks.error().message() + "); retry");
    close_after_flush(websocket::close_code::try_again_later, "session check unavailable; retry");
    return false;
  }
  const int64_t not_before = marks->not_before(who.device);
  if (!is_revoked(*marks, who.device, who.issued_at_ms)) return true;
  ctx_.metrics.revoked_closes.Increment();
  send_error(ref, WireCode::kUnauthenticated, revoked_message(who, not_before));
  close_after_flush(static_cast<websocket::close_code>(kRevokedCloseCode),
                    "session revoked (not_before " + std::to_string(not_before) + ")");
  return false;
}

void Connection::revoke_if(RevocationMarks marks) {
  net::post(ws_.get_executor(), [self = shared_from_this(), marks = std::move(marks)] {
    if (!self->principal_ || self->close_) return;
    if (is_revoked(marks, self->principal_->device, self->principal_->issued_at_ms))
      self->end_revoked(marks.not_before(self->principal_->device));
  });
}

void Connection::end_revoked(int64_t not_before_ms) {
  if (close_) return;
  ctx_.metrics.revoked_closes.Increment();
  leave_before_close();
  send_error("", WireCode::kUnauthenticated, revoked_message(*principal_, not_before_ms));
  close_after_flush(static_cast<websocket::close_code>(kRevokedCloseCode),
                    "session revoked (not_before " + std::to_string(not_before_ms) + ")");
}

void Connection::leave_before_close() {
  // No push reaches this connection from now on, even before the close handshake ends: it leaves the
  // registry, and its user's route goes with its last connection.
  ctx_.registry.remove(&principal_->user, id_);
  presence_closed();
  session_closed();
  if (routed_) {
    routed_ = false;
    if (ctx_.deps.routes) ctx_.deps.routes->connection_closed(principal_->user);
  }
  out_.drop_waiting();  // whatever waits (pushes among it) was made for a session now over
}

void Connection::session_opened() {
  if (ctx_.deps.sessions == nullptr || session_open_) return;
  session_open_ = true;
  ctx_.deps.sessions->connection_opened(principal_->user, principal_->device, ctx_.deps.clock->now_ms());
}

void Connection::session_closed() {
  if (!session_open_) return;
  session_open_ = false;
  ctx_.deps.sessions->connection_closed(principal_->user, principal_->device);
}

}  // namespace qim
