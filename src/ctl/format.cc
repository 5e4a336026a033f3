#include "ctl/format.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <optional>

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

namespace {

// An edit or recall event entry (docs/protocol.md "Editing and recalling") as "edit=<target> edits=<n>
// body=<new body>" or "recall=<target>"; nullopt when its body is not the documented JSON.
std::optional<std::string> event_field(const client::Entry& e) {
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  std::string_view target;
  if (parser.parse(e.body).get(o) != simdjson::SUCCESS ||
      o["message_id"].get_string().get(target) != simdjson::SUCCESS)
    return std::nullopt;
  if (e.client_msg_id == "~recall") return fmt::format("recall={}", target);
  std::string_view body;
  int64_t count = 0;
  if (o["body"].get_string().get(body) != simdjson::SUCCESS ||
      o["edit_count"].get_int64().get(count) != simdjson::SUCCESS)
    return std::nullopt;
  return fmt::format("edit={} edits={} body={}", target, count, escape_body(body));
}

// A body the server wrote for a message with attachments (docs/protocol.md "Attachments") as "body=<caption>"
// then "attachment=<id> kind=<kind> name=<name> size=<bytes>" per attachment: the id is what `qimctl
// download --attachment` takes. nullopt for any other body, and for one that does not parse.
std::optional<std::string> attachments_field(const std::string& body) {
  if (!body.starts_with(R"({"qim":"attachments")")) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  simdjson::dom::array list;
  if (parser.parse(body).get(o) != simdjson::SUCCESS || o["attachments"].get(list) != simdjson::SUCCESS)
    return std::nullopt;
  std::string_view text;
  if (o["text"].get(text) != simdjson::SUCCESS) text = "";
  std::string out = "body=" + escape_body(text);
  for (auto a : list) {
    std::string_view id, kind, name;
    uint64_t size = 0;
    if (a["attachment"].get(id) != simdjson::SUCCESS || a["name"].get(name) != simdjson::SUCCESS ||
        a["size"].get(size) != simdjson::SUCCESS)
      continue;
    if (a["kind"].get(kind) != simdjson::SUCCESS) kind = "file";
    out += fmt::format(" attachment={} kind={} name={} size={}", id, kind, escape_body(name), size);
  }
  return out;
}

// "body=<escaped body>", or for a group's system entry (client_msg_id "~group:<op>", docs/protocol.md
// "Groups") "system=<its text>": the JSON body is for programs, its `text` for people. An edit or recall
// says what changed; another system entry (a kind this qimctl does not know) is "system=<its body>".
std::string body_field(const client::Entry& e) {
  if (e.client_msg_id == "~edit" || e.client_msg_id == "~recall") {
    if (auto field = event_field(e)) return *field;
    return "system=" + escape_body(e.body);
  }
  if (!e.client_msg_id.starts_with("~")) {
    if (auto field = attachments_field(e.body)) return *field;
    return "body=" + escape_body(e.body);
  }
  if (!e.client_msg_id.starts_with("~group:")) return "system=" + escape_body(e.body);
  simdjson::dom::parser parser;
  std::string_view text;
  if (parser.parse(e.body).get_object()["text"].get_string().get(text) != simdjson::SUCCESS) text = e.body;
  return "system=" + escape_body(text);
}

}  // namespace

std::string entry_line(const client::Entry& e) {
  std::string line =
      fmt::format("seq={} from={} conversation={} {}", e.seq, e.sender, e.conversation, body_field(e));
  if (e.from_blocked) line += " from_blocked";  // in a group both are in: the reader blocks the sender
  return line;
}

std::string history_line(const client::Entry& m) {
  // A recalled message has no body to show; an edited one says so (docs/protocol.md "Editing and recalling").
  if (m.recalled)
    return fmt::format("message_id={} from={} time={} recalled", m.message_id, m.sender, m.server_time);
  std::string line =
      fmt::format("message_id={} from={} time={} {}", m.message_id, m.sender, m.server_time, body_field(m));
  if (m.edit_count > 0) line += fmt::format(" edited_at={} edits={}", m.edited_at, m.edit_count);
  // "reactions=👍:2*,:tada::1": count per reaction, '*' where the reader holds it.
  for (size_t i = 0; i < m.reactions.size(); ++i) {
    const auto& r = m.reactions[i];
    line += fmt::format("{}{}:{}{}", i == 0 ? " reactions=" : ",", r.emoji, r.count, r.mine ? "*" : "");
  }
  return line;
}

std::string ack_line(const client::ServerFrame& ack) {
  return fmt::format("message_id={} conversation={} server_time={} duplicate={}", ack.message_id,
                     ack.conversation, ack.server_time, ack.duplicate);
}

std::string unread_text(uint32_t unread, bool capped) {
  return capped ? std::to_string(unread) + "+" : std::to_string(unread);
}

std::string conversation_line(const client::ConversationItem& c) {
  std::string who = c.kind == "group" ? "group=" + escape_body(c.name) : "peer=" + c.peer;
  std::string line = fmt::format("conversation={} {} unread={} read_seq={} last_seq={} from={} time={}",
                                 c.conversation, who, unread_text(c.unread, c.unread_capped), c.read_seq,
                                 c.last.seq, c.last.sender, c.last.server_time);
  if (c.peer_read_through) line += fmt::format(" peer_read={}", *c.peer_read_through);
  if (c.peer_delivered_through) line += fmt::format(" delivered={}", *c.peer_delivered_through);
  if (c.muted) line += c.muted_until ? fmt::format(" muted_until={}", *c.muted_until) : " muted=forever";
  // A message with attachments: its caption and attachments, as entry lines print them.
  if (auto field = attachments_field(c.last.body)) return line + " " + *field;
  return line + " body=" + escape_body(c.last.body);
}

std::string read_line(const client::ServerFrame& ok) {
  return fmt::format("conversation={} read_seq={} unread={}", ok.conversation, ok.read_seq,
                     unread_text(ok.unread, ok.unread_capped));
}

Result<std::string> direct_conversation(std::string_view a, std::string_view b) {
  QIM_ASSIGN_OR_RETURN(UserId first, UserId::parse(a));
  QIM_ASSIGN_OR_RETURN(UserId second, UserId::parse(b));
  QIM_ASSIGN_OR_RETURN(ConversationId id, qim::direct_conversation(first, second));
  return id.str();
}

}  // namespace qim::ctl
