#pragma once
// qim-inbox-bench's run (issue 38, item 9; docs/benchmarks.md "The inbox"): the inbox's reads for one user
// with many conversations, timed through Inbox (inbox/inbox.h) on one engine. It fills the user's mailbox
// through the whole store contract, whose EntrySink is the inbox, as `qim up` and the MailboxNode write it
// (bench/store/dispatch_driver.h): one conversation with `unread` messages from one peer, then one message
// from each of `conversations` - 1 other peers, every message also in its sender's own mailbox. Then:
//
//   conversations   the first page (`limit`) of the user's conversation list
//   rows            what that page starts with: every conversation row of the user, from the backend alone
//   unread          unread() of the conversation with `unread` unread messages
//   read            mark_read of that conversation, stepping the mark up through its entries (each call
//                   raises it), so every call does the work of a real READ
//
// each `repetitions` times after `warmup` unmeasured calls. Every answer is checked (the page's size, the
// count of conversations with unread messages, the capped unread count, each READ moving the mark to the
// seq asked): a wrong answer is kept in its series' `check`, never thrown away. Times are reported, never
// asserted.

#include <cstdint>
#include <string>
#include <vector>

#include "core/sharding.h"
#include "core/status.h"
#include "inbox/inbox_backend.h"
#include "mailbox/store.h"

namespace qim::inbox_bench {

struct Options {
  std::string backend = "embedded";  // the mailbox store's (names the run and its target)
  uint32_t conversations = 10'000;
  uint32_t unread = 1'000;
  uint32_t repetitions = 300;
  uint32_t warmup = 10;  // unmeasured calls before each measured series
  uint32_t limit = 50;
  bool progress = true;  // progress lines on stderr while filling and timing
};

struct Series {
  std::string operation;
  uint32_t calls = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  double reads_per_call = 0;              // the mailbox store's and the inbox's reads, as they count them
  double inbox_round_trips_per_call = 0;  // the inbox backend's (InboxBackend::round_trips; 0 in-process)
  double cpu_ms_per_call = 0;  // the calling thread's CPU time, mean: what the machine's load does not add
  std::string check = "ok";    // or what was wrong with the first wrong answer
};

struct Report {
  uint64_t messages = 0;  // written while filling
  double fill_seconds = 0;
  std::vector<Series> series;  // conversations, rows, unread, read
  bool wrong() const;          // some answer was wrong
};

// Fills `store` (whose EntrySink must be `inbox`: the caller opened both, the store with the inbox as its
// sink) and times the three operations. The store's or the inbox's error if filling fails or the rows to
// step through cannot be read; wrong answers are in the report, not errors.
Result<Report> run(const Options& o, MailboxStore& store, InboxBackend& inbox, const ShardMap& shards);

// Issue 38's target for the first page of a 10,000-conversation list, as a cell: "P99 <= 20 ms: met" (or
// "not met") embedded, 50 ms on Cassandra (scylla); "-" for the other operations and engines.
std::string target_of(const std::string& backend, const Series& s);

}  // namespace qim::inbox_bench
