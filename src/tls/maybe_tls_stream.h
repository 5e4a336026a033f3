#pragma once
// A byte stream that is either TLS over TCP or plain TCP, decided when it is made: the layer under the
// WebSocket of the gateway's connections and of the C++ client, so one connection type serves ws:// and
// wss:// alike. With TLS every read and write goes through OpenSSL and the handshake must be done (server
// or client side) before the first byte; without, they go to the TCP stream directly.
//
// Not thread-safe (one strand, like the WebSocket above it); not movable (the TLS stream refers to the TCP
// stream beside it), so it is constructed in place (e.g. by websocket::stream's constructor).

#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/teardown.hpp>

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

  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      tcp_.async_read_some(buffers, std::forward<Handler>(handler));
    }
  }

  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    } else {
      tcp_.async_write_some(buffers, std::forward<Handler>(handler));
    }
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
