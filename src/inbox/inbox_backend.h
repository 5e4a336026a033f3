#pragma once
// The primitives an engine provides under the inbox (docs/adr/0068): per user and conversation, a row
// holding the conversation's latest entry and an index of its entries, the user's read marks, and per
// conversation its members' read receipts. The rules (what is visible, what counts as unread, the cap,
// paging) live once in Inbox (inbox.h); a backend only stores, like StoreBackend under ContractStore.
//
// Every cell is ordered by what orders it: rows and index by the entry's mailbox seq, read marks by the
// seq read, receipts by the message id read: monotonic maxima, never counters, so a retry, a replay or a
// stale owner cannot push one wrong. On CQL no LWT: write timestamps below 2^48 (an offset, never a seq
// with its epoch bits: ADR-0022's lesson), the epoch in the key where a seq orders a cell.
//
// Backends are thread-safe; errors are values (core/status.h), none swallowed.

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/mailbox_seq.h"
#include "core/status.h"
#include "mailbox/entry_sink.h"
#include "mailbox/message.h"
#include "mailbox/op_counters.h"

namespace qim {

// The first bytes of a body kept in a conversation row (cut on a UTF-8 boundary).
inline constexpr size_t kPreviewBytes = 200;

// What the inbox keeps of one entry of a user's mailbox.
struct InboxEntryRef {
  MailboxSeq seq;
  MessageId message;
  UserId sender;
  int64_t server_time_ms = 0;
  bool counts = false;  // counts toward the user's unread (inbox/unread_rule.h decides, once)
  std::string preview;  // the body's first kPreviewBytes
  bool operator==(const InboxEntryRef&) const = default;
};

// A user's row of one conversation: the entry with the highest seq the backend holds for it. It may lie
// above its epoch's frontier (written with a page not yet finished, or by an owner that lost the shard);
// Inbox then takes the highest visible one from the index.
struct ConversationRow {
  ConversationId conversation;
  InboxEntryRef last;
};

// A conversation's place in its user's activity index (docs/adr/0089): the seq of its row when written.
// A backend that writes positions blind (embedded, CQL) may still hold lower, stale positions of a
// conversation whose row has risen since; its current position is the one equal to its row's seq.
struct ActivityPosition {
  MailboxSeq seq;
  ConversationId conversation;
  bool operator==(const ActivityPosition&) const = default;
};

struct ReadMark {
  ConversationId conversation;
  MailboxSeq seq;  // read up to and including this seq of the user's own mailbox
};

struct ReceiptMark {
  UserId user;
  MessageId read_through;  // the highest message of the conversation this user has read
};

// The reads that summarise a page of conversations (Inbox::conversations: unread counts, a direct peer's
// last entry, settings and receipts), handed to the backend at once so an engine over the network answers
// them in a constant number of round trips, not several per conversation (docs/adr/0153). Each query
// means what the single call of the same name means.
struct CountQuery {  // count_unread
  UserId user;
  ConversationId conversation;
  MailboxSeq after, upto;
  uint32_t cap = 0;
};
struct IndexQuery {  // index_rows_desc
  UserId user;
  ConversationId conversation;
  MailboxSeq after, upto;
  uint32_t limit = 0;
};
struct BatchReads {
  std::vector<CountQuery> counts;
  std::vector<IndexQuery> index;
  std::vector<UserId> settings;          // settings(user)
  std::vector<ConversationId> receipts;  // receipts(c, receipts_limit)
  uint32_t receipts_limit = 0;
};
// The answers, each list in the order of its queries.
struct BatchAnswers {
  std::vector<uint32_t> counts;
  std::vector<std::vector<InboxEntryRef>> index;
  std::vector<std::map<std::string, std::string>> settings;
  std::vector<std::vector<ReceiptMark>> receipts;
};

class InboxBackend : public EntrySink {
 public:
  // "memory", "embedded", "redis", "cql".
  virtual std::string_view name() const = 0;

  // (EntrySink) For each entry: upserts its index row (user, conversation, seq) with the entries' TTL and
  // raises the (user, conversation) row to it if its seq is higher (a lower or equal one changes nothing).
  // No reads; idempotent; one write per entry at most, batched per call.

