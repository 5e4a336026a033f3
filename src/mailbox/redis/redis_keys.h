#pragma once
// The Redis key layout of the mailbox store, under a prefix (the namespace: "qim:" by default, one per
// test so tests never touch each other's keys). Shard keys live on the shard's instance; a user's keys on
// the instance of the user's shard, so every script touches one instance only.
//
//   {p}w:{shard}                       packed W v2 (packed_watermarks.h)
//   {p}wh:{shard}                      HASH: epoch (decimal) -> seq_hex of that epoch's final W, written
//                                      by the frontier script when a higher epoch replaces packed W
//   {p}id:{shard}:{epoch}:{dispatch}   dispatch identity, TTL 31 days: u64 digest, u64 canonical, manifest
//   {p}mb:{user}                       ZSET: one member per entry, seq_hex(seq), score 0 (see below)
//   {p}mv:{user}                       HASH: seq_hex(seq) -> u64 expiry ms + encode_message(...)
//   {p}pf:{user}:{day}                 ZSET: the bucket proof, only the highest seq_hex kept
//   {p}lg:{user}                       HASH: the ledger: "trim" -> seq_hex, "b{day}" -> "1" per live bucket
//   {p}lu:{shard}                      ZSET: the users of the shard with a ledger, score 0 (byte order)
//
// mailbox_seq carries the epoch in its top 16 bits, so most seqs are above 2^53 and a ZSET score (a
// double) would round them. Members are therefore fixed-width big-endian hex with score 0: Redis orders
// equal-score members bytewise, which is numeric order, and ZRANGEBYLEX bounds are exact.

#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/ids.h"
#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "core/status.h"
#include "mailbox/dispatch.h"

namespace qim {

// 16 lowercase hex digits, most significant first.
std::string seq_hex(MailboxSeq seq);
// CorruptEntry unless `hex` is exactly 16 lowercase hex digits.
Result<MailboxSeq> parse_seq_hex(std::string_view hex);

class RedisKeys {
 public:
  explicit RedisKeys(std::string prefix) : p_(std::move(prefix)) {}

  const std::string& prefix() const { return p_; }
  std::string frontier(ShardId shard) const { return p_ + "w:" + std::to_string(shard.value); }
  std::string frontier_history(ShardId shard) const { return p_ + "wh:" + std::to_string(shard.value); }
  std::string identity(ShardId shard, Epoch epoch, const DispatchId& id) const {
    return p_ + "id:" + std::to_string(shard.value) + ":" + std::to_string(epoch.value) + ":" + id.str();
  }
  std::string index(const UserId& user) const { return p_ + "mb:" + user.str(); }
  std::string values(const UserId& user) const { return p_ + "mv:" + user.str(); }
  std::string proof(const UserId& user, DayBucket day) const {
    return p_ + "pf:" + user.str() + ":" + std::to_string(day.value);
  }
  std::string ledger(const UserId& user) const { return p_ + "lg:" + user.str(); }
  std::string ledger_users(ShardId shard) const { return p_ + "lu:" + std::to_string(shard.value); }

 private:
  std::string p_;
};

// Ledger hash fields.
inline constexpr std::string_view kTrimField = "trim";
inline std::string bucket_field(DayBucket day) {
  return "b" + std::to_string(day.value);
}

}  // namespace qim
