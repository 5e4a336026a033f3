// A SEND's deadline (decision 105, GatewayOptions::send_ack_deadline_ms): the answer of a SEND waiting for
// its Outbox append is decided once, on the connection's strand, by whichever comes first: the append's
// outcome (connection.cc, answer_send: SEND_ACK or the append's error) or the deadline (UNAVAILABLE,
// "deadline exceeded"). The append is not withdrawn at the deadline: it may still become durable, and then
// its key is a known duplicate, so the client's retry with the same client_msg_id gets the same message id.
#include <boost/asio/steady_timer.hpp>

#include "gateway/before_send_hook.h"
#include "gateway/connection.h"
#include "gateway/gateway_context.h"

namespace qim {

void Connection::arm_send_deadline(const std::string& ref, const std::string& client_msg_id,
                                   Clock::time_point started, const std::shared_ptr<SendAnswer>& answer) {
  const int64_t deadline_ms = send_deadline_ms();
  if (deadline_ms <= 0) return;
  answer->deadline = std::make_unique<boost::asio::steady_timer>(ws_.get_executor());
  answer->deadline->expires_at(started + std::chrono::milliseconds(deadline_ms));
  // The handler holds `answer` (and so the timer) until it runs: at the deadline, or cancelled by take().
  answer->deadline->async_wait(
      [self = shared_from_this(), ref, client_msg_id, answer](boost::system::error_code ec) {
        if (ec || !answer->take()) return;
        self->refuse_late_send(ref, client_msg_id);
      });
}

// The deadline covers the durable append; the before-send hook's wait comes on top of it (its bound:
// a worker within the timeout, then the call's timeout), so a slow hook is not mistaken for a slow disk.
int64_t Connection::send_deadline_ms() const {
  const int64_t base = ctx_.options.send_ack_deadline_ms;
  if (base <= 0 || ctx_.deps.before_send == nullptr) return base;
  return base + ctx_.deps.before_send->bound().count();
}

bool Connection::past_send_deadline(Clock::duration took) const {
  const int64_t deadline_ms = send_deadline_ms();
  return deadline_ms > 0 && took > std::chrono::milliseconds(deadline_ms);
}

void Connection::refuse_late_send(const std::string& ref, const std::string& client_msg_id) {
  ctx_.metrics.sends_late.Increment();
  send_error(ref, WireCode::kUnavailable,
             "SEND '" + client_msg_id + "': deadline exceeded: not durable within " +
                 std::to_string(send_deadline_ms()) +
                 " ms (QIM_SEND_ACK_DEADLINE_MS); it may still be stored: retry with the same client_msg_id "
                 "(a duplicate is answered with the first's message id)");
}

bool Connection::SendAnswer::take() {
  if (answered) return false;
  answered = true;
  if (deadline) deadline->cancel();
  return true;
}

}  // namespace qim
