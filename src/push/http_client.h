#pragma once
// One HTTP client for the push providers (libcurl): POSTs over HTTP/1.1 or HTTP/2 (https:// with ALPN; the
// APNs local test server speaks HTTP/2 over TLS with a CA the test makes, QIM_PUSH_CA_FILE). One client
// keeps its connections between requests (one per push thread); not thread-safe.

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace qim {

struct HttpAnswer {
  long status = 0;
  std::string body;
};

struct HttpClientOptions {
  std::chrono::milliseconds timeout{10000};
  std::string ca_file;  // empty: the system's trust store
  bool http2 = false;   // require HTTP/2 (APNs); otherwise HTTP/2 over TLS when offered, else 1.1
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // POSTs `body` to `url` with `headers` ("Name: value"). The answer whatever its status; Transport when
  // no answer came (could not connect, TLS, connection lost), Timeout past the options' timeout.
  Result<HttpAnswer> post(const std::string& url, const std::vector<std::string>& headers,
                          const std::string& body);

 private:
  HttpClientOptions options_;
  void* curl_ = nullptr;  // CURL*
};

}  // namespace qim
