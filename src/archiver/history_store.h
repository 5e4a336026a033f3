#pragma once
// Conversation history (ADR-0018 "tiered history"): the archiver writes two rows per message (the
// message, and the conversation's index entry); the gateway serves HISTORY from it, newest first.
//
// Backends (docs/adr/0017-history-follows-store-backend.md): RocksDB on local disk for the
// embedded deployment (rocks_history_store.h), CQL (cql/) and Redis (redis/) for the distributed ones,
// chosen by open_history_store.h. Every backend keeps the same contract (history_store_contract_test.cc).

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "core/ids.h"
#include "core/status.h"
#include "mailbox/message.h"
#include "mailbox/op_counters.h"

namespace qim {

inline constexpr uint32_t kMaxHistoryReadLimit = 200;

struct HistoryQuery {
  ConversationId conversation;
  std::optional<MessageId> before;  // page back from here (exclusive); none = newest
  uint32_t limit = 50;
};

// What HISTORY says of a message an EDIT or RECALL changed (docs/adr/0090): filled by the gateway from the
// message state store, not by the backends.
// One reaction of a message as a reader sees it (docs/protocol.md "Reactions").
struct ReactionCount {
  std::string emoji;
  uint32_t count = 0;
  bool mine = false;  // the reader holds it
  bool operator==(const ReactionCount&) const = default;
};

struct MessageLife {
  bool recalled = false;     // the row is the tombstone: no body
  int64_t edited_at_ms = 0;  // the last applied edit's server time; 0 if never edited
  uint32_t edit_count = 0;
  std::vector<ReactionCount> reactions;  // in the order first added; none once recalled
  bool operator==(const MessageLife&) const = default;
};

// The short quote a reply shows of the message it replies to (docs/adr/0125), computed at read in its
// current state: filled by the gateway (gateway/reply_quotes.h), not by the backends.
struct ReplyQuote {
  MessageId message_id;
  UserId sender;             // empty when unavailable
  std::string body;          // the current body, cut to kQuoteCharacters on a grapheme boundary; empty if
                             // recalled or unavailable
  bool truncated = false;    // the body was cut
  uint32_t attachments = 0;  // a message with attachments: how many (the body is then its caption)
  bool recalled = false;     // the replied message was recalled: no body
  bool unavailable = false;  // no longer kept (retention), or not archived yet
  bool operator==(const ReplyQuote&) const = default;
};

struct HistoryPage {
  std::vector<Message> messages;  // newest first
  bool more = false;
  // With `more`: where to page back from when it is not the last message (a reader that filtered
  // messages out, gateway/group_history.h); none: from the last message.
  std::optional<MessageId> next_before;
  // By message id, for the messages of the page that were edited or recalled.
  std::map<uint64_t, MessageLife> life;
  // By message id, for the replies of the page: the quote of the message each replies to.
  std::map<uint64_t, ReplyQuote> quotes;
};

// What every backend refuses with InvalidArgument before writing anything: a message out of bounds
// (validate_message), one without a conversation, or a message id at or above 2^63 (CQL keeps ids as a
// signed bigint; real ids are (partition << 48) | offset with at most 4096 partitions, far below).
Status validate_history_message(const Message& message);
// InvalidArgument for a limit outside 1..kMaxHistoryReadLimit or a query without a conversation.
Status validate_history_query(const HistoryQuery& query);

// Thread-safe: the archiver writes while gateways read.
class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // Idempotent upsert of the message's two rows: the same message id written twice is one message.
  // InvalidArgument (validate_history_message) with nothing written; Transport, Timeout or Io if the
  // rows could not be written (some may have been: writing the message again completes them).
  virtual Status append(const Message& message) = 0;
  // The same for several messages, as a backend can overlap their round trips. The backends here check
  // every message first, so on InvalidArgument nothing is written. The default (inline, so users of
  // this header need not link the archiver) appends them one by one, stopping at the first error.
  virtual Status append_all(std::span<const Message> messages) {
    for (const Message& m : messages) {
      if (Status s = append(m); !s.ok()) return s;
    }
    return {};
  }
  // Newest first, strictly before `query.before`, at most `query.limit`, `more` if older ones exist.
  // InvalidArgument (validate_history_query); CorruptEntry naming the conversation and message id if a
  // stored row does not decode or the index names a missing message; Transport/Timeout/Io.
  virtual Result<HistoryPage> read(const HistoryQuery& query) = 0;
  // Operations issued so far: 2 inserts per appended message (replays included), reads per query.
  virtual OpCounts op_counts() const = 0;
  // Makes every append so far durable. The archiver calls it before committing its Outbox position. A
  // no-op where an acknowledged append is already as durable as the backend makes it (CQL at QUORUM,
  // Redis per its appendfsync).
  virtual Status sync() { return {}; }
};

}  // namespace qim
