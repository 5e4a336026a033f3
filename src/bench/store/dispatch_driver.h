#pragma once
// Plays fanout and a MailboxNode's shard workers against one MailboxStore, for the benchmarks that write
// through the whole contract (qim-store-bench, qim-inbox-bench): send() turns a message and its recipients
// into one dispatch record per shard touched, appended to that shard's queue at the next offset; one
// worker thread per shard takes pages from its queue (up to finish_page_limit(), never waiting to fill
// one), begins them (identity reads and writes together), writes their entries at once (write_chunks,
// which hands them to the store's EntrySink if it has one) and advances the frontier once.
//
// Each shard continues after what is stored (lane_watermarks), so a kept data directory or server can be
// reused. Errors are values: the first error of any worker stops every worker, and send() and finish()
// return it.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/sharding.h"
#include "core/status.h"
#include "mailbox/dispatch.h"
#include "mailbox/store.h"

namespace qim {

class DispatchDriver {
 public:
  // `store` must outlive the driver. Reads each shard's watermark; Transport/Io from the store.
  static Result<std::unique_ptr<DispatchDriver>> start(MailboxStore& store, const ShardMap& shards,
                                                       Epoch epoch);
  // Joins the workers (finish() if it was not called; its error is then dropped).
  ~DispatchDriver();
  DispatchDriver(const DispatchDriver&) = delete;
  DispatchDriver& operator=(const DispatchDriver&) = delete;

  // Queues `m` for `recipients` (one record per shard touched, ids "<prefix>-m<message id>-s<shard>");
  // waits while a shard's queue is full. InvalidArgument for a malformed prefix or no recipient; a
  // worker's error once one failed.
  Status send(const Message& m, std::span<const UserId> recipients, const std::string& prefix);
  // Dispatch records whose page was finished so far.
  uint64_t finished() const { return finished_.load(); }
  // Closes the queues and waits until every queued record is finished; the first worker error if any.
  Status finish();

 private:
  struct Queued {
    DispatchRecord record;
    Offset offset;
  };
  struct ShardQueue {
    std::mutex mu;
    std::condition_variable ready, space;
    std::deque<Queued> items;
    bool closed = false;
    uint64_t next_offset = 0;
  };
  static constexpr size_t kMaxQueued = 4096;  // the producer waits beyond this, like a bounded consumer

  DispatchDriver(MailboxStore& store, const ShardMap& shards, Epoch epoch)
      : store_(store), shards_(shards), epoch_(epoch) {}
  Status push(uint32_t shard, DispatchRecord record);
  std::vector<Queued> take(ShardQueue& q, size_t limit);
  void work(uint32_t shard, MailboxSeq frontier);
  Status work_page(uint32_t shard, std::vector<Queued>& page, MailboxSeq& frontier);
  void stop_all(const Error& e);
  Status first_error();

  MailboxStore& store_;
  ShardMap shards_;
  Epoch epoch_;
  std::vector<std::unique_ptr<ShardQueue>> queues_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> finished_{0};
  std::atomic<bool> failed_{false};
  std::mutex error_mu_;
  std::optional<Error> error_;
  bool joined_ = false;
};

}  // namespace qim
