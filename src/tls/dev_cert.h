#pragma once
// The self-signed development certificate `qim up --dev-tls` serves: an ECDSA P-256 key and a certificate
// for localhost, 127.0.0.1 and ::1 (subjectAltName), valid 365 days. It is its own CA: a client trusts it by
// loading the certificate file as its CA (qimctl --ca, QIM_TLS_CA, the SDK's `ca`). For development only.

#include <string>

#include "core/status.h"

namespace qim::tls {

struct DevCertFiles {
  std::string cert;  // PEM certificate (also the CA file clients trust)
  std::string key;   // PEM private key, mode 0600
};

// The pair in `dir` (dev-cert.pem, dev-key.pem), created (with `dir`) when either is missing; an existing
// pair is kept, so clients that trust it keep working across restarts. Io naming the path on failure;
// nothing half-written is left under the final names (written to temporary files, then renamed).
Result<DevCertFiles> ensure_dev_cert(const std::string& dir);

}  // namespace qim::tls
