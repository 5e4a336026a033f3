#include "push/push_sender.h"

#include <openssl/sha.h>

#include "auth/base64url.h"
#include "gateway/protocol/json_writer.h"

namespace qim {

std::string push_collapse_id(const ConversationId& c) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(c.str().data()), c.str().size(), digest);
  return base64url_encode(std::string_view(reinterpret_cast<char*>(digest), 24));
}

std::string push_payload_json(const PushNotification& n) {
  JsonWriter w;
  w.begin_object()
      .field("type", "message")
      .field("conversation", n.conversation.str())
      .key("message_id")
      .uint64_as_string(n.message.value)
      .field("sender", n.sender.str())
      .field("preview", n.preview)
      .field("count", static_cast<int64_t>(n.count));
  if (n.badge) w.field("badge", static_cast<int64_t>(*n.badge));
  w.field("server_time", n.server_time_ms).end_object();
  return w.take();
}

PushResult ProviderSenders::send(const PushTarget& target, const PushNotification& n) {
  auto it = senders_.find(target.provider);
  if (it == senders_.end())
    return {PushOutcome::kFailed, std::string(push_provider_name(target.provider)) + " is not configured"};
  return it->second->send(target, n);
}

}  // namespace qim
