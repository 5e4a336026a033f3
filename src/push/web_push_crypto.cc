#include "push/web_push_crypto.h"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include "auth/base64url.h"

namespace qim {

namespace {

Error ssl_error(std::string_view what) {
  char buf[256] = "unknown";
  if (unsigned long e = ERR_get_error(); e != 0) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return Error(Errc::kInvariant, std::string(what) + ": " + buf);
}

struct CtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, CtxFree>;

Result<std::string> raw_public(EVP_PKEY* key) {
  unsigned char buf[65];
  size_t len = 0;
  if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, buf, sizeof buf, &len) != 1 ||
      len != 65)
    return ssl_error("the P-256 public key");
  return std::string(reinterpret_cast<char*>(buf), len);
}

bool is_p256(EVP_PKEY* key) {
  char group[64] = {};
  size_t len = 0;
  return EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &len) == 1 &&
         std::string_view(group, len) == "prime256v1";
}

// A public-only key from an uncompressed point.
Result<std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)>> public_key(std::string_view raw) {
  std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)> out(nullptr, EVP_PKEY_free);
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, const_cast<char*>("prime256v1"), 0),
      OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, const_cast<char*>(raw.data()), raw.size()),
      OSSL_PARAM_construct_end()};
  EVP_PKEY* key = nullptr;
  if (!ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params) != 1) {
    ERR_clear_error();
    return Error(Errc::kInvalidArgument, "not a P-256 public point");
  }
  out.reset(key);
  return out;
}

Result<std::string> hkdf(std::string_view salt, std::string_view ikm, std::string_view info, size_t len) {
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  if (kdf == nullptr) return ssl_error("HKDF");
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  EVP_KDF_free(kdf);
  if (ctx == nullptr) return ssl_error("HKDF");
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(ikm.data()), ikm.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()), salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(info.data()), info.size()),
      OSSL_PARAM_construct_end()};
  std::string out(len, '\0');
  const int ok = EVP_KDF_derive(ctx, reinterpret_cast<unsigned char*>(out.data()), len, params);
  EVP_KDF_CTX_free(ctx);
  if (ok != 1) return ssl_error("HKDF");
  return out;
}

}  // namespace

void P256Key::Free::operator()(EVP_PKEY* k) const {
  EVP_PKEY_free(k);
}

Result<P256Key> P256Key::generate() {
  P256Key k;
  k.key_.reset(EVP_EC_gen("P-256"));
  if (!k.key_) return ssl_error("generating a P-256 key");
  QIM_ASSIGN_OR_RETURN(k.public_raw_, raw_public(k.key_.get()));
  return k;
}

Result<P256Key> P256Key::from_pem(std::string_view pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return ssl_error("reading a PEM key");
  P256Key k;
  k.key_.reset(PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  if (!k.key_ || !is_p256(k.key_.get())) {
    ERR_clear_error();
    return Error(Errc::kInvalidArgument, "not a PEM P-256 (prime256v1) private key");
  }
  QIM_ASSIGN_OR_RETURN(k.public_raw_, raw_public(k.key_.get()));
  return k;
}

Result<std::string> P256Key::private_pem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr ||
      PEM_write_bio_PrivateKey(bio, key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    BIO_free(bio);
    return ssl_error("writing a PEM key");
  }
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(len));
  BIO_free(bio);
  return out;
}

Result<std::string> es256_jwt(const P256Key& key, std::string_view header_json,
                              std::string_view claims_json) {
  const std::string input = base64url_encode(header_json) + "." + base64url_encode(claims_json);
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  size_t der_len = 0;
  std::string der(80, '\0');
  bool ok = md != nullptr && EVP_DigestSignInit(md, nullptr, EVP_sha256(), nullptr, key.get()) == 1 &&
            EVP_DigestSign(md, reinterpret_cast<unsigned char*>(der.data()), &(der_len = der.size()),
                           reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(md);
  if (!ok) return ssl_error("ES256 signature");
  // JWS wants r || s, 32 bytes each; OpenSSL gives DER.
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der_len));
  if (sig == nullptr) return ssl_error("ES256 signature");
  unsigned char rs[64];
  ok = BN_bn2binpad(ECDSA_SIG_get0_r(sig), rs, 32) == 32 &&
       BN_bn2binpad(ECDSA_SIG_get0_s(sig), rs + 32, 32) == 32;
  ECDSA_SIG_free(sig);
  if (!ok) return ssl_error("ES256 signature");
  return input + "." + base64url_encode(std::string_view(reinterpret_cast<char*>(rs), sizeof rs));
}

Result<std::string> endpoint_origin(std::string_view endpoint) {
  size_t scheme = endpoint.starts_with("https://") ? 8 : endpoint.starts_with("http://") ? 7 : 0;
  if (scheme == 0) return Error(Errc::kInvalidArgument, "an endpoint must be an http(s) URL");
  const size_t slash = endpoint.find('/', scheme);
  const std::string_view origin = endpoint.substr(0, slash);
  if (origin.size() == scheme) return Error(Errc::kInvalidArgument, "an endpoint needs a host");
  return std::string(origin);
}

