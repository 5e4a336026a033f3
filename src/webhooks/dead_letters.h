#pragma once
// The dead-letter log of the event webhook: one partition of a Log (embedded or Kafka, beside the Outbox:
// "webhook-dead-letters"), one record per event given up after its retry time (webhooks/retry_policy.h).
// An operator lists it and replays it (`qim webhooks dead-letters list|replay`): a replay sends each
// dead letter from the replay cursor on once, with its original id and body, and moves the cursor past
// each one the hook acknowledged; it stops at the first failure (run it again once the hook is back).

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "log/log.h"
#include "webhooks/webhook_event.h"

namespace qim {

inline constexpr const char* kDeadLetterLogName = "webhook-dead-letters";
inline constexpr uint32_t kDeadLetterPartitions = 1;
// The consumer group whose committed position on the dead-letter log is the replay cursor.
inline constexpr const char* kDeadLetterReplayGroup = "qim-webhooks-replay";

struct DeadLetter {
  uint64_t position = 0;  // offset on the dead-letter log
  std::string id;         // webhook-id
  std::string type;
  uint32_t attempts = 0;
  int64_t dead_at_ms = 0;
  std::string error;  // the last attempt's
  std::string body;
};

std::string encode_dead_letter(const WebhookEvent& e, uint32_t attempts, int64_t dead_at_ms,
                               const std::string& error);
// CorruptEntry if `bytes` is no dead letter.
Result<DeadLetter> decode_dead_letter(uint64_t position, std::string_view bytes);

// Every dead letter from `from` on (at most `max`). Records that do not decode are skipped.
Result<std::vector<DeadLetter>> read_dead_letters(Log& log, uint64_t from, size_t max);

// One line per dead letter, "<position> <id> <type> attempts=N dead_at=<UTC> <pending|replayed>
// error=<...>", then the cursor.
std::string render_dead_letters(const std::vector<DeadLetter>& letters, uint64_t cursor);

}  // namespace qim
