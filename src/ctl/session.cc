#include "ctl/session.h"

#include <ostream>

#include "ctl/endpoint.h"

namespace qim::ctl {

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
  QIM_ASSIGN_OR_RETURN(s.client, client::Client::connect(options));
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