  // Every conversation row of `user` (any order), one per conversation: the one with the highest seq. A
  // backend that keeps one row per epoch returns the highest epoch's only: a lower epoch's row may be
  // visible while the highest epoch holds visible entries below its own row (a page not finished yet), so
  // it is never the answer; when the row returned is not visible the caller looks in the index.
  virtual Result<std::vector<ConversationRow>> conversation_rows(const UserId& user) = 0;
  // --- The activity index (docs/adr/0089) ---
  // (EntrySink, continued) Each row raised also has its position (seq, conversation) written, in the same
  // write as the row (a script, a batch) or acknowledged before it (CQL: decision 143), with the row's
  // expiry: a reader never sees a row without its position. The defaults below derive all three from
  // conversation_rows (every row of the user: O(conversations)) for a backend without an index.
  //
  // The positions of `user` with after < seq < before, descending by seq, at most `limit`. Every live
  // row's position is among them when its seq is in range; stale positions may be too (the caller skips a
  // position whose row's seq differs).
  virtual Result<std::vector<ActivityPosition>> activity_desc(const UserId& user, MailboxSeq after,
                                                              MailboxSeq before, uint32_t limit);
  // The live rows of `conversations` (nullopt: none, or expired), in the order given.
  virtual Result<std::vector<std::optional<InboxEntryRef>>> rows_of(
      const UserId& user, std::span<const ConversationId> conversations);
  // The read marks of `conversations` (zero: none), in the order given.
  virtual Result<std::vector<MailboxSeq>> read_marks_of(const UserId& user,
                                                        std::span<const ConversationId> conversations);
  // Forgets positions a reader found stale (below their row): blind deletes, so a replay writing one again
  // is only skipped again. Best effort; the default has nothing to forget.
  virtual Status drop_stale_activity(const UserId& user, std::span<const ActivityPosition> stale);

  // The index rows of (user, conversation) with after < seq <= upto, descending by seq, at most `limit`.
  virtual Result<std::vector<InboxEntryRef>> index_rows_desc(const UserId& user, const ConversationId& c,
                                                             MailboxSeq after, MailboxSeq upto,
                                                             uint32_t limit) = 0;
  // How many index rows of (user, conversation) with after < seq <= upto have `counts`, stopping at `cap`.
  virtual Result<uint32_t> count_unread(const UserId& user, const ConversationId& c, MailboxSeq after,
                                        MailboxSeq upto, uint32_t cap) = 0;

  // Raises the user's read mark of `c` to `seq` (a lower or equal one changes nothing).
  virtual Status raise_read_mark(const UserId& user, const ConversationId& c, MailboxSeq seq) = 0;
  // Every read mark of `user` (any order); the highest per conversation if several are kept.
  virtual Result<std::vector<ReadMark>> read_marks(const UserId& user) = 0;
  // The read mark of (user, c): zero if none.
  virtual Result<MailboxSeq> read_mark(const UserId& user, const ConversationId& c) = 0;

  // Raises `user`'s receipt in conversation `c` to `read_through` (one conversation's messages share one
  // Outbox partition, so their ids order them; a lower or equal one changes nothing).
  virtual Status raise_receipt(const ConversationId& c, const UserId& user, MessageId read_through) = 0;
  // The receipts of `c` (any order), at most `limit`.
  virtual Result<std::vector<ReceiptMark>> receipts(const ConversationId& c, uint32_t limit) = 0;

  // A user's settings (e.g. "receipts" = "on"|"off", "presence" = "everyone"|"contacts"|"nobody"): the
  // value with the highest `version` (milliseconds, below 2^48) wins; an equal version keeps either.
  virtual Status put_setting(const UserId& user, const std::string& key, const std::string& value,
                             int64_t version) = 0;
  virtual Result<std::map<std::string, std::string>> settings(const UserId& user) = 0;

  // Answers every query of `reads` (docs/adr/0153); the first error fails the whole batch. The default
  // issues the single calls, from up to `parallelism` threads at once; a backend that can batch overrides
  // it (redis: one pipeline of scripts and one of commands per instance; cql: every request sent before
  // any is waited for, docs/adr/0159).
  virtual Result<BatchAnswers> read_batch(const BatchReads& reads, uint32_t parallelism);

  virtual OpCounters& counters() = 0;
  // Requests sent to the engine, a redis pipeline or a cql wave (sent, then waited for, together) counting
  // once, so tests and benchmarks see round trips, not commands; 0 for an engine in the process.
  virtual uint64_t round_trips() const { return 0; }

  // The version a door of this process writes a last-writer-wins cell at (a setting, a block, a mute, a
  // delete for me, a push registration): `now_ms`, or one above the last version this backend gave when
  // that is not below `now_ms`. Two writes of one cell through this process in the same millisecond (a
  // registration, then its removal) so keep their order; at an equal version the engines would keep the
  // larger value (as CQL does), not the later write. Thread-safe.
  int64_t cell_version(int64_t now_ms);

 private:
  std::atomic<int64_t> last_cell_version_{0};
};

}  // namespace qim
