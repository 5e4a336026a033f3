#include "auth/token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>
#include <vector>

#include "auth/base64url.h"
#include "core/utc_time.h"

namespace qim {

namespace {

constexpr std::string_view kPayloadVersion = "qim1";
constexpr size_t kMacBytes = 32;

std::string hmac_sha256(std::string_view secret, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  return std::string(reinterpret_cast<const char*>(mac), len);
}

Error malformed(const std::string& why) {
  return Error(Errc::kUnauthenticated, "token malformed: " + why);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

Status check_secret(std::string_view secret) {
  if (secret.empty()) return Error(Errc::kConfig, "QIM_AUTH_SECRET is empty: tokens cannot be signed");
  return {};
}

}  // namespace

Result<std::string> mint_token(std::string_view secret, const UserId& user, const DeviceId& device,
                               int64_t ttl_ms, const Clock& clock) {
  QIM_RETURN_IF_ERROR(check_secret(secret));
  if (ttl_ms <= 0)
    return Error(Errc::kInvalidArgument, "token ttl must be positive, got " + std::to_string(ttl_ms));
  // The verifier refuses names outside the alphabet, so a token naming one would be useless; and a user
  // whose name could hold ':' would make conversation ids ambiguous (core/name.h).
  QIM_RETURN_IF_ERROR(check_name(UserTag::kKind, user.str(), UserId::kMaxBytes));
  QIM_RETURN_IF_ERROR(check_name(DeviceTag::kKind, device.str(), DeviceId::kMaxBytes));
  const int64_t now = clock.now_ms();
  std::string payload = std::string(kPayloadVersion) + "|" + user.str() + "|" + device.str() + "|" +
                        std::to_string(now + ttl_ms) + "|" + std::to_string(now);
  std::string head = base64url_encode(payload);
  return head + "." + base64url_encode(hmac_sha256(secret, head));
}

Result<Principal> verify_token(std::string_view secret, std::string_view token, const Clock& clock) {
  QIM_RETURN_IF_ERROR(check_secret(secret));
  if (token.empty()) return malformed("empty");
  if (token.size() > kMaxTokenBytes) return malformed("over " + std::to_string(kMaxTokenBytes) + " bytes");
  auto dot = token.find('.');
  if (dot == std::string_view::npos || token.find('.', dot + 1) != std::string_view::npos)
    return malformed("expected two base64url parts separated by one '.'");
  std::string_view head = token.substr(0, dot);
  auto mac = base64url_decode(token.substr(dot + 1));
  if (!mac || mac->size() != kMacBytes) return malformed("the signature part is not a base64url SHA-256 MAC");
  auto payload = base64url_decode(head);
  if (!payload) return malformed("the payload part is not base64url");

  std::string expected = hmac_sha256(secret, head);
  if (CRYPTO_memcmp(expected.data(), mac->data(), kMacBytes) != 0)
    return Error(
        Errc::kUnauthenticated,
        "token signature does not match: it was signed with another secret (minted for another data "
        "directory or QIM_AUTH_SECRET?); mint it with `qim token --data-dir <this server's data dir>`");

  // Signed by us, so a bad payload is a minting bug or a changed format; still never trusted blindly.
  auto fields = split(*payload, '|');
  // Four fields: a token minted before the issued-at field (issued_at_ms stays 0).
  if ((fields.size() != 4 && fields.size() != 5) || fields[0] != kPayloadVersion)
    return malformed("unknown payload format");
  auto user = UserId::parse(fields[1]);
  if (!user.ok()) return malformed(user.error().message());
  auto device = DeviceId::parse(fields[2]);
  if (!device.ok()) return malformed(device.error().message());
  int64_t expiry = 0;
  auto [end, ec] = std::from_chars(fields[3].data(), fields[3].data() + fields[3].size(), expiry);
  if (ec != std::errc() || end != fields[3].data() + fields[3].size()) return malformed("bad expiry");
  int64_t issued_at = 0;
  if (fields.size() == 5) {
    auto [iend, iec] = std::from_chars(fields[4].data(), fields[4].data() + fields[4].size(), issued_at);
    if (iec != std::errc() || iend != fields[4].data() + fields[4].size() || issued_at < 0)
      return malformed("bad issued-at");
  }

  int64_t now = clock.now_ms();
  if (now >= expiry) {
    return Error(Errc::kUnauthenticated, "token expired at " + utc_time(expiry) + " (now " + utc_time(now) +
                                             "): mint a new one with `qim token` (--ttl SECONDS)");
  }
  return Principal{std::move(user).value(), std::move(device).value(), expiry, issued_at};
}

}  // namespace qim
