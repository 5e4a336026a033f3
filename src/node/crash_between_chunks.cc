#include "node/crash_between_chunks.h"

#include <cstdlib>

namespace qim {

Status CrashBetweenChunksStore::write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) {
  size_t cut = 0;
  while (cut < chunks.size() && chunks[cut].chunk_index == 0) ++cut;
  if (cut == chunks.size()) return inner().write_chunks(shard, epoch, chunks);
  // chunks[cut] is chunk 1 or later of a record whose chunk 0 is in front of it (the node writes a
  // record's chunks in order): write the prefix, so exactly one chunk of that record is durable.
  const ChunkWrite& next = chunks[cut];
  const Status written = inner().write_chunks(shard, epoch, chunks.first(cut));
  logger_->critical(
      "QIM_TEST_NODE_CRASH_BETWEEN_CHUNKS: shard {}: wrote {} chunk(s) ({}), dispatch {} stops before "
      "chunk {}; exiting with code {}",
      shard.value, cut, written.ok() ? "ok" : written.error().to_string(), next.dispatch_id.str(),
      next.chunk_index, kCrashBetweenChunksExit);
  logger_->flush();
  std::_Exit(kCrashBetweenChunksExit);
}

}  // namespace qim
