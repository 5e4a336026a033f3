#pragma once
// The AuditReader of the configured backend (the audit's counterpart of open_mailbox_store).

#include <memory>
#include <string>
#include <vector>

#include "mailbox/audit_reader.h"
#include "mailbox/store_options.h"

namespace qim {

// Config for a backend with no audit reader (memory) or not built in; NotFound when there is no store to
// audit; Transport/Timeout when its engine cannot be reached. Creates nothing.
Result<std::unique_ptr<AuditReader>> open_audit_reader(const StoreOptions& options);

// `qim admin schema check|apply`: the CQL keyspace's schema against ADR-0022's rules (scylla/schema_check.h).
struct SchemaOutcome {
  bool applicable = true;  // false: this backend keeps no schema (embedded, redis, memory)
  bool applied = false;    // apply: the schema was created or completed
  std::vector<std::string> problems;
  std::vector<std::string> notes;
};
// check: reads only. apply: refuses (problems, nothing written) a keyspace that breaks a rule apply cannot
// fix (TWCS, tablets, a newer schema), else creates what is missing (keyspace with QIM_CQL_RF, tables)
// and checks again. Transport/Timeout when the cluster cannot be reached.
Result<SchemaOutcome> store_schema(const StoreOptions& options, bool apply);

}  // namespace qim
