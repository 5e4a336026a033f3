#pragma once
// The Lua scripts of the Redis mailbox store. Each check that must be atomic with its write runs inside
// Redis as one script: the packed-W frontier commit (ADR-0015), first-writer-wins dispatch identity, the
// per-user entry upsert, the bounded entry read, and the ledger compare-and-set of the retention sweep.
// Scripts are loaded once per instance (SCRIPT LOAD) and called by SHA (EVALSHA); see redis_instance.h
// for the reload after NOSCRIPT.
//
// Scripts refuse with error replies "QIM_<CODE> <message>"; redis_reply_error() maps CODE to an Errc.

#include <array>
#include <string_view>

#include "core/status.h"
#include "mailbox/redis/redis_connection.h"

namespace qim {

enum class RedisScript : uint8_t {
  // KEYS: identity. ARGV: value, ttl seconds. Returns the stored value, or nil after storing ARGV[1].
  kClaimIdentity,
  // KEYS: packed W, frontier history. ARGV: configured epoch, expected lanes (512 bytes), new packed W
  // (516 bytes). Refuses QIM_EPOCH_AHEAD, QIM_GAP, QIM_NONUNIFORM, QIM_BACK, QIM_CORRUPT, QIM_INVARIANT;
  // returns 1 after writing, 0 if the new W equals the stored one. When the new W is of a higher epoch
  // than the stored one, the stored W goes into the history hash (field: its epoch) first.
  kWriteFrontier,
  // KEYS: per entry its user's index, values, ledger and bucket proof keys and its shard's ledger-users
  // set. ARGV: key ttl ms, then per entry: seq hex, value, ledger bucket field, user id (listed in the
  // set when the bucket is new to the ledger). Entries of several users in one call: the instance is
  // addressed directly, so any keys on it may meet in a script. Returns the number of entries upserted.
  kPutEntries,
  // KEYS: index, values. ARGV: lex min, lex max, limit, now ms. Returns [hex, value, ...] of at most
  // `limit` unexpired entries in the range, ascending.
  kReadEntries,
  // KEYS: ledger, index, values, then the proof keys of the expired buckets. ARGV: seen trim hex, new
  // trim hex, n, n seen bucket fields, then the expired bucket fields. QIM_LEDGER_CHANGED unless the
  // ledger still equals what the sweep saw; returns the number of entries dropped below the new trim.
  kCommitSweep,
  // KEYS: per entry its user's values hash. ARGV: per entry seq hex, the value read, the value without
  // its body. Sets each field to the new value only if it still holds the value read (an entry swept or
  // rewritten meanwhile is left alone, and none is created). Returns the number of fields rewritten.
  kRedactEntries,
};
inline constexpr size_t kRedisScriptCount = 6;

std::string_view script_name(RedisScript script);
// True for the scripts that compare and then set (identity, frontier, sweep): counted as LWTs.
bool script_is_cas(RedisScript script);
std::string_view script_source(RedisScript script);

// The error a reply stands for: QIM_GAP -> WatermarkGap, QIM_EPOCH_AHEAD -> EpochAhead, QIM_NONUNIFORM,
// QIM_BACK, QIM_INVARIANT, QIM_LEDGER_CHANGED -> Invariant, QIM_CORRUPT -> CorruptEntry; any other
// error reply (OOM, LOADING, WRONGTYPE, ...) is Transport naming the endpoint and the reply.
Error redis_reply_error(const RedisReply& reply, const RedisEndpoint& endpoint);

}  // namespace qim
