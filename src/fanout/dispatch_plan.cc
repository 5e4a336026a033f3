#include "fanout/dispatch_plan.h"

#include <algorithm>
#include <map>

#include "fanout/recipients.h"
#include "mailbox/redaction.h"

namespace qim {

DispatchId dispatch_id_for(MessageId message, ShardId shard, uint32_t part) {
  return message_dispatch_id(message, shard, part);  // one naming rule: the store finds a recalled SEND by it
}

Result<std::vector<ShardDispatch>> plan_dispatches(const OutboxRecord& record, uint32_t partition,
                                                   Offset offset, const ShardMap& shards,
                                                   uint32_t chunk_entries) {
  QIM_ASSIGN_OR_RETURN(std::vector<UserId> recipients, resolve_recipients(record));
  return plan_dispatches_to(record, partition, offset, shards, chunk_entries, std::move(recipients));
}

Result<std::vector<ShardDispatch>> plan_dispatches_to(const OutboxRecord& record, uint32_t partition,
                                                      Offset offset, const ShardMap& shards,
                                                      uint32_t chunk_entries,
                                                      std::vector<UserId> recipients) {
  if (recipients.empty()) return Error(Errc::kInvalidArgument, "a message without recipients");
  if (chunk_entries == 0 || chunk_entries > kMaxChunkEntries) {
    return Error(Errc::kInvalidArgument, "chunk size " + std::to_string(chunk_entries) + " outside 1.." +
                                             std::to_string(kMaxChunkEntries));
  }
  QIM_RETURN_IF_ERROR(check_offset(offset));
  const MessageId id = message_id_of(partition, offset);
  Message message = to_message(record, id);
  QIM_RETURN_IF_ERROR(validate_message(message));

  std::map<uint32_t, std::vector<UserId>> by_shard;  // ordered: records come out in shard order
  for (auto& user : recipients) by_shard[shards.shard_of(user).value].push_back(std::move(user));
  // A record never holds more than the log takes nor more chunks than the store accepts.
  const size_t per_record = std::min(kMaxRecipientsPerDispatch, size_t{chunk_entries} * kMaxChunks);
  std::vector<ShardDispatch> out;
  for (auto& [shard, users] : by_shard) {
    for (size_t first = 0, part = 0; first < users.size(); first += per_record, ++part) {
      const size_t last = std::min(users.size(), first + per_record);
      ShardDispatch d{ShardId{shard}, {}};
      d.record.message = message;
      for (size_t i = first; i < last; i += chunk_entries) {
        const size_t end = std::min(last, i + chunk_entries);
        d.record.chunks.emplace_back(users.begin() + static_cast<std::ptrdiff_t>(i),
                                     users.begin() + static_cast<std::ptrdiff_t>(end));
      }
      d.record.identity =
          make_identity(dispatch_id_for(id, d.shard, static_cast<uint32_t>(part)), message, d.record.chunks);
      out.push_back(std::move(d));
    }
  }
  return out;
}

size_t add_former_recipients(std::vector<ShardDispatch>& plan, const ShardMap& shards,
                             std::vector<UserId> former) {
  if (former.empty() || plan.empty()) return 0;
  std::map<uint32_t, std::vector<UserId>> by_shard;
  for (auto& user : former) by_shard[shards.shard_of(user).value].push_back(std::move(user));
  const Message message = plan.front().record.message;
  size_t left_out = 0;
  for (auto& [shard, users] : by_shard) {
    if (users.size() > kMaxFormerRecipients) {
      left_out += users.size() - kMaxFormerRecipients;
      users.resize(kMaxFormerRecipients);
    }
    const DispatchId first = dispatch_id_for(message.id, ShardId{shard}, 0);
    auto at = std::find_if(plan.begin(), plan.end(), [&](const ShardDispatch& d) {
      return d.shard.value > shard || d.record.identity.id == first;
    });
    if (at == plan.end() || at->record.identity.id != first) {
      ShardDispatch own{ShardId{shard}, {}};
      own.record.message = message;
      at = plan.insert(at, std::move(own));
    }
    DispatchRecord& r = at->record;
    r.former_recipients = std::move(users);
    r.identity = make_identity(first, r.message, r.chunks, r.former_recipients);
  }
  return left_out;
}

}  // namespace qim
