#pragma once
// The rows of the embedded (RocksDB) mailbox store: one column family per kind of row, keys in
// big-endian order so RocksDB's bytewise order is the order the contract reads in. Values are
// little-endian (core/bytes.h) and every decoder returns CorruptEntry naming the bad field.
//
//   family    key                                      value
//   identity  shard u32 | epoch u32 | dispatch id       version | expires_ms | canonical | digest | manifest
//   frontier  shard u32 | epoch u32                     offset u64 (merge: monotonic max)
//   entries   user | seq u64                            expires_ms | message (message_codec.h)
//   proofs    user | day u64 | epoch u32                seq u64 (merge: monotonic max)
//   ledger    user                                      trim u64 | bucket count u32 | day i64 ...
//   ledger_users  shard u32 | user bytes                 (empty): the users of a shard with a ledger
//
// `user` is a length byte and the user id, so one user's rows never interleave with another's.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/ids.h"
#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "core/status.h"
#include "mailbox/message.h"
#include "mailbox/store_backend.h"

namespace qim::embedded {

inline constexpr std::string_view kIdentityFamily = "identity";
inline constexpr std::string_view kFrontierFamily = "frontier";
inline constexpr std::string_view kEntriesFamily = "entries";
inline constexpr std::string_view kProofsFamily = "proofs";
inline constexpr std::string_view kLedgerFamily = "ledger";
inline constexpr std::string_view kLedgerUsersFamily = "ledger_users";

// A u64 as the 8 little-endian bytes the max merge operator combines (frontier offsets, proof seqs).
std::string u64_value(uint64_t v);
Result<uint64_t> decode_u64_value(std::string_view bytes, std::string_view what);

std::string identity_key(ShardId shard, Epoch epoch, const DispatchId& id);
std::string identity_value(const StoredIdentity& stored, int64_t expires_ms);
struct IdentityRow {
  StoredIdentity stored;
  int64_t expires_ms = 0;
};
Result<IdentityRow> decode_identity(const DispatchId& id, std::string_view value);
// Only the expiry, for the garbage collector's scan.
Result<int64_t> identity_expiry(std::string_view value);

std::string frontier_prefix(ShardId shard);
std::string frontier_key(ShardId shard, Epoch epoch);
// The frontier a row stands for; CorruptEntry if the key or value is malformed or out of range.
Result<MailboxSeq> decode_frontier(std::string_view key, std::string_view value);

std::string user_prefix(const UserId& user);
std::string entry_key(const UserId& user, MailboxSeq seq);
std::string entry_value(const Message& message, int64_t expires_ms);
// The expiry of an entry row, read without decoding the message (the compaction filter's view).
Result<int64_t> entry_expiry(std::string_view value);
// The seq of an entry key whose user prefix is `prefix_size` bytes long.
Result<MailboxSeq> entry_seq(std::string_view key, size_t prefix_size);
Result<Message> entry_message(std::string_view value);

std::string proof_prefix(const UserId& user, DayBucket day);
std::string proof_key(const UserId& user, DayBucket day, Epoch epoch);

std::string ledger_key(const UserId& user);
std::string ledger_value(const RetentionLedger& ledger);
Result<RetentionLedger> decode_ledger(std::string_view value);

// The user's raw bytes follow the shard (no length byte), so a shard's users list in byte order.
std::string ledger_users_prefix(ShardId shard);
std::string ledger_user_key(ShardId shard, std::string_view user);

}  // namespace qim::embedded
