#include "push/fcm_sender.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <simdjson.h>

#include <chrono>

#include "auth/base64url.h"
#include "gateway/protocol/json_writer.h"

namespace qim {

namespace {

int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string json_string(std::string_view s) {
  JsonWriter w;
  w.string(s);
  return w.take();
}

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

class FcmSender final : public PushSender {
 public:
  FcmSender(FcmOptions o, std::unique_ptr<EVP_PKEY, KeyFree> key)
      : options_(std::move(o)), key_(std::move(key)), http_(options_.http) {}

  PushResult send(const PushTarget& target, const PushNotification& n) override {
    auto token = access_token();
    if (!token.ok()) return {PushOutcome::kFailed, "FCM access token: " + token.error().to_string()};
    const std::vector<std::string> headers = {"Authorization: Bearer " + *token,
                                              "Content-Type: application/json; charset=utf-8"};
    auto answer = http_.post(options_.url + "/v1/projects/" + options_.account.project_id + "/messages:send",
                             headers, fcm_message(target.token, n));
    if (!answer.ok()) return {PushOutcome::kFailed, answer.error().to_string()};
    const std::string detail =
        "FCM answered " + std::to_string(answer->status) + " " + answer->body.substr(0, 200);
    if (answer->status == 200) return {PushOutcome::kSent, detail};
    if (answer->status == 404 || answer->body.find("\"UNREGISTERED\"") != std::string::npos)
      return {PushOutcome::kRejected, detail};
    if (answer->status == 401) access_.clear();
    return {PushOutcome::kFailed, detail};
  }

 private:
  Result<std::string> rs256(std::string_view header, std::string_view claims) {
    const std::string input = base64url_encode(header) + "." + base64url_encode(claims);
    EVP_MD_CTX* md = EVP_MD_CTX_new();
    std::string sig(static_cast<size_t>(EVP_PKEY_get_size(key_.get())), '\0');
    size_t len = sig.size();
    const bool ok = md != nullptr &&
                    EVP_DigestSignInit(md, nullptr, EVP_sha256(), nullptr, key_.get()) == 1 &&
                    EVP_DigestSign(md, reinterpret_cast<unsigned char*>(sig.data()), &len,
                                   reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
    EVP_MD_CTX_free(md);
    if (!ok) {
      ERR_clear_error();
      return Error(Errc::kInvariant, "RS256 signature failed");
    }
    sig.resize(len);
    return input + "." + base64url_encode(sig);
  }

  Result<std::string> access_token() {
    const int64_t now = now_s();
    if (!access_.empty() && now < access_expires_ - 60) return access_;
    const ServiceAccount& a = options_.account;
    const std::string header = R"({"alg":"RS256","typ":"JWT","kid":)" + json_string(a.private_key_id) + "}";
    const std::string claims = "{\"iss\":" + json_string(a.client_email) +
                               R"(,"scope":"https://www.googleapis.com/auth/firebase.messaging","aud":)" +
                               json_string(a.token_uri) + ",\"iat\":" + std::to_string(now) +
                               ",\"exp\":" + std::to_string(now + 3600) + "}";
    QIM_ASSIGN_OR_RETURN(auto assertion, rs256(header, claims));
    QIM_ASSIGN_OR_RETURN(
        auto answer,
        http_.post(
            a.token_uri, {"Content-Type: application/x-www-form-urlencoded"},
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion));
    if (answer.status != 200)
      return Error(Errc::kTransport, "the token endpoint answered " + std::to_string(answer.status) + " " +
                                         answer.body.substr(0, 200));
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    std::string_view token;
    int64_t expires = 3600;
    if (parser.parse(answer.body).get(doc) != simdjson::SUCCESS ||
        doc["access_token"].get_string().get(token) != simdjson::SUCCESS)
      return Error(Errc::kTransport, "the token endpoint's answer has no access_token");
    if (doc["expires_in"].get_int64().get(expires) != simdjson::SUCCESS) expires = 3600;
    access_ = std::string(token);
    access_expires_ = now + expires;
    return access_;
  }

  FcmOptions options_;
  std::unique_ptr<EVP_PKEY, KeyFree> key_;
  HttpClient http_;
  std::string access_;
  int64_t access_expires_ = 0;
};

}  // namespace

Result<ServiceAccount> parse_service_account(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS)
    return Error(Errc::kInvalidArgument, "a service account key file is JSON: this is not");
  ServiceAccount a;
  for (auto [name, out] :
       {std::pair{"project_id", &a.project_id}, std::pair{"client_email", &a.client_email},
        std::pair{"private_key_id", &a.private_key_id}, std::pair{"private_key", &a.private_key_pem},
        std::pair{"token_uri", &a.token_uri}}) {
    std::string_view v;
    if (doc[name].get_string().get(v) != simdjson::SUCCESS || v.empty())
      return Error(Errc::kInvalidArgument, std::string("the service account has no '") + name + "'");
    *out = std::string(v);
  }
  if (a.project_id.find_first_of("/?#%\"\\ ") != std::string::npos)
    return Error(Errc::kInvalidArgument, "the service account's project_id is not a project id");
  return a;
}

std::string fcm_message(const std::string& token, const PushNotification& n) {
  const std::string collapse = push_collapse_id(n.conversation);
  JsonWriter w;
  w.begin_object().key("message").begin_object().field("token", token);
  w.key("notification").begin_object().field("title", n.sender.str()).field("body", n.preview).end_object();
  w.key("data").begin_object();
  w.field("type", "message").field("conversation", n.conversation.str());
  w.field("message_id", std::to_string(n.message.value)).field("sender", n.sender.str());
  w.field("count", std::to_string(n.count));
  if (n.badge) w.field("badge", std::to_string(*n.badge));
  w.field("server_time", std::to_string(n.server_time_ms)).end_object();
  w.key("android").begin_object().field("collapse_key", collapse).field("priority", "high");
  w.key("notification").begin_object().field("tag", collapse);
  if (n.badge) w.field("notification_count", static_cast<int64_t>(*n.badge));
  w.end_object().end_object();
  w.key("apns").begin_object().key("headers").begin_object().field("apns-collapse-id", collapse).end_object();
  w.end_object();
  w.key("webpush")
      .begin_object()
      .key("headers")
      .begin_object()
      .field("Topic", collapse)
      .end_object()
      .end_object();
  w.end_object().end_object();
  return w.take();
}

Result<std::unique_ptr<PushSender>> make_fcm_sender(FcmOptions options) {
  BIO* bio = BIO_new_mem_buf(options.account.private_key_pem.data(),
                             static_cast<int>(options.account.private_key_pem.size()));
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      bio != nullptr ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr) : nullptr);
  BIO_free(bio);
  if (!key || EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA) {
    ERR_clear_error();
    return Error(Errc::kInvalidArgument, "the service account's private_key is not a PEM RSA key");
  }
  return std::unique_ptr<PushSender>(std::make_unique<FcmSender>(std::move(options), std::move(key)));
}

}  // namespace qim
