#pragma once
// Where fanout keeps the state of every message that an EDIT or RECALL was read about
// (lifecycle/message_state.h), and the per-partition watermark that keeps a plain SEND free of reads: the
// archiver looks a SEND's state up only if its offset is below the watermark of its partition (an event
// about it may have been decided), which on the live path it never is.
//
// Fanout is the only writer (one Outbox partition is read by one fanout); the archiver and the gateways
// read. Backends: memory (tests), RocksDB (embedded, QIM_DATA_DIR/messages), and for the distributed
// deployments Redis (lifecycle/redis/) and CQL (lifecycle/cql/), beside their mailbox stores.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "lifecycle/message_state.h"

namespace qim {

// Thread-safe.
class MessageStateStore {
 public:
  virtual ~MessageStateStore() = default;
  // The state of message `id`, nullopt if no event was ever read about it. CorruptEntry naming the id if
  // the row does not decode; Io.
  virtual Result<std::optional<MessageState>> load(MessageId id) = 0;
  // The same for several ids (a HISTORY page), in order.
  virtual Result<std::vector<std::optional<MessageState>>> load_many(std::span<const MessageId> ids) = 0;
  // Writes `state` and raises the watermark of `partition` to event_offset + 1, durably and together.
  // Io if it could not be written (a retry with the same values completes it).
  virtual Status put(const MessageState& state, uint32_t partition, uint64_t event_offset) = 0;
  // Raises the watermark of `partition` to event_offset + 1 alone (an event about no known message, or one
  // fanout did not decide). Io as put.
  virtual Status raise_watermark(uint32_t partition, uint64_t event_offset) = 0;
  // One past the highest offset of `partition` at which an event was decided; 0 if none was.
  virtual Result<uint64_t> watermark(uint32_t partition) = 0;
};

// Memory-only, for tests.
std::unique_ptr<MessageStateStore> make_memory_message_state_store();
// RocksDB in `dir` (created if missing). Io if it cannot be opened.
Result<std::unique_ptr<MessageStateStore>> open_rocks_message_state_store(const std::string& dir);

}  // namespace qim
