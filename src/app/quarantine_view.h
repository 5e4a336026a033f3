#pragma once
// What `qim quarantine list|show` prints (and GET /admin/quarantine answers, for a running instance): the
// records the mailbox node or fanout refused and appended to the quarantine log (node/quarantine.h), as
// text for people or JSON (`--json`) for tools. Each names its log: "mailbox" (by shard) or "outbox" (by
// Outbox partition).

#include <optional>
#include <string>
#include <vector>

#include "node/quarantine.h"

namespace qim {

// One line per refused record (shard, offset): a record quarantined again after a retried page is listed
// once, with how often it was appended.
std::string render_quarantine_list(const std::vector<QuarantineEntry>& entries, bool json);

// The record at quarantine-log `position`, with its raw bytes (hex) and, when they decode, the dispatch.
// NotFound if no record is at that position.
Result<std::string> render_quarantine_show(const std::vector<QuarantineEntry>& entries, uint64_t position,
                                           bool json);

}  // namespace qim
