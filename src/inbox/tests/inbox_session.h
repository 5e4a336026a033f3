#pragma once
// What the inbox suites share: one "process" writing a mailbox through a real ContractStore with the inbox
// backend of the same engine as its EntrySink (behind a sink that can be told to fail), and the Inbox over
// both; restart() simulates a crash and a new process over the same stored data.

#include <atomic>
#include <memory>

#include "inbox/inbox.h"
#include "inbox/tests/inbox_fixture.h"
#include "mailbox/contract_store.h"

namespace qim::test {

// Forwards to an inbox backend; armed, it fails the next calls (after writing the first half of the
// entries when `partial`: an engine without atomic batches may fail half-way).
class FlakySink final : public EntrySink {
 public:
  explicit FlakySink(InboxBackend& target) : target_(target) {}
  Status entries_written(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override;
  std::unique_ptr<Pending> begin(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override;
  void fail_next(int calls, bool partial) {
    partial_ = partial;
    failures_ = calls;
  }
  uint64_t failed() const { return failed_; }

 private:
  InboxBackend& target_;
  std::atomic<int> failures_{0};
  std::atomic<bool> partial_{false};
  std::atomic<uint64_t> failed_{0};
};

// One process: its inbox backend, the sink in front of it, its store (destroyed first) and Inbox.
struct InboxProcess {
  std::unique_ptr<InboxBackend> backend;
  std::unique_ptr<FlakySink> sink;
  std::unique_ptr<MailboxStore> store;
  std::unique_ptr<Inbox> inbox;
};

class InboxSession {
 public:
  InboxSession(InboxFixture fixture, BackendContext context)
      : fixture_(std::move(fixture)), context_(std::move(context)) {}

  Status start();
  // Drops the process (store, inbox) and opens a new one over the same data.
  Status restart();
  // Another process over the same data while this one stays open (a stale owner); only for fixtures
  // whose mailbox has no limits.single_opener.
  Result<std::unique_ptr<InboxProcess>> open_another(FenceCheck fence);

  MailboxStore& store() { return *process_->store; }
  InboxBackend& backend() { return *process_->backend; }
  Inbox& inbox() { return *process_->inbox; }
  FlakySink& sink() { return *process_->sink; }
  const InboxFixture& fixture() const { return fixture_; }

 private:
  Result<std::unique_ptr<InboxProcess>> open_process(FenceCheck fence);

  InboxFixture fixture_;
  BackendContext context_;
  std::unique_ptr<BackendHarness> mailbox_harness_;
  std::unique_ptr<InboxHarness> inbox_harness_;
  std::unique_ptr<InboxProcess> process_;
};

}  // namespace qim::test
