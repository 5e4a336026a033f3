#include "api/api_server.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "gateway/admin_server.h"  // bind_acceptor
#include "tls/tls_context.h"

namespace qim::api {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr size_t kAcceptQueue = 64;
constexpr int kIdleSeconds = 10;
constexpr int kMaxRequestsPerConnection = 1000;
constexpr size_t kMaxHeaderBytes = 8 * 1024;

template <class Stream>
bool write_response(Stream& stream, const ApiResponse& out, bool keep_alive) {
  http::response<http::string_body> res(static_cast<http::status>(out.status), 11);
  res.set(http::field::server, "qim-api");
  res.set(http::field::content_type, out.content_type);
  res.set(http::field::cache_control, "no-store");
  for (const auto& [name, value] : out.headers) res.set(name, value);
  res.keep_alive(keep_alive);
  res.body() = out.body;
  res.prepare_payload();
  beast::error_code ec;
  http::write(stream, res, ec);
  return !ec;
}

template <class Stream>
void serve_stream(Stream& stream, ApiRouter& router, size_t max_body) {
  beast::flat_buffer buffer;
  for (int served = 0; served < kMaxRequestsPerConnection; ++served) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kMaxHeaderBytes);
    parser.body_limit(max_body);
    beast::error_code ec;
    http::read_header(stream, buffer, parser, ec);
    if (!ec) {
      // A client that asks before sending its body (curl does for large ones) is told to go on, unless the
      // body is over the bound already (then the read below fails at once with body_limit).
      const auto& head = parser.get();
      if (auto it = head.find(http::field::expect);
          it != head.end() && beast::iequals(it->value(), "100-continue")) {
        http::response<http::empty_body> go_on(http::status::continue_, 11);
        http::write(stream, go_on, ec);
      }
      if (!ec) http::read(stream, buffer, parser, ec);
    }
    if (ec == http::error::body_limit) {
      write_response(
          stream,
          ApiRouter::problem(WireCode::kTooLarge, "the request body is over " + std::to_string(max_body) +
                                                      " bytes (QIM_API_MAX_REQUEST_BYTES)"),
          false);
      return;
    }
    if (ec == http::error::header_limit) {
      write_response(stream,
                     ApiRouter::problem(WireCode::kTooLarge, "the request line and headers are over " +
                                                                 std::to_string(kMaxHeaderBytes) + " bytes"),
                     false);
      return;
    }
    if (ec) {
      // The peer closed, timed out or the socket failed: nothing to answer. Else an HTTP parse error.
      if (ec == http::error::end_of_stream ||
          ec.category() != beast::error_code(http::error::end_of_stream).category())
        return;
      write_response(
          stream, ApiRouter::problem(WireCode::kBadFrame, "not an HTTP/1.1 request: " + ec.message()), false);
      return;
    }
    const auto& req = parser.get();
    ApiRequest r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    if (auto it = req.find(http::field::authorization); it != req.end())
      r.authorization = std::string(it->value());
    if (auto it = req.find("Idempotency-Key"); it != req.end()) {
      r.idempotency_key = std::string(it->value());
      r.has_idempotency_key = true;
    }
    r.body = req.body();
    const bool keep_alive = req.keep_alive();
    if (!write_response(stream, router.handle(r), keep_alive) || !keep_alive) return;
  }
}

}  // namespace

ApiServer::ApiServer(ApiOptions options, ApiDeps deps)
    : options_(std::move(options)), router_(options_, std::move(deps)), acceptor_(io_) {}

ApiServer::~ApiServer() {
  stop();
}

Status ApiServer::start() {
  if (options_.tls_cert_file.empty() != options_.tls_key_file.empty())
    return Error(Errc::kConfig, "QIM_TLS_CERT and QIM_TLS_KEY: set both or neither");
  if (!options_.tls_cert_file.empty()) {
    QIM_ASSIGN_OR_RETURN(tls_, tls::server_context(options_.tls_cert_file, options_.tls_key_file));
  }
  QIM_RETURN_IF_ERROR(
      bind_acceptor(acceptor_, options_.address, options_.port, "server API (QIM_API_LISTEN)"));
  port_ = acceptor_.local_endpoint().port();
  for (uint32_t i = 0; i < options_.threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  acceptor_thread_ = std::thread([this] { accept_loop(); });
  return {};
}

void ApiServer::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  ready_.notify_all();
  if (acceptor_.is_open()) ::shutdown(acceptor_.native_handle(), SHUT_RDWR);  // wakes the blocked accept
  if (acceptor_thread_.joinable()) acceptor_thread_.join();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
  beast::error_code ignored;
  acceptor_.close(ignored);
  std::lock_guard lock(mu_);
  queue_.clear();
}

void ApiServer::accept_loop() {
  while (true) {
    beast::error_code ec;
    tcp::socket socket(io_);
    acceptor_.accept(socket, ec);
    std::unique_lock lock(mu_);
    if (stopping_) return;
    if (ec) {
      lock.unlock();
      spdlog::warn("api: accept failed: {}", ec.message());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (queue_.size() >= kAcceptQueue) continue;  // closed at accept: every worker is busy and the queue full
    queue_.push_back(std::move(socket));
    lock.unlock();
    ready_.notify_one();
  }
}

void ApiServer::worker_loop() {
  while (true) {
    std::unique_lock lock(mu_);
    ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    tcp::socket socket = std::move(queue_.front());
    queue_.pop_front();
    const int fd = socket.native_handle();
    open_fds_.insert(fd);
    lock.unlock();
    serve(std::move(socket));
    lock.lock();
    open_fds_.erase(fd);
  }
}

void ApiServer::serve(tcp::socket socket) {
  timeval idle{kIdleSeconds, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof idle);
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &idle, sizeof idle);
  beast::error_code ec;
  if (tls_) {
    net::ssl::stream<tcp::socket&> stream(socket, *tls_);
    stream.handshake(net::ssl::stream_base::server, ec);
    if (ec) return;
    serve_stream(stream, router_, options_.max_request_bytes);
    stream.shutdown(ec);
  } else {
    serve_stream(socket, router_, options_.max_request_bytes);
    // A lingering close: a refused request's unread body (413) must not turn the close into a reset that
    // destroys the answer before the client reads it. What the client still sends is read and dropped, for
    // 1 s and 1 MiB at most.
    socket.shutdown(tcp::socket::shutdown_send, ec);
    timeval linger{1, 0};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &linger, sizeof linger);
    char sink[16 * 1024];
    for (size_t drained = 0; drained < (1u << 20);) {
      const size_t n = socket.read_some(net::buffer(sink), ec);
      if (ec) break;
      drained += n;
    }
  }
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

}  // namespace qim::api
