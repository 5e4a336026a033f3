#pragma once
// Conversation history (ADR-0018 "tiered history"): the archiver writes two rows per message (the
// message, and the conversation's index entry); the gateway serves HISTORY from it, newest first.

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/status.h"
#include "mailbox/message.h"
#include "mailbox/op_counters.h"

namespace qim {

struct HistoryQuery {
  ConversationId conversation;
  std::optional<MessageId> before;  // page back from here (exclusive); none = newest
  uint32_t limit = 50;
};

struct HistoryPage {
  std::vector<Message> messages;  // newest first
  bool more = false;
};

class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // Idempotent: the same message id written twice is one message.
  virtual Status append(const Message& message) = 0;
  // InvalidArgument for a limit outside 1..200.
  virtual Result<HistoryPage> read(const HistoryQuery& query) = 0;
  virtual OpCounts op_counts() const = 0;
};

}  // namespace qim
