#include "push/http_client.h"

#include <curl/curl.h>

namespace qim {

namespace {

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

}  // namespace

HttpClient::HttpClient(HttpClientOptions options) : options_(std::move(options)), curl_(curl_easy_init()) {}

HttpClient::~HttpClient() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<HttpAnswer> HttpClient::post(const std::string& url, const std::vector<std::string>& headers,
                                    const std::string& body) {
  CURL* c = static_cast<CURL*>(curl_);
  if (c == nullptr) return Error(Errc::kInvariant, "libcurl did not initialise");
  curl_easy_reset(c);
  HttpAnswer answer;
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  list = curl_slist_append(list, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer.body);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout.count()));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  // HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 otherwise; APNs' answer is checked below.
  curl_easy_setopt(c, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  if (!options_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options_.ca_file.c_str());
  const CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(list);
  if (rc == CURLE_OPERATION_TIMEDOUT)
    return Error(Errc::kTimeout,
                 "POST " + url + ": no answer in " + std::to_string(options_.timeout.count()) + " ms");
  if (rc != CURLE_OK) return Error(Errc::kTransport, "POST " + url + ": " + curl_easy_strerror(rc));
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &answer.status);
  if (options_.http2) {
    long version = 0;
    curl_easy_getinfo(c, CURLINFO_HTTP_VERSION, &version);
    if (version != CURL_HTTP_VERSION_2_0)
      return Error(Errc::kTransport, "POST " + url + ": the server did not speak HTTP/2");
  }
  return answer;
}

}  // namespace qim
