#pragma once
// One authenticated load connection: a token minted with the gateway's secret, the WebSocket, AUTH.

#include <functional>
#include <memory>
#include <string>

#include "client/client.h"
#include "core/clock.h"
#include "core/status.h"

namespace qim::load {

struct Connected {
  std::unique_ptr<client::Client> client;
  client::ServerFrame auth_ok;  // its `delivery` says whether SYNC is allowed ("push": not)
};

// Connects `user` (device `device`) to host:port and authenticates with a 24 h token signed with `secret`.
// Frames are queued until the caller sets on_frame. InvalidArgument for a bad user or device name;
// Transport or Unauthenticated naming the user for a failed connection or AUTH.
Result<Connected> connect_user(const std::string& host, uint16_t port, const std::string& secret,
                               const std::string& user, const std::string& device,
                               std::shared_ptr<client::Runtime> runtime, const Clock& clock,
                               std::function<void(int, std::string_view)> on_close = {},
                               std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

}  // namespace qim::load
