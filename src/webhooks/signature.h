#pragma once
// Standard Webhooks signing (https://www.standardwebhooks.com, "Signature scheme"): the secret is
// "whsec_" + base64 of the key bytes; the signature of a delivery is "v1," + base64(HMAC-SHA256(key,
// "<webhook-id>.<webhook-timestamp>.<body>")), sent in the `webhook-signature` header beside `webhook-id`
// and `webhook-timestamp` (seconds since the Unix epoch). Receivers verify with any Standard Webhooks
// library; the tests use the published npm `standardwebhooks` one.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qim {

// The key bytes of a "whsec_<base64>" secret (the prefix is optional, as in the reference libraries).
// InvalidArgument if the rest is not base64 or decodes to fewer than 16 bytes (too weak a key), or more
// than 64 (the spec's bound).
Result<std::string> decode_webhook_secret(std::string_view secret);

// "v1,<base64 signature>" of `body` under `key` (the decoded secret) for this id and timestamp.
std::string webhook_signature(std::string_view key, std::string_view id, int64_t timestamp_s,
                              std::string_view body);

// Standard base64 (with padding), as the scheme uses; not the URL alphabet of auth/base64url.h.
std::string base64_encode(std::string_view bytes);

}  // namespace qim
