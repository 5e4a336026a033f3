#pragma once
// One notification to one device through its provider (docs/push.md "What is sent"). The push consumer
// decides who gets what (push_consumer.h); a sender only speaks its provider's wire format and says what
// the provider answered: sent, rejected (the token is no longer valid: the consumer unregisters the
// device) or failed (anything else: the notification is dropped and counted, never retried: a later
// message of the conversation makes a new one).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/ids.h"
#include "push/push_target.h"

namespace qim {

// What a device is told: the latest message of a collapsed burst in one conversation.
struct PushNotification {
  UserId user;  // the recipient
  DeviceId device;
  ConversationId conversation;
  MessageId message;  // the latest message of the burst
  UserId sender;
  std::string preview;            // the body's first bytes (QIM_PUSH_PREVIEW_BYTES; 0: none)
  uint32_t count = 1;             // messages of the burst
  std::optional<uint32_t> badge;  // the user's unread conversations, where the inbox answered
  int64_t server_time_ms = 0;
};

// The collapse id of a conversation (Web Push Topic, APNs apns-collapse-id, FCM collapse_key): base64url
// of the first 24 bytes of SHA-256(conversation), 32 characters (the longest Topic RFC 8030 allows).
std::string push_collapse_id(const ConversationId& c);

// The JSON every provider carries (Web Push as the encrypted body, APNs and FCM as custom data):
// {"type":"message","conversation","message_id" (decimal string),"sender","preview","count","badge"?,
//  "server_time"}.
std::string push_payload_json(const PushNotification& n);

enum class PushOutcome { kSent, kRejected, kFailed };
struct PushResult {
  PushOutcome outcome = PushOutcome::kFailed;
  std::string detail;  // the provider's status and reason, for the log
};

class PushSender {
 public:
  virtual ~PushSender() = default;
  virtual PushResult send(const PushTarget& target, const PushNotification& n) = 0;
};

// The senders of the configured providers; a target of another provider fails ("not configured").
class ProviderSenders final : public PushSender {
 public:
  void add(PushProvider p, std::unique_ptr<PushSender> s) { senders_[p] = std::move(s); }
  bool has(PushProvider p) const { return senders_.contains(p); }
  PushResult send(const PushTarget& target, const PushNotification& n) override;

 private:
  std::map<PushProvider, std::unique_ptr<PushSender>> senders_;
};

}  // namespace qim
