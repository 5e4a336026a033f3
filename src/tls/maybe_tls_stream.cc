#include "tls/maybe_tls_stream.h"

#include <openssl/ssl.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

namespace qim::tls {

Status MaybeTlsStream::client_handshake(const std::string& host) {
  if (!tls_) return {};
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  // SNI carries names only; an IP address literal is sent without it.
  if (ec && SSL_set_tlsext_host_name(tls_->native_handle(), host.c_str()) != 1)
    return Error(Errc::kTransport, "TLS: cannot set the server name '" + host + "'");
  tls_->set_verify_mode(boost::asio::ssl::verify_peer);
  tls_->set_verify_callback(boost::asio::ssl::host_name_verification(host));
  tls_->handshake(boost::asio::ssl::stream_base::client, ec);
  if (ec) return Error(Errc::kTransport, "TLS handshake with " + host + ": " + ec.message());
  return {};
}

void MaybeTlsStream::read_some_erased(ReadBuffers buffers, executor_type handler_executor,
                                      IoHandler handler) {
  // The operation keeps its own copy of `buffers`.
  auto bound = boost::asio::bind_executor(std::move(handler_executor), std::move(handler));
  if (tls_) {
    tls_->async_read_some(buffers, std::move(bound));
  } else {
    tcp_.async_read_some(buffers, std::move(bound));
  }
}

void MaybeTlsStream::write_some_erased(WriteBuffers buffers, executor_type handler_executor,
                                       IoHandler handler) {
  auto bound = boost::asio::bind_executor(std::move(handler_executor), std::move(handler));
  if (tls_) {
    tls_->async_write_some(buffers, std::move(bound));
  } else {
    tcp_.async_write_some(buffers, std::move(bound));
  }
}

void teardown(boost::beast::role_type role, MaybeTlsStream& stream, boost::beast::error_code& ec) {
  if (auto* tls = stream.tls()) {
    tls->shutdown(ec);
    boost::beast::error_code ignored;
    stream.next_layer().socket().close(ignored);
    ec = {};
    return;
  }
  using boost::beast::websocket::teardown;
  teardown(role, stream.next_layer().socket(), ec);
}

}  // namespace qim::tls
