#include "attachments/attachment_id.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "auth/base64url.h"

namespace qim::attachments {

namespace {

constexpr std::string_view kPrefix = "a1.";
constexpr size_t kRandomBytes = 16;
constexpr size_t kMacBytes = 16;

std::string mac_of(std::string_view secret, const UserId& uploader, const ConversationId& conversation,
                   std::string_view random) {
  const std::string data = "att1|" + uploader.str() + "|" + conversation.str() + "|" + std::string(random);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  return std::string(reinterpret_cast<const char*>(mac), std::min<size_t>(len, kMacBytes));
}

}  // namespace

Result<MintedId> mint_attachment_id(std::string_view secret, const UserId& uploader,
                                    const ConversationId& conversation) {
  unsigned char bytes[kRandomBytes];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return Error(Errc::kIo, "no randomness for an attachment id");
  const std::string random =
      base64url_encode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
  MintedId out;
  out.id =
      std::string(kPrefix) + random + "." + base64url_encode(mac_of(secret, uploader, conversation, random));
  out.key = std::string(kAttachmentKeyPrefix) + random;
  return out;
}

std::optional<std::string> key_of_attachment(std::string_view secret, std::string_view id,
                                             const UserId& uploader, const ConversationId& conversation) {
  if (!id.starts_with(kPrefix) || id.size() > 128) return std::nullopt;
  id.remove_prefix(kPrefix.size());
  const size_t dot = id.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view random = id.substr(0, dot);
  auto raw = base64url_decode(random);
  auto mac = base64url_decode(id.substr(dot + 1));
  if (!raw || raw->size() != kRandomBytes || !mac || mac->size() != kMacBytes) return std::nullopt;
  const std::string expected = mac_of(secret, uploader, conversation, random);
  if (CRYPTO_memcmp(expected.data(), mac->data(), kMacBytes) != 0) return std::nullopt;
  return std::string(kAttachmentKeyPrefix) + std::string(random);
}

}  // namespace qim::attachments
