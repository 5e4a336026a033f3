#include "lifecycle/redis/redis_message_state_store.h"

#include <map>

#include "core/mailbox_seq.h"

#include "mailbox/redis/scripted_instance.h"

namespace qim {

namespace {

// Checks the types of the keys before the first write (Redis does not undo a script's earlier writes, and
// WRONGTYPE is the only failure a script could meet midway), then raises the watermark at KEYS[#KEYS] to
// ARGV[#ARGV] if it is below. Lua numbers are doubles: offsets are below 2^48, exact.
#define QIM_MESSAGE_SCRIPT(STATE)                                                                    \
  "local wk = KEYS[#KEYS]\n"                                                                         \
  "local t = redis.call('TYPE', wk)['ok']\n"                                                         \
  "if t ~= 'none' and t ~= 'string' then\n"                                                          \
  "  return redis.error_reply('WRONGTYPE ' .. wk .. ' is a ' .. t .. ', expected a string')\n"       \
  "end\n"                                                                                            \
  "local w = redis.call('GET', wk)\n"                                                                \
  "if w and not tonumber(w) then return redis.error_reply('QIM_CORRUPT ' .. wk .. ' is no number') " \
  "end\n" STATE                                                                                      \
  "local nw = ARGV[#ARGV]\n"                                                                         \
  "if (not w) or tonumber(w) < tonumber(nw) then redis.call('SET', wk, nw) end\n"                    \
  "return 1\n"

// KEYS: state hash, watermark. ARGV: event offset, state bytes, new watermark. The state is replaced only
// by an event at the same or a later offset.
constexpr std::string_view kPutScript = QIM_MESSAGE_SCRIPT(
    "local s = redis.call('TYPE', KEYS[1])['ok']\n"
    "if s ~= 'none' and s ~= 'hash' then\n"
    "  return redis.error_reply('WRONGTYPE ' .. KEYS[1] .. ' is a ' .. s .. ', expected a hash')\n"
    "end\n"
    "local at = redis.call('HGET', KEYS[1], 'at')\n"
    "if (not at) or (tonumber(at) or -1) <= tonumber(ARGV[1]) then\n"
    "  redis.call('HSET', KEYS[1], 'at', ARGV[1], 's', ARGV[2])\n"
    "end\n");

// KEYS: watermark. ARGV: new watermark.
constexpr std::string_view kRaiseScript = QIM_MESSAGE_SCRIPT("");

#undef QIM_MESSAGE_SCRIPT

enum Script : size_t { kPut = 0, kRaise = 1, kScriptCount = 2 };

ScriptTable scripts() {
  ScriptTable t;
  t.count = kScriptCount;
  t.name = [](size_t i) -> std::string_view {
    return i == kPut ? "message_state_put" : "message_watermark_raise";
  };
  t.source = [](size_t i) { return i == kPut ? kPutScript : kRaiseScript; };
  return t;
}

uint32_t partition_of(MessageId id) {
  return static_cast<uint32_t>(id.value >> kOffsetBits);
}

Result<std::optional<MessageState>> decode_reply(const RedisReply& r, MessageId id, const RedisEndpoint& at) {
  if (r.is_error() && r.str.starts_with("WRONGTYPE"))
    return Error(Errc::kCorruptEntry,
                 "message state of " + std::to_string(id.value) + ": the key holds another type");
  QIM_ASSIGN_OR_RETURN(RedisReply checked, reply_or_error(r, at));
  if (checked.is_nil()) return std::optional<MessageState>();
  auto state = decode_message_state(checked.str);
  if (!state.ok())
    return Error(Errc::kCorruptEntry,
                 "message state of " + std::to_string(id.value) + ": " + state.error().message());
  return std::optional<MessageState>(*std::move(state));
}

}  // namespace

std::string message_state_key(const std::string& prefix, MessageId id) {
  return prefix + "ms:" + std::to_string(id.value);
}
std::string message_watermark_key(const std::string& prefix, uint32_t partition) {
  return prefix + "mw:" + std::to_string(partition);
}

RedisMessageStateStore::RedisMessageStateStore(RedisMessageStateOptions options)
    : options_(std::move(options)) {}

RedisMessageStateStore::~RedisMessageStateStore() = default;

Result<std::unique_ptr<RedisMessageStateStore>> RedisMessageStateStore::open(
    const RedisMessageStateOptions& options) {
  if (options.endpoints.empty())
    return Error(Errc::kConfig,
                 "the redis message state store needs at least one endpoint (QIM_MAILBOX_REDIS)");
  std::unique_ptr<RedisMessageStateStore> store(new RedisMessageStateStore(options));
  for (const auto& text : options.endpoints) {
    QIM_ASSIGN_OR_RETURN(RedisEndpoint endpoint, RedisEndpoint::parse(text));
    store->instances_.push_back(std::make_unique<ScriptedInstance>(
        std::move(endpoint), options.timeouts, options.pool_size, store->counters_, scripts()));
    QIM_RETURN_IF_ERROR(store->instances_.back()->load_scripts());
  }
  return store;
}

Status RedisMessageStateStore::script(uint32_t partition, size_t which, std::vector<std::string> keys,
                                      std::vector<std::string> args, std::string_view what) {
  ScriptedInstance& instance = *instances_[instance_of(partition)];
  const IndexedScriptCall call{which, keys, args};
  QIM_ASSIGN_OR_RETURN(auto replies, instance.eval(std::span(&call, 1)));
  const RedisReply& r = replies.at(0);
  if (r.is_error() && (r.str.starts_with("WRONGTYPE") || r.str.starts_with("QIM_CORRUPT")))
    return Error(Errc::kCorruptEntry, "message state store: " + std::string(what) + ": " + r.str);
  QIM_ASSIGN_OR_RETURN(RedisReply ok, reply_or_error(r, instance.endpoint()));
  if (ok.kind != RedisReply::Kind::kInteger)
    return Error(Errc::kTransport,
                 "redis " + instance.endpoint().to_string() + ": unexpected reply to " + std::string(what));
  return {};
}

Status RedisMessageStateStore::put(const MessageState& state, uint32_t partition, uint64_t event_offset) {
  // The state's keys are those of the message's own partition (one conversation, one partition).
  const uint32_t home = partition_of(state.id);
  if (home != partition)
    return Error(Errc::kInvalidArgument, "message " + std::to_string(state.id.value) +
                                             " is not of outbox partition " + std::to_string(partition));
  counters_.updates += 2;
  return script(partition, kPut,
                {message_state_key(options_.key_prefix, state.id),
                 message_watermark_key(options_.key_prefix, partition)},
                {std::to_string(event_offset), encode_message_state(state), std::to_string(event_offset + 1)},
                "write the state of " + std::to_string(state.id.value));
}

Status RedisMessageStateStore::raise_watermark(uint32_t partition, uint64_t event_offset) {
  counters_.updates++;
  return script(partition, kRaise, {message_watermark_key(options_.key_prefix, partition)},
                {std::to_string(event_offset + 1)}, "raise the watermark of " + std::to_string(partition));
}

Result<uint64_t> RedisMessageStateStore::watermark(uint32_t partition) {
  ScriptedInstance& instance = *instances_[instance_of(partition)];
  counters_.reads++;
  const RedisCommand get{"GET", message_watermark_key(options_.key_prefix, partition)};
  QIM_ASSIGN_OR_RETURN(auto replies, instance.run(std::span(&get, 1)));
  RedisReply& r = replies.at(0);
  if (r.is_error() && r.str.starts_with("WRONGTYPE"))
    return Error(Errc::kCorruptEntry, "message state store: the watermark of " + std::to_string(partition) +
                                          " holds another type");
  QIM_ASSIGN_OR_RETURN(r, reply_or_error(std::move(r), instance.endpoint()));
  if (r.is_nil()) return uint64_t{0};
  uint64_t v = 0;
  try {
    size_t used = 0;
    v = std::stoull(r.str, &used);
    if (used != r.str.size()) throw std::invalid_argument("trailing bytes");
  } catch (const std::exception&) {
    return Error(Errc::kCorruptEntry, "message state store: the watermark of " + std::to_string(partition) +
                                          " is not a number: '" + r.str + "'");
  }
  return v;
}

Result<std::optional<MessageState>> RedisMessageStateStore::load(MessageId id) {
  QIM_ASSIGN_OR_RETURN(auto many, load_many(std::span(&id, 1)));
  return std::move(many.at(0));
}

Result<std::vector<std::optional<MessageState>>> RedisMessageStateStore::load_many(
    std::span<const MessageId> ids) {
  // One pipeline per instance, its replies put back in the order asked.
  std::map<size_t, std::vector<size_t>> by_instance;  // instance -> indexes into ids
  for (size_t i = 0; i < ids.size(); ++i) by_instance[instance_of(partition_of(ids[i]))].push_back(i);
  std::vector<std::optional<MessageState>> out(ids.size());
  for (const auto& [instance, indexes] : by_instance) {
    std::vector<RedisCommand> commands;
    commands.reserve(indexes.size());
    for (size_t i : indexes)
      commands.push_back({"HGET", message_state_key(options_.key_prefix, ids[i]), "s"});
    counters_.reads += commands.size();
    ScriptedInstance& at = *instances_[instance];
    QIM_ASSIGN_OR_RETURN(auto replies, at.run(commands));
    for (size_t k = 0; k < indexes.size(); ++k) {
      QIM_ASSIGN_OR_RETURN(out[indexes[k]], decode_reply(replies.at(k), ids[indexes[k]], at.endpoint()));
    }
  }
  return out;
}

}  // namespace qim
