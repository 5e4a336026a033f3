#pragma once
// The message state store on Redis, for the redis deployment (docs/adr/0128). The keys of Outbox
// partition P live on instance P mod N, under the deployment's key prefix (QIM_MAILBOX_REDIS_PREFIX):
//
//   {p}ms:{message id}   HASH  "at" -> the Outbox offset of the event that wrote it (decimal),
//                              "s"  -> encode_message_state (opaque bytes: never a field per state field)
//   {p}mw:{partition}    STRING the partition's watermark (decimal)
//
// A message id is (partition << 48 | offset), so a message's state and its partition's watermark are on
// one instance, and put() is one Lua script that writes both: Redis runs a script alone, so there is no
// moment at which one is written and the other not. The script keeps the watermark a maximum, and the
// state is replaced only by a put of an event at the same or a later offset (a delayed write of an older
// decision, e.g. from a fanout that lost its partition, never replaces a newer one).
// Every command has a timeout and the pools are bounded: a down Redis is Transport or Timeout.

#include <memory>
#include <string>
#include <vector>

#include "lifecycle/message_state_store.h"
#include "mailbox/op_counters.h"
#include "mailbox/redis/redis_connection.h"

namespace qim {

class ScriptedInstance;

struct RedisMessageStateOptions {
  std::vector<std::string> endpoints;  // "host:port" each (QIM_MAILBOX_REDIS)
  std::string key_prefix = "qim:";     // QIM_MAILBOX_REDIS_PREFIX
  uint32_t pool_size = 4;              // connections per instance at most
  RedisTimeouts timeouts;
};

// The keys of a message's state and of a partition's watermark under `prefix` (for tests that read the
// engine itself).
std::string message_state_key(const std::string& prefix, MessageId id);
std::string message_watermark_key(const std::string& prefix, uint32_t partition);

class RedisMessageStateStore final : public MessageStateStore {
 public:
  // Config for no endpoint or a malformed one; Transport or Timeout naming an instance that cannot be
  // reached (its scripts are loaded at open).
  static Result<std::unique_ptr<RedisMessageStateStore>> open(const RedisMessageStateOptions& options);
  ~RedisMessageStateStore() override;

  // One HGET (one pipeline per instance for load_many). CorruptEntry naming the id for a value that does
  // not decode or a key of another type.
  Result<std::optional<MessageState>> load(MessageId id) override;
  Result<std::vector<std::optional<MessageState>>> load_many(std::span<const MessageId> ids) override;
  // One script each. Transport naming the instance and reply for an error reply (WRONGTYPE: nothing was
  // written), Transport/Timeout for the socket.
  Status put(const MessageState& state, uint32_t partition, uint64_t event_offset) override;
  Status raise_watermark(uint32_t partition, uint64_t event_offset) override;
  Result<uint64_t> watermark(uint32_t partition) override;

  OpCounts op_counts() const { return counters_.snapshot(); }
  // The instance (index into options.endpoints) holding partition `partition`'s keys.
  size_t instance_of(uint32_t partition) const { return partition % instances_.size(); }

 private:
  RedisMessageStateStore(RedisMessageStateOptions options);
  Status script(uint32_t partition, size_t which, std::vector<std::string> keys,
                std::vector<std::string> args, std::string_view what);

  RedisMessageStateOptions options_;
  OpCounters counters_;
  std::vector<std::unique_ptr<ScriptedInstance>> instances_;
};

}  // namespace qim
