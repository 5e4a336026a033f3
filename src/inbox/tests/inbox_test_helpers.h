#pragma once
// Records and the worker's steps for the inbox suites: messages of a conversation as fanout makes them,
// and delivery through the store (begin, write what it asks, finish chaining), so every entry reaches
// the inbox through ContractStore's sink exactly as on the MailboxNode.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "inbox/tests/inbox_session.h"
#include "mailbox/dispatch.h"
#include "mailbox/tests/contract_helpers.h"

namespace qim::test {

inline constexpr ShardId kInboxShard{0};

// A message `id` of conversation `c` by `sender` at `time_ms`; a system entry when `system`.
Message inbox_message(uint64_t id, const ConversationId& c, const UserId& sender, int64_t time_ms,
                      bool system = false);
// A record of `message` to `recipients` (one chunk), dispatch id "r<id>".
DispatchRecord inbox_record(const Message& message, const std::vector<UserId>& recipients);

// Begins the records at offsets next_offset, next_offset + 1, ..., writes what the store asks and finishes
// them, a page at a time; advances next_offset. Returns the frontier after the last page.
Result<MailboxSeq> deliver(MailboxStore& store, Epoch epoch, std::span<const DispatchRecord> records,
                           uint64_t& next_offset);
// Begins and writes the records without finishing them (a crash before the frontier write).
Status write_only(MailboxStore& store, Epoch epoch, std::span<const DispatchRecord> records,
                  uint64_t& next_offset);

}  // namespace qim::test
