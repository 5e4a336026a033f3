#include "gateway/message_event_requests.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cctype>
#include <chrono>
#include <thread>

#include "attachments/message_body.h"
#include "core/conversation.h"
#include "gateway/connection.h"
#include "gateway/gateway_context.h"
#include "gateway/group_requests.h"
#include "gateway/membership.h"
#include "gateway/protocol/server_frame.h"
#include "lifecycle/event_target.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace net = boost::asio;

Result<std::string> edit_body(Log& outbox, HistoryStore* history, const ConversationId& conversation,
                              MessageId target, uint32_t partition, std::string_view text) {
  QIM_ASSIGN_OR_RETURN(auto original, read_event_target_body(outbox, target, partition));
  if (!original && history != nullptr && target.value != UINT64_MAX) {
    // The Outbox no longer keeps the SEND: the history row has the message's current body, whose
    // attachments are the SEND's (no edit changes them).
    QIM_ASSIGN_OR_RETURN(auto page,
                         history->read(HistoryQuery{conversation, MessageId{target.value + 1}, 1}));
    if (!page.messages.empty() && page.messages.front().id.value == target.value)
      original = page.messages.front().body;
  }
  if (!original) return std::string(text);
  return attachments::edited_body(*original, text);
}

WireCode wire_code_of(EventRefusal refusal) {
  switch (refusal) {
    case EventRefusal::kNone:
      return WireCode::kInternal;
    case EventRefusal::kUnknownMessage:
    case EventRefusal::kOtherConversation:
      return WireCode::kUnknownMessage;
    case EventRefusal::kPastWindow:
      return WireCode::kWindowPassed;
    case EventRefusal::kNotAllowed:
      return WireCode::kNotAllowed;
    case EventRefusal::kRecalled:
      return WireCode::kMessageRecalled;
    case EventRefusal::kBadReaction:
      return WireCode::kBadReaction;
    case EventRefusal::kReactionLimit:
      return WireCode::kReactionLimit;
    case EventRefusal::kReactionUnchanged:
      return WireCode::kReactionUnchanged;
  }
  return WireCode::kInternal;
}

Status annotate_history_page(MessageStateStore& messages, HistoryPage& page,
                             const std::optional<UserId>& reader, Log* outbox) {
  if (page.messages.empty()) return {};
  std::vector<MessageId> ids;
  ids.reserve(page.messages.size());
  for (const Message& m : page.messages) ids.push_back(m.id);
  QIM_ASSIGN_OR_RETURN(auto states, messages.load_many(ids));
  for (size_t i = 0; i < states.size() && i < ids.size(); ++i) {
    if (!states[i]) continue;
    MessageLife life{states[i]->recalled(), states[i]->edited_at_ms(), states[i]->edit_count(), {}};
    // A recalled message's reactions are no longer served (its events stay in the state, for replays).
    if (!life.recalled) {
      for (Reaction& r : states[i]->reactions()) {
        const bool mine = reader && std::find(r.users.begin(), r.users.end(), *reader) != r.users.end();
        life.reactions.push_back(
            ReactionCount{std::move(r.reaction), static_cast<uint32_t>(r.users.size()), mine});
      }
    }
    if (life.recalled || life.edit_count > 0 || !life.reactions.empty()) page.life[ids[i].value] = life;
    // Fanout decided the recall; the archiver may not have written the tombstone yet: never serve the body.
    if (life.recalled) {
      page.messages[i].body.clear();
    } else if (life.edit_count > 0 && outbox != nullptr) {
      // The marks are fanout's; the row's body is the archiver's, which lags it (docs/adr/0155). The last
      // edit's own record holds the body the row will get: serve that, so marks and body agree. Without it
      // (retention took it), the row's body, which the archiver wrote long before.
      if (auto edit = states[i]->last_edit_offset()) {
        QIM_ASSIGN_OR_RETURN(auto body, read_edit_body(*outbox, ids[i], *edit));
        if (body) page.messages[i].body = std::move(*body);
      }
    }
  }
  return {};
}

namespace {

std::string upper_name(MessageEventKind kind) {
  std::string what(message_event_name(kind));
  std::transform(what.begin(), what.end(), what.begin(), [](unsigned char c) { return std::toupper(c); });
  return what;
}

}  // namespace

