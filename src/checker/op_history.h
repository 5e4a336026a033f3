#pragma once
// An operation history of QIM clients (issue 42, item 4): what each client asked for, what it was told,
// and what it received, written as one JSON object per line so that a run can be checked after the fact
// (checker/checker.h, `qim-history-check FILE`).
//
// Events, in the order a client saw them:
//   invoke   a SEND was written: conversation, client_msg_id, body
//   ok       its SEND_ACK: message_id (the same client_msg_id)
//   fail     a definite refusal (an ERROR answering it): code; the message was not stored
//   unknown  no answer (timeout, connection lost): it may or may not have been stored
//   members  who belongs to a group conversation for the run (direct conversations name their members)
//   frame    a DELIVER or SYNC_PAGE as received: from (DELIVER), frontier, its entries
//   shown    entries the client's delivery loop showed, in order (after its de-duplication)
//   final    a user's whole mailbox read after healing (SYNC from 0 until `more` is false), as stored
//
// Thread safety: HistoryRecorder is safe to call from several threads; each event is one line written
// and flushed at once, so a history survives the crash of the process that records it up to its last
// whole line. load_history reads such a file; a torn last line is reported, not skipped.

#include <cstdint>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/frames.h"
#include "core/status.h"

namespace qim::checker {

enum class EventKind : uint8_t { kInvoke, kOk, kFail, kUnknown, kMembers, kFrame, kShown, kFinal };
std::string_view event_kind_name(EventKind kind);

// An entry of a user's mailbox, as much of it as the checks need.
struct HistoryEntry {
  uint64_t seq = 0;
  uint64_t message_id = 0;
  std::string conversation;
  std::string sender;
  std::string client_msg_id;
};

struct HistoryEvent {
  EventKind kind = EventKind::kInvoke;
  int64_t time_ms = 0;  // since the recorder started
  std::string client;   // the connection's label, e.g. "alice/phone"
  std::string user;     // whose connection (the sender of a SEND, the owner of a mailbox)
  // invoke / ok / fail / unknown; members (conversation)
  std::string conversation;
  std::string client_msg_id;
  std::string body;                  // invoke
  uint64_t message_id = 0;           // ok
  std::string code;                  // fail: the ERROR's code; unknown: why (timeout, closed)
  std::vector<std::string> members;  // members
  // frame / shown / final
  std::string frame_type;  // frame: DELIVER or SYNC_PAGE
  std::optional<uint64_t> from;
  uint64_t frontier = 0;
  std::vector<HistoryEntry> entries;
};

// One event as its JSON line (no newline), and back. parse_event: CorruptEntry naming the problem.
std::string encode_event(const HistoryEvent& e);
Result<HistoryEvent> parse_event(std::string_view line);

// Every event of a history file, in order. Io if it cannot be read; CorruptEntry naming the line
// number if a line is not an event.
Result<std::vector<HistoryEvent>> load_history(const std::string& path);

HistoryEntry to_history_entry(const client::Entry& e);

// Appends events to a file (created or truncated by the constructor). A recorder whose file could not be
// opened records in memory only and says so through status(); events() always returns what it was given.
class HistoryRecorder {
 public:
  explicit HistoryRecorder(std::string path);
  HistoryRecorder(const HistoryRecorder&) = delete;
  HistoryRecorder& operator=(const HistoryRecorder&) = delete;

  const std::string& path() const { return path_; }
  Status status() const;

  void invoke(std::string_view client, std::string_view user, std::string_view conversation,
              std::string_view client_msg_id, std::string_view body);
  void ok(std::string_view client, std::string_view user, std::string_view client_msg_id,
          uint64_t message_id);
  void fail(std::string_view client, std::string_view user, std::string_view client_msg_id,
            std::string_view code);
  void unknown(std::string_view client, std::string_view user, std::string_view client_msg_id,
               std::string_view why);
  void members(std::string_view conversation, std::vector<std::string> members);
  // A DELIVER or SYNC_PAGE as received (other frame types are ignored).
  void frame(std::string_view client, std::string_view user, const client::ServerFrame& f);
  void shown(std::string_view client, std::string_view user, const std::vector<client::Entry>& entries);
  void final_mailbox(std::string_view user, const std::vector<client::Entry>& entries);

  // Every event recorded so far, in order.
  std::vector<HistoryEvent> events() const;

 private:
  void record(HistoryEvent e);

  std::string path_;
  mutable std::mutex mu_;
  std::ofstream out_;
  bool open_ = false;
  int64_t start_ms_ = 0;
  std::vector<HistoryEvent> events_;
};

}  // namespace qim::checker
