#pragma once
// The Lua scripts of the Redis inbox (keys: redis_inbox_keys.h). Every cell is a monotonic maximum or a
// last-writer-wins cell, so each write is one script that compares and sets atomically on the server;
// none is a client-side read-modify-write. Seqs, message ids and versions are compared as two 32-bit
// halves of their 16 hex digits (exact in Lua's doubles; never a double of 64 bits, never a locale-aware
// string comparison).
//
// An index row expires when its entry does (the value leads with the same expiry the mailbox gives the
// entry): the read scripts first drop every row of the (user, conversation) whose expiry is at or before
// the caller's now, then read, so what they count equals what read_entries shows. The write script drops a
// few expired rows too (at most kPurgePerWrite), so a conversation nobody reads stays bounded.
//
// Scripts refuse with "QIM_<CODE> <message>" error replies (redis_reply_error maps them).

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace qim {

enum class InboxScript : uint8_t {
  // KEYS: per entry rows (ic), index (ix), counting (iu), values (iv), expiries (ie), activity (ia). ARGV:
  // key ttl ms, expiry ms, now ms, then per entry: seq hex, "1" if it counts else "0", conversation, value.
  // Upserts each index row and raises each conversation row to it when its seq is not lower, moving the
  // row's activity position with it (ZREM the old, ZADD the new). Returns the entry count.
  kPutRows,
  // KEYS: ix, iu, iv, ie. ARGV: now ms, lex max, lex min, limit. After dropping expired rows: [hex, value,
  // ...] of at most `limit` rows in the range, descending.
  kReadIndex,
  // KEYS: ix, iu, iv, ie. ARGV: now ms, lex min, lex max, cap. After dropping expired rows: the number of
  // counting rows in the range (ZLEXCOUNT: O(log n)), at most `cap`.
  kCountUnread,
  // KEYS: ic, ix, iu, iv, ie, ia. ARGV: conversation, now ms. For a conversation row whose entry expired:
  // after dropping expired rows, sets the row to the highest index row left (or deletes it when none is
  // left), its activity position with it, and returns it (nil when deleted). A row still live is returned
  // unchanged (a write raced the caller).
  kRefreshRow,
  // KEYS: a hash. ARGV: field, 16 hex digits. Raises the field to the value if it is higher (or absent).
  // Returns 1 if raised, 0 if not. Read marks (seq) and receipts (message id).
  kRaiseCell,
  // KEYS: settings. ARGV: setting, version hex (16) + value. Sets it if its version is higher than the
  // stored one (or none is stored). Returns 1 if set, 0 if not.
  kPutSetting,
  // KEYS: activity (ia), rows (ic). ARGV: lex max, lex min, limit. The positions (seq hex + conversation) in
  // the range, descending; a user without an ia key but with rows gets one built from them first.
  kReadActivity,
};
inline constexpr size_t kInboxScriptCount = 7;

// Expired index rows the write script drops per (user, conversation) and call.
inline constexpr int kPurgePerWrite = 16;

std::string_view inbox_script_name(InboxScript script);
std::string_view inbox_script_source(InboxScript script);

}  // namespace qim
