#include "ctl/session.h"

#include <ostream>

#include "ctl/endpoint.h"

namespace qim::ctl {

namespace {

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

Error explain_connection_error(const Connection& c, const Error& e) {
  const std::string& m = e.message();
  const bool wss = c.url.starts_with("wss://");
  std::string hint;
  if (has(m, "certificate verify failed")) {
    hint =
        "the server's certificate is not trusted: pass --ca FILE (or QIM_TLS_CA); for `qim up --dev-tls` "
        "that is <its data dir>/tls/dev-cert.pem";
  } else if (has(m, "Connection refused")) {
    hint =
        "nothing listens at " + c.url +
        ": is `qim up` running? Give the address its banner prints after \"clients connect to\" with --url "
        "or QIM_URL (default ws://127.0.0.1:7400)";
  } else if (has(m, "handshake was declined") || has(m, "bad version") || has(m, "bad status")) {
    hint = c.url +
           " answered HTTP but is not a QIM client port: is it the admin port (/healthz, /metrics)? Clients "
           "connect to the address the banner prints after \"clients connect to\"";
  } else if (wss && (has(m, "wrong version number") || has(m, "packet length too long") ||
                     has(m, "unexpected eof") || has(m, "record layer failure") ||
                     (has(m, "TLS handshake") && (has(m, "reset by peer") || has(m, "end of stream"))))) {
    hint = c.url + " does not speak TLS: use ws:// (wss:// needs `qim up --dev-tls` or a TLS certificate)";
  } else if (!wss && e.code() == Errc::kTransport &&
             (has(m, "end of stream") || has(m, "reset by peer") || has(m, "bad") || has(m, "handshake"))) {
    hint =
        "if the server serves TLS (`qim up --dev-tls`), use wss:// and --ca <its data dir>/tls/dev-cert.pem";
  }
  if (hint.empty()) return e;
  return Error(e.code(), m + "\n  " + hint);
}

Result<Session> open_session(const Connection& c) {
  QIM_ASSIGN_OR_RETURN(Endpoint where, parse_ws_url(c.url));
  client::ClientOptions options;
  options.host = where.host;
  options.port = where.port;
  options.target = where.target;
  options.tls = where.tls;
  options.ca_file = c.ca_file;
  options.timeout = c.request_timeout;
  Session s;
  auto client = client::Client::connect(options);
  if (!client.ok()) return explain_connection_error(c, client.error());
  s.client = std::move(client).value();
  auto auth_ok = s.client->auth(c.token);
  if (!auth_ok.ok()) return Error(auth_ok.error().code(), "auth: " + auth_ok.error().message());
  s.auth_ok = std::move(auth_ok).value();
  return s;
}

int fail(std::ostream& err, const Error& e) {
  err << "qimctl: " << e.message() << '\n';
  return 1;
}

int fail(std::ostream& err, std::string_view what, const Error& e) {
  err << "qimctl: " << what << ": " << e.message() << '\n';
  return 1;
}

}  // namespace qim::ctl
