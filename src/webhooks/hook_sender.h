#pragma once
// One POST of a signed event to the hook. The consumer signs; a sender only carries the request. The HTTP
// one keeps its connection open between requests (one per Outbox partition thread) and opens a new one
// after any error. Only http:// URLs for now (docs/webhooks.md).

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qim {

struct SignedDelivery {
  std::string id;         // webhook-id
  int64_t timestamp = 0;  // webhook-timestamp, seconds
  std::string signature;  // webhook-signature
  std::string body;
};

class HookSender {
 public:
  virtual ~HookSender() = default;
  // OK once the hook answered 2xx. Transport (could not connect, connection lost, or an answer other than
  // 2xx, named with its status) or Timeout; the caller retries.
  virtual Status deliver(const SignedDelivery& d) = 0;
};

struct HookUrl {
  std::string host;
  uint16_t port = 80;
  std::string target = "/";  // path and query
};
// Config (naming `variable`) for anything but http://host[:port][/path].
Result<HookUrl> parse_hook_url(const std::string& url, std::string_view variable = "QIM_WEBHOOK_URL");

std::unique_ptr<HookSender> make_http_hook_sender(HookUrl url, std::chrono::milliseconds timeout);

}  // namespace qim
