// Our Web Push cryptography against a receiver written here from the RFCs (HMAC-based HKDF, the user
// agent's side of the ECDH): the interoperability with a maintained library is the SDK's test
// (clients/js/test/push.test.mjs decrypts with npm http_ece and verifies the VAPID JWT with Node's crypto).
#include "push/web_push_crypto.h"

#include <gtest/gtest.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "auth/base64url.h"

namespace qim {
namespace {

std::string hmac(std::string_view key, std::string_view data) {
  unsigned char out[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}
// RFC 5869 with one block of output (all this scheme needs).
std::string hkdf(std::string_view salt, std::string_view ikm, std::string info, size_t len) {
  const std::string prk = hmac(salt, ikm);
  info.push_back('\x01');
  return hmac(prk, info).substr(0, len);
}

std::string ecdh(const P256Key& mine, std::string_view peer_raw) {
  EVP_PKEY_CTX* pc = EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr);
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string("group", const_cast<char*>("prime256v1"), 0),
      OSSL_PARAM_construct_octet_string("pub", const_cast<char*>(peer_raw.data()), peer_raw.size()),
      OSSL_PARAM_construct_end()};
  EVP_PKEY* peer = nullptr;
  EXPECT_EQ(EVP_PKEY_fromdata_init(pc), 1);
  EXPECT_EQ(EVP_PKEY_fromdata(pc, &peer, EVP_PKEY_PUBLIC_KEY, params), 1);
  EVP_PKEY_CTX_free(pc);
  EVP_PKEY_CTX* d = EVP_PKEY_CTX_new(mine.get(), nullptr);
  std::string out(32, '\0');
  size_t len = 32;
  EXPECT_EQ(EVP_PKEY_derive_init(d), 1);
  EXPECT_EQ(EVP_PKEY_derive_set_peer(d, peer), 1);
  EXPECT_EQ(EVP_PKEY_derive(d, reinterpret_cast<unsigned char*>(out.data()), &len), 1);
  EVP_PKEY_CTX_free(d);
  EVP_PKEY_free(peer);
  return out;
}

TEST(WebPushCryptoTest, TheUserAgentDecryptsWhatWeEncrypt) {
  const P256Key ua = P256Key::generate().value();
  const std::string auth = "0123456789abcdef";
  const std::string plaintext = R"({"type":"message","preview":"héllo"})";
  const std::string body = encrypt_aes128gcm(ua.public_raw(), auth, plaintext).value();
  // The header: salt, rs = 4096, idlen = 65, the sender's key.
  ASSERT_GT(body.size(), 86u + 16u);
  const std::string salt = body.substr(0, 16);
  EXPECT_EQ(body.substr(16, 4), std::string("\x00\x00\x10\x00", 4));
  ASSERT_EQ(static_cast<unsigned char>(body[20]), 65);
  const std::string as_public = body.substr(21, 65);
  const std::string record = body.substr(86);

  const std::string shared = ecdh(ua, as_public);
  std::string key_info = std::string("WebPush: info") + '\0' + ua.public_raw() + as_public;
  const std::string ikm = hkdf(auth, shared, key_info, 32);
  const std::string cek = hkdf(salt, ikm, std::string("Content-Encoding: aes128gcm") + '\0', 16);
  const std::string nonce = hkdf(salt, ikm, std::string("Content-Encoding: nonce") + '\0', 12);

  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  std::string out(record.size() - 16, '\0');
  int len = 0, fin = 0;
  ASSERT_EQ(
      EVP_DecryptInit_ex(c, EVP_aes_128_gcm(), nullptr, reinterpret_cast<const unsigned char*>(cek.data()),
                         reinterpret_cast<const unsigned char*>(nonce.data())),
      1);
  ASSERT_EQ(
      EVP_DecryptUpdate(c, reinterpret_cast<unsigned char*>(out.data()), &len,
                        reinterpret_cast<const unsigned char*>(record.data()), static_cast<int>(out.size())),
      1);
  std::string tag = record.substr(record.size() - 16);
  ASSERT_EQ(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, tag.data()), 1);
  ASSERT_EQ(EVP_DecryptFinal_ex(c, reinterpret_cast<unsigned char*>(out.data()) + len, &fin), 1)
      << "the tag does not verify";
  EVP_CIPHER_CTX_free(c);
  ASSERT_EQ(out.back(), '\x02');  // the last record's delimiter
  out.pop_back();
  EXPECT_EQ(out, plaintext);
}

