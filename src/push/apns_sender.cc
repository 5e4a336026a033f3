#include "push/apns_sender.h"

#include "gateway/protocol/json_writer.h"

namespace qim {

namespace {

int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class ApnsSender final : public PushSender {
 public:
  explicit ApnsSender(ApnsOptions o)
      : options_(std::move(o)), http_([&] {
          HttpClientOptions h = options_.http;
          h.http2 = true;
          return h;
        }()) {}

  PushResult send(const PushTarget& target, const PushNotification& n) override {
    auto jwt = provider_token();
    if (!jwt.ok()) return {PushOutcome::kFailed, jwt.error().to_string()};
    const std::vector<std::string> headers = {
        "authorization: bearer " + *jwt,
        "apns-topic: " + options_.topic,
        "apns-push-type: alert",
        "apns-priority: 10",
        "apns-collapse-id: " + push_collapse_id(n.conversation),
        "apns-expiration: " + std::to_string(now_s() + options_.ttl.count()),
        "content-type: application/json",
    };
    auto answer = http_.post(options_.url + "/3/device/" + target.token, headers, apns_body(n));
    if (!answer.ok()) return {PushOutcome::kFailed, answer.error().to_string()};
    const std::string detail =
        "APNs answered " + std::to_string(answer->status) + " " + answer->body.substr(0, 200);
    if (answer->status == 200) return {PushOutcome::kSent, detail};
    const bool bad_token = answer->body.find("\"BadDeviceToken\"") != std::string::npos ||
                           answer->body.find("\"DeviceTokenNotForTopic\"") != std::string::npos;
    if (answer->status == 410 || (answer->status == 400 && bad_token))
      return {PushOutcome::kRejected, detail};
    if (answer->status == 403) jwt_.clear();  // ExpiredProviderToken, InvalidProviderToken: sign anew
    return {PushOutcome::kFailed, detail};
  }

 private:
  Result<std::string> provider_token() {
    const int64_t now = now_s();
    if (!jwt_.empty() && now - jwt_iat_ < 50 * 60) return jwt_;
    const std::string header = R"({"alg":"ES256","kid":")" + options_.key_id + R"("})";
    const std::string claims = R"({"iss":")" + options_.team_id + R"(","iat":)" + std::to_string(now) + "}";
    QIM_ASSIGN_OR_RETURN(jwt_, es256_jwt(*options_.key, header, claims));
    jwt_iat_ = now;
    return jwt_;
  }

  ApnsOptions options_;
  HttpClient http_;
  std::string jwt_;
  int64_t jwt_iat_ = 0;
};

}  // namespace

std::string apns_body(const PushNotification& n) {
  JsonWriter aps;
  aps.begin_object()
      .key("alert")
      .begin_object()
      .field("title", n.sender.str())
      .field("body", n.preview)
      .end_object();
  if (n.badge) aps.field("badge", static_cast<int64_t>(*n.badge));
  aps.field("sound", "default").field("thread-id", n.conversation.str()).end_object();
  return "{\"aps\":" + aps.take() + ",\"qim\":" + push_payload_json(n) + "}";
}

std::unique_ptr<PushSender> make_apns_sender(ApnsOptions options) {
  return std::make_unique<ApnsSender>(std::move(options));
}

}  // namespace qim
