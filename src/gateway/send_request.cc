#include "gateway/send_request.h"

#include "gateway/membership.h"
#include "outbox/outbox_record.h"

namespace qim {

SendTarget resolve_send_target(const UserId& sender, const SendFrame& f) {
  SendTarget out;
  if (f.to) {
    auto c = direct_conversation(sender, *f.to);
    if (!c.ok()) {
      out.message = c.error().message();
      return out;
    }
    out.conversation = std::move(c).value();
    out.ok = true;
    return out;
  }
  out.conversation = *f.conversation;
  if (auto c = Conversation::of(out.conversation); c.ok() && c->group_id() != nullptr) {
    if (f.client_msg_id.starts_with("~")) {
      out.message = "field 'client_msg_id': in a group it cannot start with '~' (the system entries' ids)";
      return out;
    }
    out.group = *c->group_id();
    out.ok = true;
    return out;
  }
  if (!is_member(sender, out.conversation)) {
    out.code = WireCode::kForbidden;
    out.message = "you are not a member of conversation '" + out.conversation.str() + "'";
    return out;
  }
  out.ok = true;
  return out;
}

std::optional<SentMessage> submit_send(const SendDoor& door, const UserId& sender, const DeviceId& device,
                                       const std::string& client_msg_id, const ConversationId& conversation,
                                       std::string body, SendDone done) {
  const uint64_t fingerprint = send_fingerprint(conversation, body);
  const std::string key = SendDedup::key_of(sender, client_msg_id);
  const int64_t now = door.clock->now_ms();
  auto begin = door.dedup->begin(key, now, [done](const Result<SentMessage>& sent) { done(sent, true); });
  if (begin.kind == SendDedup::Kind::kDone) return *begin.sent;
  if (begin.kind == SendDedup::Kind::kWaiting) return std::nullopt;  // told when the first append completes

  OutboxRecord record{conversation, sender, device, client_msg_id, now, std::move(body)};
  Log& outbox = *door.outbox;
  const uint32_t partition = outbox_partition_of(conversation, outbox.partition_count());
  if (door.started) door.started();
  outbox.append(partition, conversation.str(), encode_outbox_record(record),
                [dedup = door.dedup, finished = door.finished, key, conversation, partition, now, fingerprint,
                 done](Result<Offset> offset) {
                  // Only now, with the record durable, does the key become a known duplicate.
                  Result<SentMessage> sent =
                      offset.ok() ? Result<SentMessage>(SentMessage{message_id_of(partition, *offset),
                                                                    conversation, now, fingerprint})
                                  : Result<SentMessage>(offset.error());
                  dedup->complete(key, sent);
                  done(sent, false);
                  if (finished) finished();
                });
  return std::nullopt;
}

std::optional<SendRefusal> send_refusal(const std::string& client_msg_id, uint64_t fingerprint,
                                        const SentMessage& sent) {
  if (sent.fingerprint == fingerprint) return std::nullopt;
  return SendRefusal{WireCode::kInvalidArgument,
                     "client_msg_id '" + client_msg_id + "' was already used for another message"};
}

}  // namespace qim
