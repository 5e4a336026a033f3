#pragma once
// The idempotency table of SEND: (sender, client_msg_id) -> the message it was acknowledged as.
//
// The default, MemorySendDedup (docs/protocol.md, "Idempotent send"): an in-memory table bounded by a count
// and a time window, rebuilt at start from the tail of the Outbox, which holds (sender, client_msg_id) in
// every record. The Outbox is the durable truth, so there is no window between "append durable" and "dedup
// entry written" for a crash to fall into. An entry is recorded only once its append is durable; a
// duplicate that arrives while the first is still being appended waits for the first's outcome.
// Several gateways share one table instead (RedisSendDedup, GatewayDeps::send_dedup). Thread-safe.

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ids.h"
#include "core/status.h"

namespace qim {

struct SentMessage {
  MessageId id;
  ConversationId conversation;
  int64_t server_time_ms = 0;
  uint64_t fingerprint =
      0;  // hash of (conversation, body[, reply_to]): the same key with other content is refused
};

// The fingerprint of a SEND's content: XXH3-64 over conversation, NUL, body; for a reply, then NUL, 'r' and
// reply_to's decimal digits (a plain SEND's fingerprint is what it was before replies).
uint64_t send_fingerprint(const ConversationId& conversation, std::string_view body,
                          std::optional<MessageId> reply_to = std::nullopt);

// The table as the gateway uses it. Implementations: MemorySendDedup (one gateway, `qim up`, the
// default) and RedisSendDedup (delivery/redis/redis_send_dedup.h: shared by the gateways of a
// deployment). Thread-safe.
class SendDedup {
 public:
  using Waiter = std::function<void(const Result<SentMessage>&)>;

  enum class Kind {
    kFirst,    // nobody sent this key: the caller appends, then calls complete()
    kDone,     // acknowledged before: `sent` holds the original
    kWaiting,  // the first is being appended: `waiter` will be called with its outcome (or an error)
  };
  struct Begin {
    Kind kind = Kind::kFirst;
    std::optional<SentMessage> sent;
  };

  virtual ~SendDedup() = default;

  static std::string key_of(const UserId& sender, std::string_view client_msg_id);

  // Looks the key up at `now_ms`. `waiter` is kept only for kWaiting and called (on any thread, at most
  // once) with the first's outcome, or with an error when that outcome cannot be learned.
  virtual Begin begin(const std::string& key, int64_t now_ms, Waiter waiter) = 0;
  // The first append's outcome (after a kFirst). On success the entry is recorded; on failure the key is
  // free again, so a retry appends anew.
  virtual void complete(const std::string& key, const Result<SentMessage>& outcome) = 0;
  // Records an entry read back from the Outbox at start.
  virtual void record(const std::string& key, const SentMessage& sent) = 0;
};

// In memory, bounded by a count and a time window; waiters are told by complete().
class MemorySendDedup final : public SendDedup {
 public:
  MemorySendDedup(size_t capacity, int64_t window_ms) : capacity_(capacity), window_ms_(window_ms) {}

  Begin begin(const std::string& key, int64_t now_ms, Waiter waiter) override;
  void complete(const std::string& key, const Result<SentMessage>& outcome) override;
  void record(const std::string& key, const SentMessage& sent) override;

  size_t size() const;

 private:
  void insert_locked(const std::string& key, const SentMessage& sent);

  const size_t capacity_;
  const int64_t window_ms_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, SentMessage> done_;
  std::deque<std::pair<std::string, MessageId>> order_;  // insertion order, for eviction
  std::unordered_map<std::string, std::vector<Waiter>> in_flight_;
};

}  // namespace qim
