#pragma once
// What else is kept beside a mailbox's entries (the inbox's conversation rows and index, src/inbox/):
// a sink ContractStore::write_chunks hands every entry it writes, beside the backend's write_entries (begin
// below) and before write_chunks answers OK. So a record's sink writes land before the frontier can pass it,
// and a record whose sink write failed is written again (entries and sink) like one whose entries failed: the
// frontier does not move over it. A sink's writes must be idempotent upserts (a replay, a retried page or a
// stale owner writes the same entries again) and must not read on this path.

#include <memory>
#include <span>

#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "core/status.h"
#include "mailbox/message.h"

namespace qim {

class EntrySink {
 public:
  virtual ~EntrySink() = default;
  // `entries` were just written at `epoch` in `shard` (all of that shard; any order). An error fails the
  // write_chunks call with it. Thread-safe: called from every shard worker.
  virtual Status entries_written(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) = 0;

  // A sink's writes begun by begin() and not yet waited for.
  class Pending {
   public:
    virtual ~Pending() = default;
    // The outcome of the writes, as entries_written would answer. Called once, with whether the entries
    // landed: writes not begun yet need not be made when they did not (the chunks are written again).
    virtual Status wait(bool entries_landed) = 0;
  };
  // Begins the writes of entries_written(shard, epoch, entries), so that ContractStore writes the entries
  // meanwhile: the sink's rows then land beside the entries, not after them (they still land before the
  // frontier may pass the entries, which is what the sink relies on; rows of entries whose write fails
  // lie above the frontier, as a stale owner's do, and are written again by the retry). `entries` must
  // outlive wait(). The default begins nothing and calls entries_written from wait(), after the entries
  // landed and only then (a sink in the entries' own engine, embedded, keeps that order); a sink over the
  // network overrides it (cql: its requests are sent before begin() returns, docs/adr/0170).
  virtual std::unique_ptr<Pending> begin(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) {
    class After final : public Pending {
     public:
      After(EntrySink& sink, ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries)
          : sink_(sink), shard_(shard), epoch_(epoch), entries_(entries) {}
      Status wait(bool entries_landed) override {
        return entries_landed ? sink_.entries_written(shard_, epoch_, entries_) : Status{};
      }

     private:
      EntrySink& sink_;
      ShardId shard_;
      Epoch epoch_;
      std::span<const MailboxEntry> entries_;
    };
    return std::make_unique<After>(*this, shard, epoch, entries);
  }
};

}  // namespace qim
