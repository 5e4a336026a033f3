#include "webhooks/signature.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace qim {

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<std::string> decode_webhook_secret(std::string_view secret) {
  if (secret.starts_with("whsec_")) secret.remove_prefix(6);
  auto bad = [](const std::string& why) {
    return Error(Errc::kInvalidArgument,
                 "webhook secret: " + why + " (expected whsec_<base64 of 16..64 bytes>)");
  };
  if (secret.empty() || secret.size() % 4 != 0) return bad("not base64 (length)");
  std::string key(secret.size() / 4 * 3, '\0');
  // EVP_DecodeBlock does not take the padding off: the bytes it counts for "=" are removed below.
  const int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(key.data()),
                      reinterpret_cast<const unsigned char*>(secret.data()), static_cast<int>(secret.size()));
  if (n < 0) return bad("not base64");
  size_t padding = 0;
  for (size_t i = secret.size(); i > 0 && secret[i - 1] == '='; --i) ++padding;
  if (padding > 2) return bad("not base64 (padding)");
  key.resize(static_cast<size_t>(n) - padding);
  if (key.size() < 16) return bad("key shorter than 16 bytes");
  if (key.size() > 64) return bad("key longer than 64 bytes");
  return key;
}

std::string webhook_signature(std::string_view key, std::string_view id, int64_t timestamp_s,
                              std::string_view body) {
  std::string signed_content;
  signed_content.reserve(id.size() + body.size() + 24);
  signed_content.append(id).append(".").append(std::to_string(timestamp_s)).append(".").append(body);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(signed_content.data()), signed_content.size(), mac, &mac_len);
  return "v1," + base64_encode(std::string_view(reinterpret_cast<const char*>(mac), mac_len));
}

}  // namespace qim
