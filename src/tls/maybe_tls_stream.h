#pragma once
// A byte stream that is either TLS over TCP or plain TCP, decided when it is made: the layer under the
// WebSocket of the gateway's connections and of the C++ client, so one connection type serves ws:// and
// wss:// alike. With TLS every read and write goes through OpenSSL and the handshake must be done (server
// or client side) before the first byte; without, they go to the TCP stream directly.
//
// Not thread-safe (one strand, like the WebSocket above it); not movable (the TLS stream refers to the TCP
// stream beside it), so it is constructed in place (e.g. by websocket::stream's constructor).

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <boost/container/small_vector.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/status.h"

namespace qim::tls {

class MaybeTlsStream {
 public:
  using next_layer_type = boost::beast::tcp_stream;
  using executor_type = next_layer_type::executor_type;
  using Tls = boost::asio::ssl::stream<boost::beast::tcp_stream&>;

  // `tls` null: plain TCP. The context must outlive the stream.
  template <class Arg>
  MaybeTlsStream(Arg&& socket_or_executor, boost::asio::ssl::context* tls)
      : tcp_(std::forward<Arg>(socket_or_executor)) {
    if (tls != nullptr) tls_.emplace(tcp_, *tls);
  }
  MaybeTlsStream(const MaybeTlsStream&) = delete;
  MaybeTlsStream& operator=(const MaybeTlsStream&) = delete;

  executor_type get_executor() noexcept { return tcp_.get_executor(); }
  next_layer_type& next_layer() noexcept { return tcp_; }
  const next_layer_type& next_layer() const noexcept { return tcp_; }
  bool is_tls() const { return tls_.has_value(); }
  Tls* tls() { return tls_ ? &*tls_ : nullptr; }

  // Client side: the TLS handshake with host name verification of `host` (a name or an IP address
  // literal, checked against the certificate's subjectAltName). Transport naming the failure (e.g.
  // "certificate verify failed"). Does nothing on a plain stream.
  Status client_handshake(const std::string& host);

  // Every asynchronous read and write, whatever the caller's buffer and handler types, goes through the
  // two non-template functions below (maybe_tls_stream.cc): the TLS and TCP operations are compiled once
  // there instead of once per WebSocket operation and handler above (that made one file of the gateway
  // take minutes to compile). The price is one small allocation per operation for the erased handler; its
  // allocator and cancellation slot are kept, and its executor is passed beside it as an executor_type
  // (Boost 1.81's type-erased completion executor cannot be posted to with blocking.never, as
  // beast::tcp_stream does).
  using IoHandler = boost::asio::any_completion_handler<void(boost::system::error_code, std::size_t)>;
  using ReadBuffers = boost::container::small_vector<boost::asio::mutable_buffer, 4>;
  using WriteBuffers = boost::container::small_vector<boost::asio::const_buffer, 4>;

  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    executor_type ex = boost::asio::get_associated_executor(handler, get_executor());
    read_some_erased(
        ReadBuffers(boost::asio::buffer_sequence_begin(buffers), boost::asio::buffer_sequence_end(buffers)),
        std::move(ex), IoHandler(std::forward<Handler>(handler)));
  }

  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    executor_type ex = boost::asio::get_associated_executor(handler, get_executor());
    write_some_erased(
        WriteBuffers(boost::asio::buffer_sequence_begin(buffers), boost::asio::buffer_sequence_end(buffers)),
        std::move(ex), IoHandler(std::forward<Handler>(handler)));
  }

  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, boost::system::error_code& ec) {
    return tls_ ? tls_->read_some(buffers, ec) : tcp_.socket().read_some(buffers, ec);
  }
  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    return tls_ ? tls_->read_some(buffers) : tcp_.socket().read_some(buffers);
  }
  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers, boost::system::error_code& ec) {
    return tls_ ? tls_->write_some(buffers, ec) : tcp_.socket().write_some(buffers, ec);
  }
  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers) {
    return tls_ ? tls_->write_some(buffers) : tcp_.socket().write_some(buffers);
  }

 private:
  void read_some_erased(ReadBuffers buffers, executor_type handler_executor, IoHandler handler);
  void write_some_erased(WriteBuffers buffers, executor_type handler_executor, IoHandler handler);

  boost::beast::tcp_stream tcp_;
  std::optional<Tls> tls_;
};

// The WebSocket's teardown (found by argument-dependent lookup): TLS sends its close_notify first (bounded
// in time: a peer that never answers it does not hold the connection), then the TCP stream goes as usual.
void teardown(boost::beast::role_type role, MaybeTlsStream& stream, boost::beast::error_code& ec);

template <class TeardownHandler>
void async_teardown(boost::beast::role_type role, MaybeTlsStream& stream, TeardownHandler&& handler) {
  if (auto* tls = stream.tls()) {
    stream.next_layer().expires_after(std::chrono::seconds(5));
    tls->async_shutdown([&stream, h = std::decay_t<TeardownHandler>(std::forward<TeardownHandler>(handler))](
                            boost::beast::error_code) mutable {
      boost::beast::error_code ignored;
      stream.next_layer().socket().close(ignored);
      h(boost::beast::error_code{});
    });
    return;
  }
  using boost::beast::websocket::async_teardown;
  async_teardown(role, stream.next_layer(), std::forward<TeardownHandler>(handler));
}

}  // namespace qim::tls
