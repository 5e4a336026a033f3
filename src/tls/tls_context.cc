#include "tls/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <filesystem>
#include <fstream>

namespace qim::tls {

namespace ssl = boost::asio::ssl;

namespace {

// Whether `path` can be opened for reading: a missing file is named as such, not as "bad PEM".
Status readable(const std::string& var, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Error(Errc::kConfig, var + "='" + path + "': no such file");
  std::ifstream in(path);
  if (!in) return Error(Errc::kConfig, var + "='" + path + "': cannot be read");
  return {};
}

std::string openssl_reason(const boost::system::error_code& ec) {
  std::string why = ec.message();
  ERR_clear_error();
  return why;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> server_context(const std::string& cert_file,
                                                     const std::string& key_file) {
  QIM_RETURN_IF_ERROR(readable("QIM_TLS_CERT", cert_file));
  QIM_RETURN_IF_ERROR(readable("QIM_TLS_KEY", key_file));
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec)
    return Error(Errc::kConfig, "QIM_TLS_CERT='" + cert_file + "': not a PEM certificate chain (" +
                                    openssl_reason(ec) + ")");
  ctx->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec && ec.category() == boost::asio::error::get_ssl_category() &&
      ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH) {
    ERR_clear_error();
    return Error(Errc::kConfig, "QIM_TLS_KEY='" + key_file +
                                    "' is not the key of the certificate in "
                                    "QIM_TLS_CERT='" +
                                    cert_file + "'");
  }
  if (ec)
    return Error(Errc::kConfig,
                 "QIM_TLS_KEY='" + key_file + "': not a PEM private key (" + openssl_reason(ec) + ")");
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return Error(Errc::kConfig, "QIM_TLS_KEY='" + key_file +
                                    "' is not the key of the certificate in "
                                    "QIM_TLS_CERT='" +
                                    cert_file + "'");
  }
  return ctx;
}

Result<std::shared_ptr<ssl::context>> client_context(const std::string& ca_file) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  if (!ca_file.empty()) {
    QIM_RETURN_IF_ERROR(readable("the CA file", ca_file));
    ctx->load_verify_file(ca_file, ec);
    if (ec)
      return Error(Errc::kConfig,
                   "CA file '" + ca_file + "': no PEM certificate in it (" + openssl_reason(ec) + ")");
  } else {
    ctx->set_default_verify_paths(ec);
    if (ec) return Error(Errc::kConfig, "the system's trust store cannot be loaded: " + openssl_reason(ec));
  }
  ctx->set_verify_mode(ssl::verify_peer);
  return ctx;
}

}  // namespace qim::tls
