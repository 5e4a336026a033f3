// ContractStore and its EntrySink (mailbox/entry_sink.h, docs/adr/0170): a sink's writes are begun before
// the entries are written and waited for after them, whatever the entries' outcome, and the chunks count
// as written only when both landed; the default begin writes after the entries landed, never when they
// failed.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/clock.h"
#include "mailbox/contract_store.h"
#include "mailbox/memory/memory_backend.h"
#include "mailbox/tests/contract_helpers.h"
#include "mailbox/tests/forwarding_backend.h"

namespace qim::test {
namespace {

using Events = std::vector<std::string>;

// The entries' writes, logged, and failed when told to.
class LoggingBackend final : public ForwardingBackend {
 public:
  LoggingBackend(StoreBackend& target, Events& log, bool fail)
      : ForwardingBackend(target), log_(log), fail_(fail) {}
  Status write_entries(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override {
    log_.push_back("entries");
    if (fail_) return Error(Errc::kTransport, "injected entry write failure");
    return ForwardingBackend::write_entries(shard, epoch, entries);
  }

 private:
  Events& log_;
  bool fail_;
};

// A sink that begins its writes (as cql does), or only has entries_written (the default begin).
class LoggingSink final : public EntrySink {
 public:
  LoggingSink(Events& log, bool begins) : log_(log), begins_(begins) {}
  Status entries_written(ShardId, Epoch, std::span<const MailboxEntry>) override {
    log_.push_back("sink");
    return {};
  }
  std::unique_ptr<Pending> begin(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override {
    if (!begins_) return EntrySink::begin(shard, epoch, entries);
    log_.push_back("begin");
    class Begun final : public Pending {
     public:
      explicit Begun(Events& log) : log_(log) {}
      Status wait(bool landed) override {
        log_.push_back(landed ? "wait (entries landed)" : "wait (entries failed)");
        return {};
      }

     private:
      Events& log_;
    };
    return std::make_unique<Begun>(log_);
  }

 private:
  Events& log_;
  bool begins_;
};

// One record of two recipients through a fresh store over the memory backend; the log of what ran.
Events run(bool sink_begins, bool entries_fail, bool* materialised = nullptr) {
  Events log;
  BackendContext context;
  context.clock = std::make_shared<ManualClock>(1'800'000'000'000);
  const std::unique_ptr<StoreBackend> rows = make_memory_backend(context);
  LoggingSink sink(log, sink_begins);
  ContractStore store(std::make_unique<LoggingBackend>(*rows, log, entries_fail), context, std::nullopt, {},
                      &sink);
  const UserId alice = user_in_shard(context.shards, ShardId{0}, 0);
  const UserId bob = user_in_shard(context.shards, ShardId{0}, 1);
  const DispatchRecord record = make_record("d1", make_message(7, alice, 1'800'000'000'000), {{alice, bob}});
  const bool ok = materialise(store, ShardId{0}, Epoch{1}, record, Offset{10}, MailboxSeq{}).ok();
  if (materialised) *materialised = ok;
  return log;
}

TEST(ContractSinkTest, ASinksWritesAreBegunBeforeTheEntriesAndWaitedForAfter) {
  bool ok = false;
  EXPECT_EQ(run(/*sink_begins=*/true, /*entries_fail=*/false, &ok),
            (Events{"begin", "entries", "wait (entries landed)"}));
  EXPECT_TRUE(ok);
}

TEST(ContractSinkTest, AFailedEntryWriteStillWaitsForTheBegunWritesAndFailsTheRecord) {
  bool ok = true;
  EXPECT_EQ(run(true, true, &ok), (Events{"begin", "entries", "wait (entries failed)"}));
  EXPECT_FALSE(ok) << "the chunks are not written: the frontier does not pass them";
}

TEST(ContractSinkTest, TheDefaultWritesAfterTheEntriesLandedAndNotWhenTheyFailed) {
  EXPECT_EQ(run(/*sink_begins=*/false, false), (Events{"entries", "sink"}));
  EXPECT_EQ(run(false, true), (Events{"entries"}));
}

}  // namespace
}  // namespace qim::test
