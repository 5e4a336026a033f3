#pragma once
// The embedded AuditReader (mailbox/audit_reader.h): opens the store's RocksDB read-only (no lock, so it
// works beside a running `qim up`, on what was written when it opened) and walks the identity, frontier
// and entry families. One process writes an embedded store, so identity conflicts within an epoch cannot
// exist; the audit compares epochs, checks each identity's expiry (the embedded TTL) and every entry
// against its dispatch's canonical offset. No write timestamps: WRITETIME checks do not apply.

#include <memory>
#include <string>

#include "mailbox/audit_reader.h"

namespace qim {

// NotFound if `dir` holds no store; CorruptEntry/Io from RocksDB otherwise. `now_ms` is when the
// remaining identity TTLs are computed from.
Result<std::unique_ptr<AuditReader>> open_embedded_audit_reader(const std::string& dir, int64_t now_ms);

}  // namespace qim
