#pragma once
// What the contract tests share: a store session over one backend fixture, records built the way
// fanout builds them, the worker's steps (begin, write, finish), and assertions on error values.

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "mailbox/contract_store.h"
#include "mailbox/tests/backend_fixture.h"

namespace qim::test {

// A ContractStore over one fixture's harness; restart() simulates a process restart.
class StoreSession {
 public:
  StoreSession(BackendFixture fixture, BackendContext context)
      : fixture_(std::move(fixture)), context_(context) {}

  // Makes the harness and opens the store; page_max as QIM_MAILBOX_FINISH_PAGE_MAX.
  Status start(std::optional<uint32_t> page_max = std::nullopt);
  // Drops the store (its in-flight table and frontier cache) and opens a new one over the same data.
  Status restart(std::optional<uint32_t> page_max = std::nullopt);
  MailboxStore& store() { return *store_; }
  // Another store over the same data while this one stays open (a second owner or a stale one); only for
  // fixtures without limits.single_opener.
  Result<std::unique_ptr<MailboxStore>> open_another(FenceCheck fence);
  Status drop_proof(const UserId& user, DayBucket bucket) {
    return harness_->drop_proof(*backend_, user, bucket);
  }
  // Whether the engine itself holds `bytes` in a stored entry (BackendHarness::engine_holds).
  Result<bool> engine_holds(std::string_view bytes) { return harness_->engine_holds(*backend_, bytes); }
  // The entry's body written again by a writer whose clock is ahead (BackendHarness::write_body_ahead).
  Status write_body_ahead(const UserId& user, MailboxSeq seq, std::string_view body) {
    return harness_->write_body_ahead(*backend_, user, seq, body);
  }

 private:
  Status open(std::optional<uint32_t> page_max);

  BackendFixture fixture_;
  BackendContext context_;
  std::unique_ptr<BackendHarness> harness_;
  StoreBackend* backend_ = nullptr;  // owned by store_
  std::unique_ptr<MailboxStore> store_;
};

template <typename T>
::testing::AssertionResult is_ok(const Result<T>& r) {
  if (r.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.error().to_string();
}

// Success if `r` failed with `code`; the failure names what came instead.
template <typename T>
::testing::AssertionResult fails_with(const Result<T>& r, Errc code) {
  if (r.ok()) return ::testing::AssertionFailure() << "expected " << errc_name(code) << ", got success";
  if (r.code() != code) {
    return ::testing::AssertionFailure()
           << "expected " << errc_name(code) << ", got " << r.error().to_string();
  }
  return ::testing::AssertionSuccess();
}

inline MailboxSeq seq_of(uint32_t epoch, uint64_t offset) {
  return *compose(Epoch{epoch}, Offset{offset});
}

// The n-th user (n >= 0) whose id hashes to `shard`.
UserId user_in_shard(const ShardMap& shards, ShardId shard, int n);

Message make_message(uint64_t id, const UserId& sender, int64_t server_time_ms);

// A record of `message` for recipients in the given chunks, with its identity as fanout makes it.
DispatchRecord make_record(std::string_view id, const Message& message,
                           std::vector<std::vector<UserId>> chunks);

// The chunk writes of `chunks` (all of them if empty); they point into `record`.
std::vector<ChunkWrite> chunk_writes(const DispatchRecord& record, const std::vector<uint32_t>& chunks = {});

// A worker's whole step for one record: begin at `observed`, write every chunk if the store asks for
// the entries, finish chaining from `previous`.
Result<FinishOutcome> materialise(MailboxStore& store, ShardId shard, Epoch epoch,
                                  const DispatchRecord& record, Offset observed, MailboxSeq previous);

// Every entry of a user's mailbox after `after`, following `more` with small pages.
Result<std::vector<MailboxEntry>> read_all(MailboxStore& store, const UserId& user, MailboxSeq after = {});

// The frontier as lane_watermarks reports it, after checking the 64 lanes agree.
Result<MailboxSeq> frontier_of(MailboxStore& store, ShardId shard, Epoch epoch);

}  // namespace qim::test
