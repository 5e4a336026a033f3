#include "mailbox/message.h"

namespace qim {

Status validate_message(const Message& m) {
  if (m.body.size() > kMaxBodyBytes) {
    return Error(Errc::kInvalidArgument, "message body is " + std::to_string(m.body.size()) +
                                             " bytes, over the limit of " + std::to_string(kMaxBodyBytes));
  }
  if (m.client_msg_id.size() > 64) return Error(Errc::kInvalidArgument, "client message id is over 64 bytes");
  if (m.conversation.empty() || m.sender.empty()) {
    return Error(Errc::kInvalidArgument, "message without a conversation or sender");
  }
  return {};
}

}  // namespace qim
