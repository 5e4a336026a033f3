#pragma once
// The AuditReader of the configured backend (the audit's counterpart of open_mailbox_store).

#include <memory>

#include "mailbox/audit_reader.h"
#include "mailbox/store_options.h"

namespace qim {

// Config for a backend with no audit reader (memory) or not built in; NotFound when there is no store to
// audit; Transport/Timeout when its engine cannot be reached. Creates nothing.
Result<std::unique_ptr<AuditReader>> open_audit_reader(const StoreOptions& options);

}  // namespace qim
