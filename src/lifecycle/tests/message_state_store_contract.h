#pragma once
// What every MessageStateStore promises (message_state_store.h), run by each backend's test binary on its
// own engine: the memory and RocksDB stores (qim_lifecycle_test), Redis and CQL (their own binaries).

#include "lifecycle/message_state_store.h"

namespace qim {

// A recalled message of partition 1 (id (1 << 48) | 10, offset 10), sent by alice in d:alice:bob.
MessageState contract_message_state();

// Expects, on an empty store (no row of partitions 0 and 1): nothing before a put; a put is read back
// whole, raises its partition's watermark to event offset + 1 and no other; a put or raise at a lower
// offset never lowers it; load_many answers in order, nullopt for an unknown id.
void run_message_state_store_contract(MessageStateStore& store);

}  // namespace qim
