#pragma once
// The memory backend: the contract's reference implementation for unit tests. Nothing survives the
// process. Monotonic columns behave like CQL cells written USING TIMESTAMP: a lower write never wins.

#include <memory>

#include "mailbox/store_backend.h"

namespace qim {

std::unique_ptr<StoreBackend> make_memory_backend(const BackendContext& context);

// Test hook: deletes the proof rows of (user, bucket) so tests can check that a missing proof fails closed.
Status memory_backend_drop_proof(StoreBackend& backend, const UserId& user, DayBucket bucket);
// Test hook: whether any stored entry (expired or not) holds `bytes` in its message's fields.
// InvalidArgument if `backend` is not a memory backend.
Result<bool> memory_backend_holds(StoreBackend& backend, std::string_view bytes);

}  // namespace qim
