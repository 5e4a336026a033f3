// A SEND after its checks: the idempotency table, the Outbox append, and the answer, bounded by the SEND's
// deadline (send_ack_deadline_ms, decision 105). The answer is decided once, on the connection's strand, by
// whichever comes first: the append's outcome (SEND_ACK, or the append's error) or the deadline (UNAVAILABLE,
// "deadline exceeded"). The append is not withdrawn at the deadline: it may still become durable, and then
// its key is a known duplicate, so the client's retry with the same client_msg_id gets the same message id.
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <optional>

#include "gateway/connection.h"
#include "gateway/gateway_context.h"
#include "gateway/protocol/server_frame.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace net = boost::asio;

namespace {

// The outcome of one SEND on its way to its answer. Touched on the connection's strand only.
struct SendAnswer {
  bool answered = false;
  std::optional<net::steady_timer> deadline;  // armed when the SEND has a deadline and waits for an append
};

}  // namespace

void Connection::append_send(const std::string& ref, SendFrame f, ConversationId conversation) {
  const UserId& me = principal_->user;
  const uint64_t fingerprint = send_fingerprint(conversation, f.body);
  const std::string key = SendDedup::key_of(me, f.client_msg_id);
  const auto started = Clock::now();
  auto answer = std::make_shared<SendAnswer>();
  auto reply = [self = shared_from_this(), ref, id = f.client_msg_id, fingerprint, started, answer](
                   const Result<SentMessage>& sent, bool duplicate) {
    net::post(self->ws_.get_executor(), [self, ref, id, fingerprint, started, sent, duplicate, answer] {
      if (answer->answered) return;  // refused at its deadline already; the retry learns the outcome
      answer->answered = true;
      if (answer->deadline) answer->deadline->cancel();
      self->answer_send(ref, id, fingerprint, started, sent, duplicate);
    });
  };
  const int64_t now = ctx_.deps.clock->now_ms();
  auto begin = ctx_.dedup->begin(key, now, [reply](const Result<SentMessage>& sent) { reply(sent, true); });
  if (begin.kind == SendDedup::Kind::kDone) {
    answer_send(ref, f.client_msg_id, fingerprint, started, *begin.sent, true);
    return;
  }
  if (const int64_t deadline_ms = ctx_.options.send_ack_deadline_ms; deadline_ms > 0) {
    // Also for a duplicate waiting for the first's append (kWaiting): it is no faster than that append.
    answer->deadline.emplace(ws_.get_executor());
    answer->deadline->expires_at(started + std::chrono::milliseconds(deadline_ms));
    answer->deadline->async_wait(
        [self = shared_from_this(), ref, id = f.client_msg_id, answer](boost::system::error_code ec) {
          if (ec || answer->answered) return;
          answer->answered = true;
          self->refuse_late_send(ref, id);
        });
  }
  if (begin.kind == SendDedup::Kind::kWaiting) return;  // answered when the first append completes

  OutboxRecord record{conversation, me, principal_->device, f.client_msg_id, now, std::move(f.body)};
  Log& outbox = *ctx_.deps.outbox;
  const uint32_t partition = outbox_partition_of(conversation, outbox.partition_count());
  ctx_.send_started();
  GatewayContext* ctx = &ctx_;
  outbox.append(partition, conversation.str(), encode_outbox_record(record),
                [ctx, key, conversation, partition, now, fingerprint, reply](Result<Offset> offset) {
                  // Only now, with the record durable, does the key become a known duplicate; also when
                  // the SEND was refused at its deadline meanwhile (its retry gets this message id).
                  Result<SentMessage> sent =
                      offset.ok() ? Result<SentMessage>(SentMessage{message_id_of(partition, *offset),
                                                                    conversation, now, fingerprint})
                                  : Result<SentMessage>(offset.error());
                  ctx->dedup->complete(key, sent);
                  reply(sent, false);
                  ctx->send_answered();
                });
}

void Connection::refuse_late_send(const std::string& ref, const std::string& client_msg_id) {
  ctx_.metrics.sends_late.Increment();
  send_error(ref, WireCode::kUnavailable,
             "SEND '" + client_msg_id + "': deadline exceeded: not durable within " +
                 std::to_string(ctx_.options.send_ack_deadline_ms) +
                 " ms (QIM_SEND_ACK_DEADLINE_MS); it may still be stored: retry with the same client_msg_id "
                 "(a duplicate is answered with the first's message id)");
}

void Connection::answer_send(const std::string& ref, const std::string& client_msg_id, uint64_t fingerprint,
                             Clock::time_point started, const Result<SentMessage>& sent, bool duplicate) {
  if (!sent.ok()) {
    ctx_.metrics.sends_failed.Increment();
    spdlog::warn("gateway: SEND {} of {} failed: {}", client_msg_id, principal_->user.str(),
                 sent.error().to_string());
    send_error(ref, wire_code_of(sent.code()),
               "SEND '" + client_msg_id + "' was not stored: " + sent.error().message());
    return;
  }
  if (sent->fingerprint != fingerprint) {
    send_error(ref, WireCode::kInvalidArgument,
               "client_msg_id '" + client_msg_id + "' was already used for another message");
    return;
  }
  const auto took = Clock::now() - started;
  // The outcome came in time but reached the strand after the deadline (the strand was busy): still late.
  // Every SEND_ACK is thus queued within the deadline by the gateway's own clock.
  if (const int64_t deadline_ms = ctx_.options.send_ack_deadline_ms;
      deadline_ms > 0 && took > std::chrono::milliseconds(deadline_ms)) {
    refuse_late_send(ref, client_msg_id);
    return;
  }
  (duplicate ? ctx_.metrics.sends_duplicate : ctx_.metrics.sends_acked).Increment();
  ctx_.metrics.send_ack_seconds.Observe(std::chrono::duration<double>(took).count());
  SendAck ack{client_msg_id, sent->id, sent->conversation, sent->server_time_ms, duplicate};
  enqueue(std::make_shared<const std::string>(encode_send_ack(ref, ack)));
}

}  // namespace qim
