#pragma once
// BatchWriter: independent writes grouped into UNLOGGED batches, each sent as soon as it is full.
//
// Why: a page's rows sent one by one cost the engine one request each (about ten a message on the
// distributed deployment); a batch of rows is one request. An UNLOGGED batch promises no more than the
// same writes sent one by one: each row is applied on its own, and a failed batch may have applied some
// of its rows. So it is only for writes that are idempotent and may land in any order, which is what the
// mailbox's page writes and the history's rows are (a failed page is replayed whole). Decision 42 has
// what it saved and what it did not.
//
// A statement whose values alone exceed `max_bytes` is sent alone, not batched: engines refuse batches
// above a size (Cassandra's batch_size_fail_threshold, 50 KiB by default), a single statement never.
//
// Not thread-safe: one writer per caller; the Prepared statements added must outlive finish().

#include <vector>

#include "cql_session.h"

namespace qim::cql {

struct BatchLimits {
  // Statements per batch; 1 sends every statement alone (no batches at all).
  size_t max_statements = 32;
  // Sum of Values::wire_bytes() per batch. Kept under the engines' warning threshold times a few and
  // far under their failure threshold.
  size_t max_bytes = 16 * 1024;
};

class BatchWriter {
 public:
  BatchWriter(const Session& session, ExecOptions options, BatchLimits limits)
      : session_(session), options_(options), limits_(limits) {}

  // Adds one write; sends the batch it completes. Returns the index, in finish()'s answer, of the request
  // that carries it: the write is done once that request's result is OK.
  size_t add(const Prepared& statement, Values values);
  // Sends the open batch now if it cannot take `statements` more, so the next `statements` adds (up to
  // max_statements, and within max_bytes) share one batch: writes of one partition key in one batch are
  // one mutation to the engine (one write per table), not one each.
  void keep_together(size_t statements);
  // Sends what is left; every request sent, in the order sent. wait_all() them.
  std::vector<PendingResult> finish();

  // Requests sent so far (batches and lone statements).
  size_t requests() const noexcept { return requests_; }

 private:
  void send();

  const Session& session_;
  ExecOptions options_;
  BatchLimits limits_;
  std::vector<std::pair<const Prepared*, Values>> open_;
  size_t open_bytes_ = 0;
  size_t open_slot_ = 0;  // the open batch's place in pending_, kept for it when it was opened
  size_t requests_ = 0;
  std::vector<PendingResult> pending_;
};

}  // namespace qim::cql
