#pragma once
// The memory inbox backend: the InboxBackend contract's reference implementation, for unit tests and the
// memory mailbox of `qim up` (QIM_MAILBOX_STORE_BACKEND=memory). Nothing survives the process. Rows expire
// like the memory mailbox's entries: context.entry_ttl_ms() after their write, by context.clock.

#include <memory>

#include "inbox/inbox_backend.h"
#include "mailbox/store_backend.h"

namespace qim {

std::unique_ptr<InboxBackend> make_memory_inbox(const BackendContext& context);

}  // namespace qim
