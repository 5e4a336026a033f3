#include "archiver/redis/redis_history_store.h"

#include <map>

#include "mailbox/message_codec.h"
#include "mailbox/redis/redis_pool.h"
#include "mailbox/redis/redis_scripts.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace {

Result<RedisReply> checked(RedisReply reply, const RedisEndpoint& endpoint) {
  if (reply.is_error()) return redis_reply_error(reply, endpoint);
  return reply;
}

Result<uint64_t> parse_id_hex(std::string_view hex) {
  if (hex.size() != 16) return Error(Errc::kCorruptEntry, "not 16 hex digits");
  uint64_t v = 0;
  for (char c : hex) {
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (d < 0) return Error(Errc::kCorruptEntry, "not 16 lowercase hex digits");
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

}  // namespace

std::string history_messages_key(const std::string& prefix, const ConversationId& conversation) {
  return prefix + "hm:" + conversation.str();
}

std::string history_index_key(const std::string& prefix, const ConversationId& conversation) {
  return prefix + "hi:" + conversation.str();
}

std::string history_id_hex(MessageId id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) out[static_cast<size_t>(i)] = kDigits[(id.value >> (4 * (15 - i))) & 0xf];
  return out;
}

RedisHistoryStore::RedisHistoryStore(RedisHistoryOptions options,
                                     std::vector<std::unique_ptr<RedisPool>> pools)
    : options_(std::move(options)), pools_(std::move(pools)) {}

RedisHistoryStore::~RedisHistoryStore() = default;

Result<std::unique_ptr<RedisHistoryStore>> RedisHistoryStore::open(const RedisHistoryOptions& options) {
  if (options.endpoints.empty())
    return Error(Errc::kConfig, "the redis history store needs at least one endpoint (QIM_MAILBOX_REDIS)");
  QIM_ASSIGN_OR_RETURN(
      auto pools, open_pinged_pools(options.endpoints, {options.connect_timeout, options.command_timeout},
                                    options.pool_size));
  return std::unique_ptr<RedisHistoryStore>(new RedisHistoryStore(options, std::move(pools)));
}

size_t RedisHistoryStore::instance_of(const ConversationId& conversation) const {
  return outbox_partition_of(conversation, static_cast<uint32_t>(pools_.size()));
}

Status RedisHistoryStore::append(const Message& message) {
  return append_all(std::span<const Message>(&message, 1));
}

Status RedisHistoryStore::append_all(std::span<const Message> messages) {
  for (const Message& m : messages) QIM_RETURN_IF_ERROR(validate_history_message(m));
  std::map<size_t, std::vector<const Message*>> by_instance;
  for (const Message& m : messages) by_instance[instance_of(m.conversation)].push_back(&m);
  for (const auto& [index, group] : by_instance) {
    RedisPool& pool = *pools_[index];
    for (size_t start = 0; start < group.size(); start += kMaxPipeline) {
      const size_t end = std::min(group.size(), start + kMaxPipeline);
      std::vector<RedisCommand> commands;
      commands.reserve(2 * (end - start));
      for (size_t i = start; i < end; ++i) {
        const Message& m = *group[i];
        const std::string id = history_id_hex(m.id);
        commands.push_back(
            {"HSET", history_messages_key(options_.key_prefix, m.conversation), id, encode_message(m)});
        commands.push_back({"ZADD", history_index_key(options_.key_prefix, m.conversation), "0", id});
      }
      QIM_ASSIGN_OR_RETURN(auto conn, pool.acquire());
      counters_.inserts += commands.size();
      QIM_ASSIGN_OR_RETURN(auto replies, conn->pipeline(commands));
      for (auto& r : replies) QIM_RETURN_IF_ERROR(checked(std::move(r), pool.endpoint()));
    }
  }
  return {};
}

Result<HistoryPage> RedisHistoryStore::read(const HistoryQuery& query) {
  QIM_RETURN_IF_ERROR(validate_history_query(query));
  const ConversationId& conv = query.conversation;
  RedisPool& pool = *pools_[instance_of(conv)];
  const std::string max = query.before ? "(" + history_id_hex(*query.before) : "+";
  QIM_ASSIGN_OR_RETURN(auto conn, pool.acquire());
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(RedisReply index,
                       conn->run({"ZREVRANGEBYLEX", history_index_key(options_.key_prefix, conv), max, "-",
                                  "LIMIT", "0", std::to_string(query.limit + 1)}));
  QIM_ASSIGN_OR_RETURN(index, checked(std::move(index), pool.endpoint()));
  if (index.kind != RedisReply::Kind::kArray)
    return Error(Errc::kCorruptEntry, "history index of " + conv.str() + " is not a sorted set");
  HistoryPage page;
  page.more = index.elements.size() > query.limit;
  if (page.more) index.elements.resize(query.limit);
  if (index.elements.empty()) return page;

  std::vector<uint64_t> ids;
  RedisCommand hmget{"HMGET", history_messages_key(options_.key_prefix, conv)};
  for (const RedisReply& member : index.elements) {
    auto id = parse_id_hex(member.str);
    if (!id.ok()) {
      return Error(Errc::kCorruptEntry, "history index of " + conv.str() + " holds member '" + member.str +
                                            "': " + id.error().message());
    }
    ids.push_back(*id);
    hmget.push_back(member.str);
  }
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(RedisReply values, conn->run(hmget));
  QIM_ASSIGN_OR_RETURN(values, checked(std::move(values), pool.endpoint()));
  if (values.kind != RedisReply::Kind::kArray || values.elements.size() != ids.size())
    return Error(Errc::kTransport, "redis " + pool.endpoint().to_string() + ": unexpected reply to HMGET");
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string where = "history message " + std::to_string(ids[i]) + " of " + conv.str();
    const RedisReply& v = values.elements[i];
    if (v.is_nil())
      return Error(Errc::kCorruptEntry, where + ": the index names it but the message is missing");
    auto m = decode_message(v.str);
    if (!m.ok()) return Error(Errc::kCorruptEntry, where + " does not decode: " + m.error().message());
    if (m->id.value != ids[i] || m->conversation != conv)
      return Error(Errc::kCorruptEntry, where + " does not decode: it holds another id or conversation");
    page.messages.push_back(std::move(m).value());
  }
  return page;
}

}  // namespace qim
