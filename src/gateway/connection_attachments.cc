// ATTACH, ATTACHMENT_URL and the check of a SEND's attachments and of its reply_to on the blocking pool
// (docs/protocol.md "Attachments", "Replies"): the object store and the Outbox are never read on a
// connection's strand.
#include <boost/asio/post.hpp>

#include "gateway/attachment_requests.h"
#include "gateway/connection.h"
#include "gateway/gateway_context.h"
#include "gateway/protocol/server_frame.h"
#include "gateway/send_request.h"

namespace qim {

namespace net = boost::asio;

// The check of one SEND's attachments: its outcome is set on the strand.
struct Connection::AttachmentCheck {
  bool done = false;
  attachments::Decided<std::string> body = attachments::Refusal{WireCode::kInternal, "not checked"};
};

void Connection::handle_attachment(const std::string& ref, const AttachmentFrame& f) {
  attachments::AttachmentService* service = ctx_.attachments.get();  // null: ATTACHMENTS_DISABLED
  if (const auto* attach = std::get_if<AttachFrame>(&f)) {
    run_pooled(ctx_.blocking, ref,
               [service, groups = ctx_.deps.groups, privacy = privacy_backend(), ref, user = principal_->user,
                frame = *attach] { return answer_attach(service, groups, privacy, ref, user, frame); });
    return;
  }
  run_pooled(ctx_.blocking, ref,
             [service, history = ctx_.deps.history, groups = ctx_.deps.groups, messages = ctx_.deps.messages,
              ref, user = principal_->user, frame = std::get<AttachmentUrlFrame>(f)] {
               return answer_attachment_url(service, history, groups, messages, ref, user, frame);
             });
}

std::shared_ptr<Connection::AttachmentCheck> Connection::start_attachment_check(
    const std::string& ref, const SendFrame& f, const ConversationId& conversation) {
  attachments::AttachmentService* service = ctx_.attachments.get();
  if (service == nullptr && !f.attachments.empty()) {  // refused at once, before the pool
    const attachments::Refusal disabled = attachments_disabled();
    send_error(ref, disabled.code, disabled.message);
    return nullptr;
  }
  if (!take_pending(ref, "SEND")) return nullptr;
  auto check = std::make_shared<AttachmentCheck>();
  std::weak_ptr<Connection> weak = weak_from_this();
  auto finish = [weak, check](attachments::Decided<std::string> body) {
    if (auto self = weak.lock()) {
      net::post(self->ws_.get_executor(), [self, check, body = std::move(body)]() mutable {
        check->body = std::move(body);
        check->done = true;
        --self->pending_;
        self->drain_writes();
      });
    }
  };
  FairPool::Task task;
  task.deadline = work_deadline();
  task.run = [weak, finish, service, outbox = ctx_.deps.outbox, user = principal_->user, conversation,
              frame = f, max_body = ctx_.options.max_body_bytes] {
    if (weak.expired()) return;
    attachments::Decided<std::string> body = checked_send_body(service, user, conversation, frame, max_body);
    // A reply's target (docs/adr/0125), on the same pool turn: both checks pass or nothing is appended.
    if (frame.reply_to && std::holds_alternative<std::string>(body) && outbox != nullptr) {
      if (auto refusal = check_reply_target(*outbox, conversation, *frame.reply_to))
        body = attachments::Refusal{refusal->code, refusal->message};
    }
    finish(std::move(body));
  };
  task.expired = [finish, deadline_ms = ctx_.options.pending_deadline_ms] {
    finish(attachments::Refusal{WireCode::kUnavailable,
                                "the SEND's check: the gateway did not start it within " +
                                    std::to_string(deadline_ms) +
                                    " ms (busy); nothing was done, retry later"});
  };
  if (!ctx_.blocking.submit(id_, std::move(task))) {
    --pending_;
    send_error(ref, WireCode::kUnavailable, "the gateway is stopping");
    return nullptr;
  }
  return check;
}

bool Connection::attachment_check_done(const OutboxWrite& w) {
  return !w.attach || w.attach->done;
}

void Connection::append_checked_send(OutboxWrite& w) {
  if (auto* refusal = std::get_if<attachments::Refusal>(&w.attach->body)) {
    send_error(w.ref, refusal->code, refusal->message);
    return;
  }
  SendFrame f = std::move(*w.send);
  f.body = std::get<std::string>(std::move(w.attach->body));
  append_send(w.ref, std::move(f), std::move(w.conversation));
}

}  // namespace qim
