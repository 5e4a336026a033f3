#pragma once
// The HTTP client the S3 store sends its signed requests with (Boost.Beast, http:// and https://): one
// connection a request, every step bounded by one deadline. Internal to attachments/s3.

#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace qim::attachments::s3 {

struct HttpRequest {
  std::string_view method;  // GET, HEAD, PUT, DELETE
  std::string_view url;     // absolute: scheme://host[:port]/path?query (a presigned URL)
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view body;
  uint64_t max_body = 1 << 20;  // a longer answer body is ResourceExhausted
};

struct HttpResponse {
  unsigned status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-case
  std::string body;
  const std::string* header(std::string_view lower_name) const;
};

class HttpClient {
 public:
  // `timeout`: the whole exchange (resolve, connect, TLS, request, answer).
  explicit HttpClient(std::chrono::milliseconds timeout);
  // Transport when the peer cannot be reached or answers something that is not HTTP; Timeout when the
  // exchange outlasts the deadline; ResourceExhausted when the body is longer than request.max_body;
  // InvalidArgument for a URL it cannot send to. Any HTTP status is a response, not an error.
  Result<HttpResponse> send(const HttpRequest& request);

 private:
  std::chrono::milliseconds timeout_;
  boost::asio::ssl::context tls_;  // verifies peers against the system's CA store
};

}  // namespace qim::attachments::s3
