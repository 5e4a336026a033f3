#include "tls/maybe_tls_stream.h"

#include <openssl/ssl.h>

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
