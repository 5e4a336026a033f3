#pragma once
// History on Redis, for the redis deployment: ADR-0018's two writes per message, both on the instance of
// the message's conversation (XXH3-64(conversation) mod N, the hash the Outbox partitions by), under the
// deployment's key prefix (QIM_MAILBOX_REDIS_PREFIX; docs/redis-store.md, "History"):
//
//   {p}hm:{conversation}   HASH: hex16(message id) -> encode_message(...)     the messages
//   {p}hi:{conversation}   ZSET: hex16(message id), score 0                    the conversation's index
//
// Message ids reach 2^60, beyond what a ZSET score (a double) holds exactly, so the index members are
// fixed-width big-endian hex with score 0: Redis orders equal-score members bytewise, which is numeric
// order, and ZREVRANGEBYLEX pages newest first with exact bounds (as the mailbox keys do, redis_keys.h).
// HSET and ZADD are idempotent; they go in one pipeline on one connection, HSET first, so Redis applies
// the message before its index entry. Every command has a timeout and the pool is bounded, so a down
// Redis is a Transport or Timeout error, never a hang. Durability is the instance's (appendfsync).

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "archiver/history_store.h"

namespace qim {

class RedisPool;

struct RedisHistoryOptions {
  std::vector<std::string> endpoints;  // "host:port" each (QIM_MAILBOX_REDIS)
  std::string key_prefix = "qim:";     // QIM_MAILBOX_REDIS_PREFIX
  uint32_t pool_size = 4;              // connections per instance at most
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{2000};
};

// The history keys of a conversation under `prefix` (for the store and for tests that plant rows).
std::string history_messages_key(const std::string& prefix, const ConversationId& conversation);
std::string history_index_key(const std::string& prefix, const ConversationId& conversation);
// 16 lowercase hex digits, most significant first.
std::string history_id_hex(MessageId id);

class RedisHistoryStore final : public HistoryStore {
 public:
  // Config for no endpoint or a malformed one; Transport or Timeout naming an instance that cannot be
  // reached (each is pinged once, so a wrong address fails at start, not at the first message).
  static Result<std::unique_ptr<RedisHistoryStore>> open(const RedisHistoryOptions& options);
  ~RedisHistoryStore() override;

  // HSET then ZADD, one pipeline (2 inserts counted). Thread-safe.
  Status append(const Message& message) override;
  // One pipeline per instance, at most kMaxPipeline messages each.
  Status append_all(std::span<const Message> messages) override;
  // ZREVRANGEBYLEX (limit + 1, to know `more`) then one HMGET: 2 reads counted. CorruptEntry naming the
  // conversation and id for a member or value that does not decode, or an index entry without message.
  Result<HistoryPage> read(const HistoryQuery& query) override;
  OpCounts op_counts() const override { return counters_.snapshot(); }

  // Messages per pipeline in append_all: bounds what one round trip holds.
  static constexpr size_t kMaxPipeline = 256;

  // The instance a conversation's keys live on (index into options.endpoints).
  size_t instance_of(const ConversationId& conversation) const;

 private:
  RedisHistoryStore(RedisHistoryOptions options, std::vector<std::unique_ptr<RedisPool>> pools);

  RedisHistoryOptions options_;
  std::vector<std::unique_ptr<RedisPool>> pools_;
  OpCounters counters_;
};

}  // namespace qim
