#pragma once
// Configuration of the server API (docs/running.md "The server API"). Off unless QIM_API_LISTEN is set.

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "mailbox/store_options.h"

namespace qim::api {

struct ApiOptions {
  std::string address = "127.0.0.1";  // QIM_API_LISTEN=<address>:<port> (port 0: any free port)
  uint16_t port = 0;
  // TLS (both or neither): the same certificate options as the client port (QIM_TLS_CERT, QIM_TLS_KEY).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string keys_file;                 // QIM_API_KEYS_FILE; default <data dir>/api-keys
  uint32_t threads = 4;                  // QIM_API_THREADS: requests served at once
  size_t max_request_bytes = 64 * 1024;  // QIM_API_MAX_REQUEST_BYTES: larger bodies are TOO_LARGE (413)
  double rate_per_second = 100;          // QIM_API_RATE: requests per second per key (token bucket) ...
  double burst = 200;                    // QIM_API_BURST: ... and its depth
  std::string system_user = "system";    // QIM_API_SYSTEM_USER: the sender of a message sent "as the system"
  int64_t max_token_ttl_s = 30 * 86400;  // tokens minted through the API live at most this long
};

// nullopt when QIM_API_LISTEN is unset (the API is off). Config naming the variable for a malformed value.
// `data_dir` gives the default key file; the TLS files are the client port's (QIM_TLS_CERT / QIM_TLS_KEY).
Result<std::optional<ApiOptions>> api_options_from_env(const EnvLookup& getenv, const std::string& data_dir);

// The key file a command should use: QIM_API_KEYS_FILE, else <data dir>/api-keys.
std::string api_keys_file(const EnvLookup& getenv, const std::string& data_dir);

}  // namespace qim::api
