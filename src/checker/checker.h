#pragma once
// The history checker (issue 42, item 4): one judge of what clients saw, for every nemesis test and any
// e2e run that records a history (checker/op_history.h). It decides, after healing and a final read of
// every mailbox that matters (`final` events):
//
//   lost           every acknowledged SEND is in the final mailbox of each member of its conversation
//                  that has a final read (direct: both parties, the sender's own mailbox too; a group: the
//                  members of its `members` event)
//   order          in each final mailbox, and in what each client was shown, a conversation's messages come
//                  in Outbox order (message ids ascend: one conversation is one Outbox partition)
//   shown-twice    no client was shown one message twice (the documented client de-duplication applied),
//                  and no final mailbox holds a second copy further behind its first than that window
//   leak           no entry reached a user who is not a member of its conversation
//   one-id         one (sender, client_msg_id) maps to one message id: an `unknown` SEND sent again
//                  appears at most once; every acknowledgement of a key names the same id, the entry that
//                  carries it
//   refused-stored a SEND refused for good (a `fail`, and no later `ok` of the same key) is stored nowhere
//   frontier       a frame holds no entry above its own frontier, a DELIVER none at or below its `from`,
//                  a SYNC_PAGE's entries ascend
//
// Group membership is taken as fixed for the run (the `members` event); a group without one is not
// judged for leaks or losses (counted in Stats::unjudged_entries).
//
// On a violation the report holds a minimal excerpt: the events of the history that concern the message
// or key in question (at most a few dozen lines), so the failure can be read without the whole file.

#include <cstdint>
#include <string>
#include <vector>

#include "checker/op_history.h"

namespace qim::checker {

struct CheckOptions {
  size_t dedup_window = 1024;  // the client's documented de-duplication window (decision 31)
  size_t excerpt_lines = 24;   // events shown per violation at the most
};

struct Violation {
  std::string rule;                  // one of the names above
  std::string message;               // what is wrong, naming the user, message and key
  std::vector<std::string> excerpt;  // the events that show it, as JSON lines
};

struct CheckStats {
  uint64_t sends = 0;           // distinct SEND keys (sender, client_msg_id) invoked
  uint64_t attempts = 0;        // invokes, retries with the same key included
  uint64_t acknowledged = 0;    // with an ok
  uint64_t refused = 0;         // with a fail and no ok
  uint64_t unknown = 0;         // with neither (or an unknown event)
  uint64_t unknown_stored = 0;  // of those, found in a mailbox (once)
  uint64_t mailboxes = 0;       // final reads
  uint64_t final_entries = 0;
  uint64_t duplicates_hidden = 0;  // second copies in final mailboxes a de-duplicating client skips
  uint64_t shown_entries = 0;
  uint64_t frames = 0;
  uint64_t unjudged_entries = 0;  // in groups with no `members` event
  // Acknowledged after an attempt of unknown outcome, under the id of a second Outbox record, and found in
  // the mailboxes under the first record's id (docs/protocol.md, "A SEND stored twice still shows once").
  uint64_t acked_as_first_record = 0;
};

struct CheckReport {
  std::vector<Violation> violations;
  CheckStats stats;
  bool ok() const { return violations.empty(); }
  // A human summary: the stats on one line, then each violation with its excerpt.
  std::string to_string() const;
};

CheckReport check_history(const std::vector<HistoryEvent>& events, const CheckOptions& options = {});

}  // namespace qim::checker
