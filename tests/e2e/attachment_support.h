#pragma once
// What the attachment scenarios share (attachments_test.cc, attachments_figures_test.cc): the client's own
// HTTP side of presigned URLs, raw frames, and whether the deployment has an object store.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>

#include "e2e/e2e_env.h"

namespace qim::e2e {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

struct HttpAnswer {
  unsigned status = 0;
  std::string body;
};

// One plain-HTTP request to a presigned URL ("http://host:port/path?query"): the client's side of an
// upload or download, which never passes through QIM.
inline HttpAnswer http_request(http::verb verb, const std::string& url, const std::string& content_type = {},
                               const std::string& body = {}) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    ADD_FAILURE() << "not an http URL: " << url;
    return {};
  }
  const size_t slash = url.find('/', scheme.size());
  const std::string authority = url.substr(scheme.size(), slash - scheme.size());
  const std::string target = slash == std::string::npos ? "/" : url.substr(slash);
  const size_t colon = authority.rfind(':');
  const std::string host = authority.substr(0, colon);
  const std::string port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  net::io_context io;
  net::ip::tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  stream.expires_after(std::chrono::seconds(60));
  stream.connect(resolver.resolve(host, port));
  http::request<http::string_body> req(verb, target, 11);
  req.set(http::field::host, authority);
  if (!content_type.empty()) req.set(http::field::content_type, content_type);
  req.body() = body;
  req.prepare_payload();
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(std::numeric_limits<uint64_t>::max());
  http::read(stream, buffer, parser);
  beast::error_code ec;
  stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
  return HttpAnswer{parser.get().result_int(), parser.get().body()};
}

inline std::string field(const std::string& raw, const char* key) {
  simdjson::dom::parser p;
  std::string_view s;
  if (p.parse(raw)[key].get_string().get(s) != simdjson::SUCCESS) return {};
  return std::string(s);
}

// A request by raw JSON with "ref" added; its answer (the ERROR frame too).
inline ServerFrame ask(Client& c, const std::string& ref, std::string json) {
  json.insert(1, "\"ref\":\"" + ref + "\",");
  c.send_text(json);
  auto a = c.wait_ref(ref, kWait);
  EXPECT_TRUE(a.ok()) << a.error().to_string();
  return a.ok() ? *a : ServerFrame{};
}

inline bool store_configured() {
  return std::getenv("QIM_S3_ENDPOINT") != nullptr;
}

inline std::string pattern_bytes(size_t n, unsigned mul) {
  std::string bytes(n, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * mul) & 0xff);
  return bytes;
}

// ATTACH by `c` to `conversation` and the client's own PUT of `bytes`: the attachment id ("" on failure).
// The refs are unique per connection (a counter), so a client may upload many.
inline std::string upload(Client& c, const std::string& conversation, const std::string& bytes,
                          const std::string& type = "application/zip") {
  static std::atomic<uint64_t> n{0};
  auto ok =
      ask(c, "at-" + std::to_string(++n),
          R"({"type":"ATTACH","conversation":")" + conversation + R"(","name":"data.bin","content_type":")" +
              type + R"(","size":)" + std::to_string(bytes.size()) + "}");
  EXPECT_EQ(ok.type, "ATTACH_OK") << ok.raw;
  if (ok.type != "ATTACH_OK") return {};
  EXPECT_EQ(http_request(http::verb::put, field(ok.raw, "upload_url"), type, bytes).status, 200u);
  return field(ok.raw, "attachment");
}

// A SEND of `caption` with attachment `id` (its declaration as upload() made it).
inline ServerFrame send_with(Client& c, const std::string& conversation, const std::string& cmid,
                             const std::string& id, size_t size, const std::string& caption = "file",
                             const std::string& type = "application/zip") {
  return ask(c, "s-" + cmid,
             R"({"type":"SEND","client_msg_id":")" + cmid + R"(","conversation":")" + conversation +
                 R"(","body":")" + caption + R"(","attachments":[{"attachment":")" + id +
                 R"(","name":"data.bin","content_type":")" + type + R"(","size":)" + std::to_string(size) +
                 "}]}");
}

inline ServerFrame url_of(Client& c, const std::string& ref, const std::string& conversation,
                          uint64_t message_id, const std::string& id, bool thumbnail = false) {
  return ask(c, ref,
             R"({"type":"ATTACHMENT_URL","conversation":")" + conversation + R"(","message_id":")" +
                 std::to_string(message_id) + R"(","attachment":")" + id + R"(","thumbnail":)" +
                 (thumbnail ? "true" : "false") + "}");
}

// ATTACHMENT_URL by `c`, asked again until it is ATTACHMENT_URL_OK or kWait passed: the history is written by
// the archiver after the append (a poll with a bound).
inline ServerFrame url_when_archived(Client& c, const std::string& conversation, uint64_t message_id,
                                     const std::string& id, bool thumbnail = false) {
  static std::atomic<uint64_t> n{0};
  ServerFrame got;
  const auto until = std::chrono::steady_clock::now() + kWait;
  int tries = 0;
  do {
    if (tries++ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    got = url_of(c, "w" + std::to_string(++n), conversation, message_id, id, thumbnail);
  } while (got.type != "ATTACHMENT_URL_OK" && std::chrono::steady_clock::now() < until);
  return got;
}

}  // namespace qim::e2e
