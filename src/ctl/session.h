#pragma once
// An authenticated connection, the first step of every qimctl command.

#include <memory>
#include <string>

#include "client/client.h"
#include "core/status.h"

namespace qim::ctl {

struct Connection {
  std::string url = "ws://127.0.0.1:7400";
  std::string token;
  std::string ca_file;  // wss://: the PEM certificates to trust (--ca / QIM_TLS_CA); empty: the system's
  std::chrono::milliseconds request_timeout{5000};  // connect, and each request's reply
};

struct Session {
  std::unique_ptr<client::Client> client;
  client::ServerFrame auth_ok;  // user, device, delivery mode
};

// Connects to `c.url` and sends AUTH. InvalidArgument for a bad URL; Transport naming the endpoint if it
// cannot connect; the server's refusal as an error whose message is "auth: UNAUTHENTICATED: ...".
Result<Session> open_session(const Connection& c);

// `e` (a failed connect or handshake to `c.url`) with a second line saying what to do when the cause is
// a known first-hour mistake: nothing listening (is `qim up` running? --url / QIM_URL), the admin port
// given as the client URL, wss:// to a plain port or ws:// to a TLS one, an untrusted certificate (--ca).
// Otherwise `e` unchanged.
Error explain_connection_error(const Connection& c, const Error& e);

// Prints "qimctl: <e's message>" on stderr and returns the exit code of a failed command: 1.
int fail(std::ostream& err, const Error& e);
// The same with what was being done first: "qimctl: <what>: <e's message>".
int fail(std::ostream& err, std::string_view what, const Error& e);

}  // namespace qim::ctl
