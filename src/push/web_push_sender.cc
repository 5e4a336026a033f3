#include "push/web_push_sender.h"

#include <chrono>

namespace qim {

namespace {

class WebPushSender final : public PushSender {
 public:
  explicit WebPushSender(WebPushOptions o) : options_(std::move(o)), http_(options_.http) {}

  PushResult send(const PushTarget& target, const PushNotification& n) override {
    auto sub = parse_web_push_subscription(target.token);
    if (!sub.ok()) return {PushOutcome::kRejected, sub.error().message()};
    auto body = encrypt_aes128gcm(sub->p256dh, sub->auth, push_payload_json(n));
    if (!body.ok()) return {PushOutcome::kFailed, body.error().to_string()};
    // RFC 8292: at most 24 h ahead; 12 h leaves room for a skewed clock.
    const int64_t exp =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
            .count() +
        12 * 3600;
    auto auth = vapid_authorization(*options_.vapid, sub->endpoint, options_.subject, exp);
    if (!auth.ok()) return {PushOutcome::kFailed, auth.error().to_string()};
    const std::vector<std::string> headers = {
        "Authorization: " + *auth,
        "TTL: " + std::to_string(options_.ttl.count()),
        "Urgency: normal",
        "Topic: " + push_collapse_id(n.conversation),
        "Content-Encoding: aes128gcm",
        "Content-Type: application/octet-stream",
    };
    auto answer = http_.post(sub->endpoint, headers, *body);
    if (!answer.ok()) return {PushOutcome::kFailed, answer.error().to_string()};
    const std::string detail = "web push service answered " + std::to_string(answer->status);
    if (answer->status == 200 || answer->status == 201 || answer->status == 202)
      return {PushOutcome::kSent, detail};
    if (answer->status == 404 || answer->status == 410) return {PushOutcome::kRejected, detail};
    return {PushOutcome::kFailed, detail + ": " + answer->body.substr(0, 200)};
  }

 private:
  WebPushOptions options_;
  HttpClient http_;
};

}  // namespace

std::unique_ptr<PushSender> make_web_push_sender(WebPushOptions options) {
  return std::make_unique<WebPushSender>(std::move(options));
}

}  // namespace qim
