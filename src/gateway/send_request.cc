#include "gateway/send_request.h"

#include "core/conversation.h"
#include "gateway/membership.h"
#include "lifecycle/event_target.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace {

// UNKNOWN_USER for a direct conversation whose peer the registry does not hold.
bool known_peer(const UserId& sender, const ConversationId& conversation, const UserRegistry* users,
                SendTarget& out) {
  if (users == nullptr) return true;
  auto c = Conversation::of(conversation);
  if (!c.ok() || c->direct_pair() == nullptr) return true;
  auto peer = c->direct_pair()->peer_of(sender);
  if (!peer || users->exists(*peer)) return true;
  out.ok = false;
  out.code = WireCode::kUnknownUser;
  out.message = "no user '" + peer->str() + "' in the user registry";
  return false;
}

}  // namespace

SendTarget resolve_send_target(const UserId& sender, const SendFrame& f, const UserRegistry* users) {
  SendTarget out;
  if (f.to) {
    auto c = direct_conversation(sender, *f.to);
    if (!c.ok()) {
      out.message = c.error().message();
      return out;
    }
    out.conversation = std::move(c).value();
    out.ok = known_peer(sender, out.conversation, users, out);
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
  out.ok = known_peer(sender, out.conversation, users, out);
  return out;
}

std::optional<SendRefusal> check_reply_target(Log& outbox, const ConversationId& conversation,
                                              MessageId reply_to) {
  const uint32_t partition = outbox_partition_of(conversation, outbox.partition_count());
  auto target = read_event_target(outbox, reply_to, partition, UINT64_MAX);
  if (!target.ok()) {
    return SendRefusal{wire_code_of(target.code()), "reply_to " + std::to_string(reply_to.value) +
                                                        " could not be checked: " + target.error().message() +
                                                        "; nothing was sent"};
  }
  // Another conversation's message (in the same partition) is refused as no message: it reveals nothing.
  if (!*target || (*target)->conversation != conversation) {
    return SendRefusal{WireCode::kUnknownMessage, "reply_to " + std::to_string(reply_to.value) +
                                                      " is no message of conversation '" +
                                                      conversation.str() + "'; nothing was sent"};
  }
  return std::nullopt;
}

std::optional<SentMessage> submit_send(const SendDoor& door, const UserId& sender, const DeviceId& device,
                                       const std::string& client_msg_id, const ConversationId& conversation,
                                       std::string body, std::optional<MessageId> reply_to, SendDone done) {
  const uint64_t fingerprint = send_fingerprint(conversation, body, reply_to);
  const std::string key = SendDedup::key_of(sender, client_msg_id);
  const int64_t now = door.clock->now_ms();
  auto begin = door.dedup->begin(key, now, [done](const Result<SentMessage>& sent) { done(sent, true); });
  if (begin.kind == SendDedup::Kind::kDone) return *begin.sent;
  if (begin.kind == SendDedup::Kind::kWaiting) return std::nullopt;  // told when the first append completes

  if (door.started) door.started();
  auto append = [outbox = door.outbox, dedup = door.dedup, finished = door.finished, key, conversation,
                 sender, device, client_msg_id, now, fingerprint, reply_to, done](std::string final_body) {
    OutboxRecord record{conversation, sender, device, client_msg_id, now, std::move(final_body)};
    record.reply_to = reply_to;
    const uint32_t partition = outbox_partition_of(conversation, outbox->partition_count());
    outbox->append(
        partition, conversation.str(), encode_outbox_record(record),
        [dedup, finished, key, conversation, partition, now, fingerprint, done](Result<Offset> offset) {
          // Only now, with the record durable, does the key become a known duplicate.
          Result<SentMessage> sent = offset.ok()
                                         ? Result<SentMessage>(SentMessage{message_id_of(partition, *offset),
                                                                           conversation, now, fingerprint})
                                         : Result<SentMessage>(offset.error());
          dedup->complete(key, sent);
          done(sent, false);
          if (finished) finished();
        });
  };
  if (door.hook == nullptr) {
    append(std::move(body));
    return std::nullopt;
  }
  door.hook->check(
      BeforeSendCall{conversation, sender, device, client_msg_id, std::move(body)},
      [append, dedup = door.dedup, finished = door.finished, key, done](Result<std::string> verdict) {
        if (verdict.ok()) {
          append(std::move(verdict).value());
          return;
        }
        const Result<SentMessage> refused(verdict.error());
        dedup->complete(key, refused);  // the key is free: a retry asks the hook again
        done(refused, false);
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

std::optional<SendRefusal> blocked_send(const UserId& sender, const ConversationId& conversation,
                                        const std::set<UserId>& blockers) {
  auto c = Conversation::of(conversation);
  const DirectPair* pair = c.ok() ? c->direct_pair() : nullptr;
  if (pair == nullptr) return std::nullopt;
  auto peer = pair->peer_of(sender);
  if (!peer || *peer == sender || !blockers.contains(*peer)) return std::nullopt;
  return SendRefusal{WireCode::kBlocked, "'" + peer->str() + "' does not accept your messages"};
}

}  // namespace qim
