#pragma once
// The idempotency table of SEND: (sender, client_msg_id) -> the message it was acknowledged as.
//
// Decision (docs/protocol.md, "Idempotent send"): an in-memory table bounded by a count and a time
// window, rebuilt at start from the tail of the Outbox, which holds (sender, client_msg_id) in every
// record. The Outbox is the durable truth, so there is no window between "append durable" and "dedup
// entry written" for a crash to fall into. An entry is recorded only once its append is durable; a
// duplicate that arrives while the first is still being appended waits for the first's outcome.
// Thread-safe.

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
  uint64_t fingerprint = 0;  // hash of (conversation, body): the same key with other content is refused
};

// The fingerprint of a SEND's content: XXH3-64 over conversation, NUL, body.
uint64_t send_fingerprint(const ConversationId& conversation, std::string_view body);

class SendDedup {
 public:
  using Waiter = std::function<void(const Result<SentMessage>&)>;

  enum class Kind {
    kFirst,    // nobody sent this key: the caller appends, then calls complete()
    kDone,     // acknowledged before: `sent` holds the original
    kWaiting,  // the first is being appended: `waiter` will be called with its outcome
  };
  struct Begin {
    Kind kind = Kind::kFirst;
    std::optional<SentMessage> sent;
  };

  SendDedup(size_t capacity, int64_t window_ms) : capacity_(capacity), window_ms_(window_ms) {}

  static std::string key_of(const UserId& sender, std::string_view client_msg_id);

  // Looks the key up at `now_ms`. `waiter` is kept only for kWaiting and called from complete().
  Begin begin(const std::string& key, int64_t now_ms, Waiter waiter);
  // The first append's outcome. On success the entry is recorded; every waiter gets the outcome (on
  // failure they get the error and the key is free again, so a retry appends anew).
  void complete(const std::string& key, const Result<SentMessage>& outcome);
  // Records an entry read back from the Outbox at start.
  void record(const std::string& key, const SentMessage& sent);

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