Result<std::string> vapid_authorization(const P256Key& vapid, std::string_view endpoint,
                                        std::string_view subject, int64_t exp_s) {
  QIM_ASSIGN_OR_RETURN(auto aud, endpoint_origin(endpoint));
  // The values are URLs and a mailto:, from our own configuration: no character needs escaping in JSON
  // except these two, refused.
  if (subject.find_first_of("\"\\") != std::string_view::npos ||
      aud.find_first_of("\"\\") != std::string::npos)
    return Error(Errc::kInvalidArgument, "a VAPID subject or audience with a quote or backslash");
  const std::string claims = "{\"aud\":\"" + aud + "\",\"exp\":" + std::to_string(exp_s) + ",\"sub\":\"" +
                             std::string(subject) + "\"}";
  QIM_ASSIGN_OR_RETURN(auto jwt, es256_jwt(vapid, R"({"typ":"JWT","alg":"ES256"})", claims));
  return "vapid t=" + jwt + ", k=" + base64url_encode(vapid.public_raw());
}

Result<std::string> encrypt_aes128gcm(std::string_view ua_public, std::string_view auth,
                                      std::string_view plaintext, const P256Key* ephemeral,
                                      std::string_view salt_in) {
  constexpr uint32_t kRecordSize = 4096;
  if (ua_public.size() != 65 || auth.size() != 16)
    return Error(Errc::kInvalidArgument, "a subscription's p256dh is 65 bytes and its auth 16");
  if (plaintext.size() > kRecordSize - 16 - 1 - 86)
    return Error(Errc::kInvalidArgument, "a Web Push payload is at most 3993 bytes");
  std::optional<P256Key> fresh;
  if (ephemeral == nullptr) {
    QIM_ASSIGN_OR_RETURN(fresh, P256Key::generate());
    ephemeral = &*fresh;
  }
  std::string salt(salt_in);
  if (salt.empty()) {
    salt.assign(16, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(salt.data()), 16) != 1) return ssl_error("random salt");
  }
  if (salt.size() != 16) return Error(Errc::kInvalidArgument, "a salt is 16 bytes");
  QIM_ASSIGN_OR_RETURN(auto peer, public_key(ua_public));
  // ECDH between the ephemeral key and the user agent's.
  PkeyCtx dctx(EVP_PKEY_CTX_new(ephemeral->get(), nullptr));
  std::string shared(32, '\0');
  size_t shared_len = shared.size();
  if (!dctx || EVP_PKEY_derive_init(dctx.get()) != 1 ||
      EVP_PKEY_derive_set_peer(dctx.get(), peer.get()) != 1 ||
      EVP_PKEY_derive(dctx.get(), reinterpret_cast<unsigned char*>(shared.data()), &shared_len) != 1 ||
      shared_len != 32)
    return ssl_error("ECDH");
  const std::string& as_public = ephemeral->public_raw();
  std::string key_info = "WebPush: info";
  key_info.push_back('\0');
  key_info.append(ua_public);
  key_info.append(as_public);
  QIM_ASSIGN_OR_RETURN(auto ikm, hkdf(auth, shared, key_info, 32));
  QIM_ASSIGN_OR_RETURN(auto cek, hkdf(salt, ikm, std::string_view("Content-Encoding: aes128gcm\0", 28), 16));
  QIM_ASSIGN_OR_RETURN(auto nonce, hkdf(salt, ikm, std::string_view("Content-Encoding: nonce\0", 24), 12));

  std::string record(plaintext);
  record.push_back('\x02');  // the last (and only) record's delimiter, no padding
  std::string out;
  out.reserve(16 + 4 + 1 + 65 + record.size() + 16);
  out.append(salt);
  out.push_back(static_cast<char>(kRecordSize >> 24));
  out.push_back(static_cast<char>((kRecordSize >> 16) & 0xff));
  out.push_back(static_cast<char>((kRecordSize >> 8) & 0xff));
  out.push_back(static_cast<char>(kRecordSize & 0xff));
  out.push_back(static_cast<char>(as_public.size()));
  out.append(as_public);
  const size_t at = out.size();
  out.resize(at + record.size() + 16);
  auto* dst = reinterpret_cast<unsigned char*>(out.data() + at);
  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  int len = 0, fin = 0;
  const bool ok =
      c != nullptr &&
      EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), nullptr, reinterpret_cast<const unsigned char*>(cek.data()),
                         reinterpret_cast<const unsigned char*>(nonce.data())) == 1 &&
      EVP_EncryptUpdate(c, dst, &len, reinterpret_cast<const unsigned char*>(record.data()),
                        static_cast<int>(record.size())) == 1 &&
      EVP_EncryptFinal_ex(c, dst + len, &fin) == 1 &&
      EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, dst + record.size()) == 1;
  EVP_CIPHER_CTX_free(c);
  if (!ok) return ssl_error("AES-128-GCM");
  return out;
}

}  // namespace qim
