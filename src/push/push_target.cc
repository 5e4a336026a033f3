#include "push/push_target.h"

#include <simdjson.h>

#include <cctype>

#include "auth/base64url.h"

namespace qim {

std::string_view push_provider_name(PushProvider p) {
  switch (p) {
    case PushProvider::kFcm:
      return "fcm";
    case PushProvider::kApns:
      return "apns";
    case PushProvider::kWebPush:
      return "webpush";
  }
  return "webpush";
}

std::optional<PushProvider> parse_push_provider(std::string_view name) {
  if (name == "fcm") return PushProvider::kFcm;
  if (name == "apns") return PushProvider::kApns;
  if (name == "webpush") return PushProvider::kWebPush;
  return std::nullopt;
}

namespace {

// Browsers write base64url without padding; some libraries add it.
std::optional<std::string> decode_key(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  return base64url_decode(text);
}

}  // namespace

Result<WebPushSubscription> parse_web_push_subscription(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS)
    return Error(Errc::kInvalidArgument, "a webpush token is the PushSubscription as JSON: not JSON");
  std::string_view endpoint, p256dh, auth;
  if (doc["endpoint"].get_string().get(endpoint) != simdjson::SUCCESS)
    return Error(Errc::kInvalidArgument, "webpush token: 'endpoint' (a string) is required");
  if (!(endpoint.starts_with("https://") || endpoint.starts_with("http://")) || endpoint.size() > 2048)
    return Error(Errc::kInvalidArgument,
                 "webpush token: 'endpoint' must be an http(s) URL of at most 2048 bytes");
  if (doc["keys"]["p256dh"].get_string().get(p256dh) != simdjson::SUCCESS ||
      doc["keys"]["auth"].get_string().get(auth) != simdjson::SUCCESS)
    return Error(Errc::kInvalidArgument,
                 "webpush token: 'keys.p256dh' and 'keys.auth' (strings) are required");
  WebPushSubscription s;
  s.endpoint = std::string(endpoint);
  auto key = decode_key(p256dh);
  if (!key || key->size() != 65 || (*key)[0] != 0x04)
    return Error(Errc::kInvalidArgument,
                 "webpush token: 'keys.p256dh' must be base64url of an uncompressed P-256 point (65 bytes)");
  s.p256dh = std::move(*key);
  auto secret = decode_key(auth);
  if (!secret || secret->size() != 16)
    return Error(Errc::kInvalidArgument, "webpush token: 'keys.auth' must be base64url of 16 bytes");
  s.auth = std::move(*secret);
  return s;
}

Status check_push_token(PushProvider provider, std::string_view token) {
  switch (provider) {
    case PushProvider::kWebPush: {
      if (token.size() > 4096) return Error(Errc::kInvalidArgument, "webpush token: over 4096 bytes");
      QIM_ASSIGN_OR_RETURN(auto s, parse_web_push_subscription(token));
      (void)s;
      return {};
    }
    case PushProvider::kApns: {
      if (token.size() < 64 || token.size() > 200)
        return Error(Errc::kInvalidArgument, "apns token: 64 to 200 hex digits expected");
      for (char c : token) {
        if (!std::isxdigit(static_cast<unsigned char>(c)))
          return Error(Errc::kInvalidArgument, "apns token: hex digits only");
      }
      return {};
    }
    case PushProvider::kFcm: {
      if (token.empty() || token.size() > 4096)
        return Error(Errc::kInvalidArgument, "fcm token: 1 to 4096 bytes expected");
      for (char c : token) {
        if (c <= ' ' || c > '~') return Error(Errc::kInvalidArgument, "fcm token: printable ASCII only");
      }
      return {};
    }
  }
  return Error(Errc::kInvalidArgument, "unknown provider");
}

}  // namespace qim
