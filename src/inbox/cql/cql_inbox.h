#pragma once
// Opening the CQL inbox (cql_inbox_backend.h) for a deployment whose mailbox store is scylla or
// scylla-lwt: the store's CQL settings (QIM_CQL_HOSTS, QIM_CQL_KEYSPACE, QIM_CQL_RF, QIM_CQL_BATCH_ROWS),
// and the entries' TTL from `context` (retention + slack), so the inbox rows expire with the entries.

#include <memory>

#include "inbox/inbox_backend.h"
#include "mailbox/store_backend.h"
#include "mailbox/store_options.h"

namespace qim {

// CqlInboxBackend::open's errors: Config for a bad keyspace or a newer inbox schema, Transport/Timeout
// when no host answers.
Result<std::unique_ptr<InboxBackend>> open_cql_inbox(const BackendContext& context,
                                                     const StoreOptions& store);

}  // namespace qim