uint64_t message_event_fingerprint(const MessageEventFrame& f) {
  return send_fingerprint(f.conversation, std::string(message_event_name(f.kind)) + ":" +
                                              std::to_string(f.target.value) + ":" + f.body);
}

std::string message_event_answer(const std::string& ref, const MessageEventFrame& f, uint64_t fingerprint,
                                 const Result<SentMessage>& sent) {
  if (!sent.ok()) return encode_error(ref, wire_code_of(sent.code()), sent.error().message());
  if (sent->fingerprint != fingerprint) {
    return encode_error(
        ref, WireCode::kInvalidArgument,
        "client_msg_id '" + f.client_msg_id + "' was already used for another message or event");
  }
  return encode_event_ack(
      ref, EventAck{f.kind, f.client_msg_id, sent->id, f.target, sent->conversation, sent->server_time_ms});
}

std::optional<SendRefusal> message_event_precheck(const MessageEventDeps& deps, const UserId& actor,
                                                  const MessageEventFrame& f) {
  if (deps.messages == nullptr || deps.outbox == nullptr)
    return SendRefusal{WireCode::kUnavailable, upper_name(f.kind) + " is not served by this deployment"};
  auto conversation = Conversation::of(f.conversation);
  const GroupId* group = conversation.ok() ? conversation->group_id() : nullptr;
  if (group == nullptr && !is_member(actor, f.conversation)) {
    return SendRefusal{WireCode::kForbidden,
                       "you are not a member of conversation '" + f.conversation.str() + "'"};
  }
  if (group != nullptr && deps.groups == nullptr)
    return SendRefusal{WireCode::kUnavailable, "groups are not served by this gateway"};
  return std::nullopt;
}

