#pragma once
// The layer under a gateway WebSocket: a TCP stream that passes everything through, except that it gives a
// reason to the close frames Beast writes on its own. When Beast finds a protocol error in what a client
// sent (invalid UTF-8 in a text frame: 1007; a frame that breaks RFC 6455: 1002) it closes the connection
// itself with a bare code, and it echoes a client's close the same way; docs/protocol.md promises that
// every close names its problem. Beast has no option for that reason, so this layer recognises those
// frames on the way out: a server frame is never masked, so such a close is exactly the four bytes
// 0x88 0x02 <code>, written as one frame from a frame boundary (tracked over every byte written after
// the handshake). Frames the gateway closes with itself already carry their reason and pass unchanged.
//
// On the way in it watches the client's frame headers for the one violation Beast lets through: a 64-bit
// payload length with its most significant bit set (RFC 6455 section 5.2 forbids it; Beast would take it
// for a size and close with 1009). Such a length is rewritten, as it passes, into a non-canonical one
// (zero), which Beast refuses as a protocol error at the header: a 1002 with its reason, at once.
//
// Not thread-safe: used on its connection's strand like the WebSocket stream above it.

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tls/maybe_tls_stream.h"

namespace qim {

// The reason the gateway gives to a close Beast writes with `code` alone.
std::string_view reason_for_bare_close(uint16_t code);

// Where a WebSocket byte stream stands between frames (RFC 6455 section 5.2).
class FrameBoundary {
 public:
  bool at_start() const { return remaining_ == 0 && have_ == 0; }
  // Follows `n` bytes of the stream. With `rewrite_top_bit`, a 64-bit length whose top bit is set is
  // zeroed in place (all eight bytes; those not yet seen are zeroed as they come).
  void consume(uint8_t* p, size_t n, bool rewrite_top_bit);
  void consume(const uint8_t* p, size_t n) { consume(const_cast<uint8_t*>(p), n, false); }

 private:
  std::array<uint8_t, 14> header_{};
  size_t have_ = 0;         // header bytes seen of the current frame
  uint64_t remaining_ = 0;  // payload bytes still to come
  bool zeroing_ = false;    // rewriting the current header's 64-bit length
};

class CloseReasonStream {
 public:
  using next_layer_type = tls::MaybeTlsStream;  // TLS or plain TCP: this layer sees the plaintext
  using executor_type = next_layer_type::executor_type;

  // `tls` null: plain TCP; else TLS with that context (which must outlive the stream).
  CloseReasonStream(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls)
      : next_(std::move(socket), tls) {}

  executor_type get_executor() noexcept { return next_.get_executor(); }
  next_layer_type& next_layer() noexcept { return next_; }
  const next_layer_type& next_layer() const noexcept { return next_; }

  // From now on the bytes written and read are WebSocket frames (call once the handshake's response is
  // out and before the first frame is read).
  void start_frames() { frames_ = true; }
  // The reason given to Beast's bare 1009 (a frame over the read limit).
  void set_too_big_reason(std::string reason) { too_big_reason_ = std::move(reason); }

  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    namespace net = boost::asio;
    auto ex = net::get_associated_executor(handler, get_executor());
    next_.async_read_some(
        buffers,
        net::bind_executor(ex, [this, buffers, h = std::decay_t<Handler>(std::forward<Handler>(handler))](
                                   boost::beast::error_code ec, size_t n) mutable {
          if (frames_) {
            for (auto it = net::buffer_sequence_begin(buffers);
                 it != net::buffer_sequence_end(buffers) && n > 0; ++it) {
              net::mutable_buffer b(*it);
              const size_t k = std::min(n, b.size());
              inbound_.consume(static_cast<uint8_t*>(b.data()), k, true);
            }
          }
          h(ec, n);
        }));
  }

  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    namespace net = boost::asio;
    auto ex = net::get_associated_executor(handler, get_executor());
    if (frames_ && boundary_.at_start() && net::buffer_size(buffers) == 4) {
      std::array<uint8_t, 4> head{};
      net::buffer_copy(net::buffer(head), buffers);
      if (head[0] == 0x88 && head[1] == 0x02) {  // FIN + close, unmasked, a two-byte payload: the code
        auto frame = std::make_shared<std::string>(
            close_frame(static_cast<uint16_t>(head[2] << 8 | head[3]), too_big_reason_));
        net::async_write(
            next_, net::buffer(*frame),
            net::bind_executor(ex, [frame, h = std::decay_t<Handler>(std::forward<Handler>(handler))](
                                       boost::beast::error_code ec, size_t) mutable {
              h(ec, ec ? 0 : 4);  // to Beast, its four bytes went out
            }));
        return;
      }
    }
    next_.async_write_some(
        buffers,
        net::bind_executor(ex, [this, buffers, h = std::decay_t<Handler>(std::forward<Handler>(handler))](
                                   boost::beast::error_code ec, size_t n) mutable {
          if (frames_) feed(buffers, n);
          h(ec, n);
        }));
  }

 private:
  // A close frame with `code` and its reason (`too_big` for 1009 when set).
  static std::string close_frame(uint16_t code, std::string_view too_big);

  template <class ConstBuffers>
  void feed(const ConstBuffers& buffers, size_t n) {
    namespace net = boost::asio;
    for (auto it = net::buffer_sequence_begin(buffers); it != net::buffer_sequence_end(buffers) && n > 0;
         ++it) {
      net::const_buffer b(*it);
      const size_t k = std::min(n, b.size());
      boundary_.consume(static_cast<const uint8_t*>(b.data()), k);
      n -= k;
    }
  }

  next_layer_type next_;
  bool frames_ = false;
  FrameBoundary boundary_;  // of the bytes written
  FrameBoundary inbound_;   // of the bytes read
  std::string too_big_reason_;
};

// Teardown as for the stream below (TLS or TCP, found by argument-dependent lookup from Beast's WebSocket
// stream).
void teardown(boost::beast::role_type role, CloseReasonStream& stream, boost::beast::error_code& ec);

template <class TeardownHandler>
void async_teardown(boost::beast::role_type role, CloseReasonStream& stream, TeardownHandler&& handler) {
  tls::async_teardown(role, stream.next_layer(), std::forward<TeardownHandler>(handler));
}

}  // namespace qim
