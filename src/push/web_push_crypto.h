#pragma once
// The cryptography of Web Push (docs/push.md), with OpenSSL:
//  - VAPID (RFC 8292): the application server's P-256 key; each request carries
//    `Authorization: vapid t=<JWT ES256 {aud: the push service's origin, exp, sub}>, k=<public key>`.
//  - Message encryption (RFC 8291, content coding aes128gcm of RFC 8188): an ephemeral P-256 key agreed
//    with the subscription's p256dh key (ECDH), mixed with its auth secret (HKDF-SHA256), one record.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace qim {

// A P-256 key pair (the VAPID key, or an ephemeral key of the encryption).
class P256Key {
 public:
  // A new random key. Invariant if OpenSSL fails.
  static Result<P256Key> generate();
  // From a PEM private key (SEC1 "EC PRIVATE KEY" or PKCS#8). InvalidArgument if it is not a P-256 key.
  static Result<P256Key> from_pem(std::string_view pem);
  // The PKCS#8 PEM of the private key.
  Result<std::string> private_pem() const;
  // The uncompressed public point (65 bytes: 0x04 || X || Y).
  const std::string& public_raw() const { return public_raw_; }
  EVP_PKEY* get() const { return key_.get(); }

 private:
  struct Free {
    void operator()(EVP_PKEY* k) const;
  };
  std::unique_ptr<EVP_PKEY, Free> key_;
  std::string public_raw_;
};

// The ES256 JWS (RFC 7515 compact form, signature r || s) of `claims_json` with header `header_json`.
Result<std::string> es256_jwt(const P256Key& key, std::string_view header_json, std::string_view claims_json);

// The push service's origin of an endpoint ("https://push.example.net"), the VAPID JWT's audience.
// InvalidArgument for anything but an http(s) URL.
Result<std::string> endpoint_origin(std::string_view endpoint);

// The Authorization header's value of a Web Push request to `endpoint`, valid until `exp_s` (seconds since
// the epoch; RFC 8292: at most 24 h ahead).
Result<std::string> vapid_authorization(const P256Key& vapid, std::string_view endpoint,
                                        std::string_view subject, int64_t exp_s);

// The aes128gcm body of `plaintext` for a subscription (ua_public: 65 bytes, auth: 16 bytes): salt(16) ||
// rs(4) || idlen(1) || keyid (the ephemeral public key, 65) || one record. `ephemeral` and `salt` may be
// given (tests); otherwise fresh ones. InvalidArgument for a bad subscription key or a plaintext over
// 3993 bytes (one 4096-byte record); Invariant if OpenSSL fails.
Result<std::string> encrypt_aes128gcm(std::string_view ua_public, std::string_view auth,
                                      std::string_view plaintext, const P256Key* ephemeral = nullptr,
                                      std::string_view salt = {});

}  // namespace qim
