#pragma once
// The body of a message with attachments (docs/adr/0113): the server writes it, from a SEND's `body`
// (the caption, may be empty) and its checked `attachments`, as one JSON object
//   {"qim":"attachments","text":"<caption>","attachments":[{"attachment":"a1...","kind":"image","name":..,
//    "content_type":..,"size":N,"sha256"?:..,"width"?:W,"height"?:H,"thumbnail"?:true}]}
// so the Outbox record, mailboxes and history carry it unchanged (no new record version). A client's own
// SEND body never starts with the marker (refused), so every such body was checked by the server.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attachments/attachment_types.h"

namespace qim::attachments {

inline constexpr std::string_view kBodyMarker = R"({"qim":"attachments")";

struct MessageBody {
  std::string text;
  std::vector<StoredAttachment> attachments;
};

// Whether a client-sent body would pass for a server-written one (the SEND is then refused).
// (Inline: the frame parser, which the attachment library builds on, calls it.)
inline bool looks_like_attachment_body(std::string_view body) {
  return body.starts_with(kBodyMarker);
}
std::string encode_message_body(const MessageBody& body);
// The body's caption and attachments; nullopt for a body that is not one encode_message_body wrote.
std::optional<MessageBody> decode_message_body(std::string_view body);
// The body an EDIT stores for a message sent with `original`: with attachments, `new_text` as the caption of
// the same attachments (an edit changes the text, never the files); else `new_text` unchanged. Deterministic,
// so the Outbox record an edit appends says the same at every replay.
std::string edited_body(std::string_view original, std::string_view new_text);

}  // namespace qim::attachments
