#pragma once
// The OpenSSL contexts of the client port (a certificate chain and its key) and of the clients (the
// certificates they trust). Both refuse what does not load with a Config error naming the file and the
// variable it came from, so a bad QIM_TLS_CERT stops `qim up` at start rather than at the first client.

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>

#include "core/status.h"

namespace qim::tls {

// A server context serving the PEM certificate chain in `cert_file` with the PEM private key in
// `key_file` (TLS 1.2 and later). Config naming QIM_TLS_CERT / QIM_TLS_KEY and the file when a file cannot
// be read, is not PEM of the right kind, or the key does not belong to the certificate.
Result<std::shared_ptr<boost::asio::ssl::context>> server_context(const std::string& cert_file,
                                                                  const std::string& key_file);

// A client context that verifies the server: against the PEM certificates in `ca_file` when it is not
// empty (e.g. the development certificate), else against the system's trust store. Verification is never
// off. Config naming the file when it cannot be loaded.
Result<std::shared_ptr<boost::asio::ssl::context>> client_context(const std::string& ca_file);

}  // namespace qim::tls
