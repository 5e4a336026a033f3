#include "ctl/format.h"

#include <fmt/format.h>

#include "core/ids.h"

namespace qim::ctl {

std::string escape_body(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (char c : body) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') {
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string entry_line(const client::Entry& e) {
  return fmt::format("seq={} from={} conversation={} body={}", e.seq, e.sender, e.conversation,
                     escape_body(e.body));
}

std::string history_line(const client::Entry& m) {
  return fmt::format("message_id={} from={} time={} body={}", m.message_id, m.sender, m.server_time,
                     escape_body(m.body));
}

std::string ack_line(const client::ServerFrame& ack) {
  return fmt::format("message_id={} conversation={} server_time={} duplicate={}", ack.message_id,
                     ack.conversation, ack.server_time, ack.duplicate);
}

Result<std::string> direct_conversation(std::string_view a, std::string_view b) {
  QIM_ASSIGN_OR_RETURN(UserId first, UserId::parse(a));
  QIM_ASSIGN_OR_RETURN(UserId second, UserId::parse(b));
  QIM_ASSIGN_OR_RETURN(ConversationId id, qim::direct_conversation(first, second));
  return id.str();
}

}  // namespace qim::ctl
