#include "tls/dev_cert.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace qim::tls {

namespace fs = std::filesystem;

namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(FILE* f) const { std::fclose(f); }
};
template <class T>
using Owned = std::unique_ptr<T, Free>;

Status add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1)
    return Error(Errc::kIo, std::string("dev certificate: cannot add extension ") + value);
  return {};
}

// Writes with `write` to `path`.tmp (created with `mode`), then renames it over `path`.
template <class Write>
Status write_pem(const fs::path& path, mode_t mode, Write write) {
  const fs::path tmp = path.string() + ".tmp";
  const mode_t old = ::umask(0);
  FILE* raw = std::fopen(tmp.c_str(), "w");
  ::umask(old);
  if (raw == nullptr) return Error(Errc::kIo, "cannot create " + tmp.string());
  ::chmod(tmp.c_str(), mode);
  {
    Owned<FILE> f(raw);
    if (write(f.get()) != 1) return Error(Errc::kIo, "cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Error(Errc::kIo, "cannot rename " + tmp.string() + ": " + ec.message());
  return {};
}

}  // namespace

Result<DevCertFiles> ensure_dev_cert(const std::string& dir) {
  const fs::path d(dir);
  DevCertFiles files{(d / "dev-cert.pem").string(), (d / "dev-key.pem").string()};
  std::error_code ec;
  if (fs::exists(files.cert, ec) && fs::exists(files.key, ec)) return files;
  fs::create_directories(d, ec);
  if (ec) return Error(Errc::kIo, "cannot create " + dir + ": " + ec.message());

  Owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (!key) return Error(Errc::kIo, "dev certificate: cannot generate a P-256 key");
  Owned<X509> cert(X509_new());
  if (!cert) return Error(Errc::kIo, "dev certificate: out of memory");
  X509_set_version(cert.get(), 2);
  // A random serial: browsers refuse two certificates of one issuer with the same serial.
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return Error(Errc::kIo, "dev certificate: no randomness");
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("QIM development certificate"), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  QIM_RETURN_IF_ERROR(add_extension(cert.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1"));
  QIM_RETURN_IF_ERROR(add_extension(cert.get(), NID_basic_constraints, "critical,CA:TRUE"));
  QIM_RETURN_IF_ERROR(add_extension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign"));
  QIM_RETURN_IF_ERROR(add_extension(cert.get(), NID_ext_key_usage, "serverAuth"));
  QIM_RETURN_IF_ERROR(add_extension(cert.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0)
    return Error(Errc::kIo, "dev certificate: cannot sign");

  // The key first: a certificate without its key is of no use, the reverse is rewritten next time.
  QIM_RETURN_IF_ERROR(write_pem(files.key, 0600, [&](FILE* f) {
    return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  }));
  QIM_RETURN_IF_ERROR(write_pem(files.cert, 0644, [&](FILE* f) { return PEM_write_X509(f, cert.get()); }));
  return files;
}

}  // namespace qim::tls
