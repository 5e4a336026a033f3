#pragma once
// Test-only fault injection (QIM_TEST_NODE_CRASH_BETWEEN_CHUNKS=1, docs/running.md): a store decorator for
// the MailboxNode that, on the first write of a dispatch record with more than one chunk, writes that
// record's first chunk (and whatever the page held before it), then ends the process at once with exit
// code kCrashBetweenChunksExit: no later chunk, no finish, no log commit, no drain. It is how the e2e suite
// puts a crash exactly between two chunks of a group message, where a SIGKILL from outside would land
// anywhere; the restarted node must then complete the record from the mailbox log (the Incomplete path)
// and show every entry once.

#include <spdlog/logger.h>

#include <memory>

#include "mailbox/forwarding_store.h"

namespace qim {

inline constexpr int kCrashBetweenChunksExit = 86;

// Thread safety: the inner store's; the crash ends every thread.
class CrashBetweenChunksStore final : public ForwardingStore {
 public:
  // `inner` must outlive this object; `logger` says what was written before the crash.
  CrashBetweenChunksStore(MailboxStore& inner, std::shared_ptr<spdlog::logger> logger)
      : ForwardingStore(inner), logger_(std::move(logger)) {}

  // Passes `chunks` on unchanged unless one of them is a chunk after the first of its record; then writes
  // the chunks before that one and exits. Returns the inner store's status otherwise.
  Status write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) override;

 private:
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace qim