TEST(WebPushCryptoTest, RefusesBadKeysAndOversizePayloads) {
  const P256Key ua = P256Key::generate().value();
  EXPECT_FALSE(encrypt_aes128gcm("short", "0123456789abcdef", "x").ok());
  EXPECT_FALSE(encrypt_aes128gcm(ua.public_raw(), "short", "x").ok());
  std::string not_on_curve = ua.public_raw();
  not_on_curve[40] ^= 1;
  EXPECT_FALSE(encrypt_aes128gcm(not_on_curve, "0123456789abcdef", "x").ok());
  EXPECT_FALSE(encrypt_aes128gcm(ua.public_raw(), "0123456789abcdef", std::string(3994, 'x')).ok());
  EXPECT_TRUE(encrypt_aes128gcm(ua.public_raw(), "0123456789abcdef", std::string(3993, 'x')).ok());
}

TEST(WebPushCryptoTest, TheVapidJwtVerifiesWithTheAdvertisedKey) {
  const P256Key vapid = P256Key::generate().value();
  auto made = vapid_authorization(vapid, "https://push.example.net:8443/wpush/abc?x=1",
                                  "mailto:ops@example.com", 1234);
  ASSERT_TRUE(made.ok()) << made.error().to_string();
  std::string header = *made;
  ASSERT_TRUE(header.starts_with("vapid t="));
  const size_t k = header.find(", k=");
  ASSERT_NE(k, std::string::npos);
  EXPECT_EQ(base64url_decode(header.substr(k + 4)).value(), vapid.public_raw());
  const std::string jwt = header.substr(8, k - 8);
  const size_t dot1 = jwt.find('.'), dot2 = jwt.rfind('.');
  EXPECT_EQ(base64url_decode(jwt.substr(0, dot1)).value(), R"({"typ":"JWT","alg":"ES256"})");
  EXPECT_EQ(base64url_decode(jwt.substr(dot1 + 1, dot2 - dot1 - 1)).value(),
            R"({"aud":"https://push.example.net:8443","exp":1234,"sub":"mailto:ops@example.com"})");
  const std::string rs = base64url_decode(jwt.substr(dot2 + 1)).value();
  ASSERT_EQ(rs.size(), 64u);
  ECDSA_SIG* sig = ECDSA_SIG_new();
  ECDSA_SIG_set0(sig, BN_bin2bn(reinterpret_cast<const unsigned char*>(rs.data()), 32, nullptr),
                 BN_bin2bn(reinterpret_cast<const unsigned char*>(rs.data()) + 32, 32, nullptr));
  unsigned char* der = nullptr;
  const int der_len = i2d_ECDSA_SIG(sig, &der);
  ECDSA_SIG_free(sig);
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  const std::string input = jwt.substr(0, dot2);
  ASSERT_EQ(EVP_DigestVerifyInit(md, nullptr, EVP_sha256(), nullptr, vapid.get()), 1);
  EXPECT_EQ(EVP_DigestVerify(md, der, static_cast<size_t>(der_len),
                             reinterpret_cast<const unsigned char*>(input.data()), input.size()),
            1);
  EVP_MD_CTX_free(md);
  OPENSSL_free(der);
}

TEST(WebPushCryptoTest, KeysSurviveTheirPem) {
  const P256Key k = P256Key::generate().value();
  const P256Key back = P256Key::from_pem(k.private_pem().value()).value();
  EXPECT_EQ(back.public_raw(), k.public_raw());
  EXPECT_FALSE(P256Key::from_pem("not a key").ok());
  EXPECT_EQ(endpoint_origin("https://a.example/x/y").value(), "https://a.example");
  EXPECT_FALSE(endpoint_origin("ftp://a").ok());
}

}  // namespace
}  // namespace qim
