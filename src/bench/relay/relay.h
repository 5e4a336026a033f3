#pragma once
// qim-relay: the ceiling of this machine for QIM's client protocol (issue 10, item 3). A WebSocket server
// that speaks the protocol of docs/protocol.md with the gateway's own frame parser and encoders and the
// gateway's token check, but stores nothing: AUTH is verified as the gateway does, a SEND is answered
// with SEND_ACK at once and pushed as a DELIVER to every live connection of the recipient and of the
// sender (the sender's own mailbox gets an entry in QIM too), each user with its own in-memory sequence.
// Nothing survives a restart, there is no SYNC (the relay announces delivery mode "push"), and HISTORY
// is refused. What it measures is the cost of the protocol alone: WebSocket framing, JSON parsing and
// encoding, and the fan-out to live connections, on the same loopback and the same load generator.

#include <cstdint>
#include <memory>
#include <string>

#include "core/clock.h"
#include "core/status.h"

namespace qim::relay {

struct RelayOptions {
  std::string listen_address = "127.0.0.1";
  uint16_t port = 7750;  // 0 picks a free port
  std::string auth_secret;
  uint32_t threads = 1;                // io threads (1..64)
  size_t max_frame_bytes = 96 * 1024;  // as the gateway's default
  size_t max_body_bytes = 16 * 1024;   // as the gateway's default
  size_t max_outbound_frames = 4096;   // a connection this far behind is closed (1013), as the gateway
};

// Counters since start (relaxed; for the relay's own log line and tests).
struct RelayStats {
  uint64_t connections = 0;  // accepted WebSocket connections
  uint64_t sends = 0;        // SENDs acknowledged
  uint64_t delivers = 0;     // DELIVER frames queued to connections
};

class Relay {
 public:
  // Binds and starts serving on `options.threads` threads. Config for an empty secret or bad limits; Io
  // naming the address if the port cannot be bound.
  static Result<std::unique_ptr<Relay>> start(RelayOptions options, std::shared_ptr<const Clock> clock);
  // Stops: closes the acceptor and every connection, joins the threads.
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  uint16_t port() const;     // the bound port
  RelayStats stats() const;  // thread-safe

  struct Impl;

 private:
  explicit Relay(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace qim::relay