std::string append_message_event(const MessageEventDeps& deps, const std::string& ref, const UserId& actor,
                                 const DeviceId& device, const MessageEventFrame& f, int64_t now_ms,
                                 const std::string& key) {
  const std::string what = upper_name(f.kind);
  const uint64_t fingerprint = message_event_fingerprint(f);
  auto count = [&](WireCode code) {
    if (deps.refused) deps.refused(code);
  };
  auto refuse = [&](WireCode code, const std::string& message) {
    deps.dedup->complete(key, Error(Errc::kInvalidArgument, message));  // the key is free again
    count(code);
    return encode_error(ref, code, message);
  };
  auto failed = [&](const Error& e) {
    deps.dedup->complete(key, e);
    return encode_error(ref, wire_code_of(e.code()), what + " could not be checked: " + e.message());
  };
  auto conversation = Conversation::of(f.conversation);
  const GroupId* group = conversation.ok() ? conversation->group_id() : nullptr;
  bool moderates = false;
  if (group != nullptr) {
    GroupCheck check = check_group_member(*deps.groups, *group, actor);
    if (!check.member) return refuse(check.code, check.message);
    moderates = check.member->role == GroupRole::kAdmin || check.member->role == GroupRole::kOwner;
  }
  Log& outbox = *deps.outbox;
  MessageStateStore& messages = *deps.messages;
  const uint32_t partition = outbox_partition_of(f.conversation, outbox.partition_count());
  auto state = messages.load(f.target);
  if (state.ok() && !*state && (f.target.value >> kOffsetBits) == partition) {
    state = read_event_target(outbox, f.target, partition, UINT64_MAX);
  }
  if (!state.ok()) return failed(state.error());
  const MessageEvent event{f.kind, f.target};
  const EventRequest request{event,
                             f.conversation,
                             actor,
                             now_ms,
                             UINT64_MAX,
                             moderates,
                             is_reaction(f.kind) ? f.body : std::string()};
  const EventOutcome outcome = decide_event(*state ? &**state : nullptr, request, deps.policy);
  if (!outcome.applied) {
    return refuse(wire_code_of(outcome.refusal),
                  what + " of message " + std::to_string(f.target.value) +
                      " refused: " + std::string(event_refusal_name(outcome.refusal)));
  }
  // An EDIT replaces the caption of a message with attachments and keeps them (they live in its body,
  // docs/adr/0113): the record carries the whole new body, so fanout, the archiver and replays need no
  // change (edit_body: the SEND read back from the Outbox, else the history row).
  std::string body = f.body;
  if (f.kind == MessageEventKind::kEdit) {
    auto composed = edit_body(outbox, deps.history, f.conversation, f.target, partition, f.body);
    if (!composed.ok()) return failed(composed.error());
    body = std::move(*composed);
    if (body.size() > deps.max_body_bytes) {
      return refuse(WireCode::kTooLarge, "the edited body with the message's attachments is " +
                                             std::to_string(body.size()) + " bytes, over the limit of " +
                                             std::to_string(deps.max_body_bytes));
    }
  }
  OutboxRecord record{f.conversation, actor, device, f.client_msg_id, now_ms, body, std::nullopt, event};
  auto offset = outbox.append_sync(partition, f.conversation.str(), encode_outbox_record(record));
  const Result<SentMessage> sent = offset.ok()
                                       ? Result<SentMessage>(SentMessage{message_id_of(partition, *offset),
                                                                         f.conversation, now_ms, fingerprint})
                                       : Result<SentMessage>(offset.error());
  deps.dedup->complete(key, sent);
  if (!sent.ok()) {
    spdlog::warn("gateway: {} {} of {} failed: {}", what, f.client_msg_id, actor.str(),
                 sent.error().to_string());
    return message_event_answer(ref, f, fingerprint, sent);
  }
  // As a group change's GROUP_OK: the ACK once fanout has decided it (so the next request of any client is
  // checked against it), or its refusal when another event won a race. Polled here (2 ms doubling to 50 ms,
  // up to QIM_GROUP_APPLY_WAIT_MS): events are rare and the callers run this on a pool. A follow-up may move
  // the connection's wait to a timer as GROUP_* does (connection_work.cc).
  const uint64_t at = offset->value;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(deps.apply_wait_ms);
  auto pause = std::chrono::milliseconds(2);
  while (true) {
    auto decided = messages.load(f.target);
    if (decided.ok() && *decided) {
      auto it = (*decided)->events.find(at);
      if (it != (*decided)->events.end()) {
        if (it->second.applied) return message_event_answer(ref, f, fingerprint, sent);
        count(wire_code_of(it->second.refusal));
        return encode_error(ref, wire_code_of(it->second.refusal),
                            what + " of message " + std::to_string(f.target.value) +
                                " refused by fanout: " + std::string(event_refusal_name(it->second.refusal)));
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  return encode_error(ref, WireCode::kUnavailable,
                      what +
                          " was appended but fanout has not decided it yet; it will be decided there "
                          "(read HISTORY rather than repeating it)");
}

void Connection::handle_message_event(const std::string& ref, MessageEventFrame f) {
  GatewayContext* ctx = &ctx_;
  MessageEventDeps deps{ctx->deps.outbox,
                        ctx->deps.messages,
                        ctx->deps.groups,
                        ctx->deps.history,
                        ctx->dedup,
                        ctx->deps.lifecycle,
                        ctx->options.max_body_bytes,
                        ctx->options.group_apply_wait_ms,
                        [ctx](WireCode code) { ctx->metrics.errors(code).Increment(); }};
  const UserId me = principal_->user;
  if (auto refused = message_event_precheck(deps, me, f)) {
    send_error(ref, refused->code, refused->message);
    return;
  }
  const int64_t now = ctx_.deps.clock->now_ms();
  const uint64_t fingerprint = message_event_fingerprint(f);
  const std::string key = SendDedup::key_of(me, f.client_msg_id);
  std::weak_ptr<Connection> weak = weak_from_this();
  auto waiter = [weak, ref, f, fingerprint](const Result<SentMessage>& sent) {
    if (auto self = weak.lock()) {
      auto frame = std::make_shared<const std::string>(message_event_answer(ref, f, fingerprint, sent));
      net::post(self->ws_.get_executor(), [self, frame] { self->enqueue(frame); });
    }
  };
  auto begin = ctx_.dedup->begin(key, now, waiter);
  if (begin.kind == SendDedup::Kind::kDone) {
    enqueue(std::make_shared<const std::string>(message_event_answer(ref, f, fingerprint, *begin.sent)));
    return;
  }
  if (begin.kind == SendDedup::Kind::kWaiting) return;  // answered when the first completes
  run_pooled(ctx_.blocking, ref,
             [deps = std::move(deps), me, device = principal_->device, f = std::move(f), now, key,
              ref]() -> std::string { return append_message_event(deps, ref, me, device, f, now, key); });
}

}  // namespace qim
