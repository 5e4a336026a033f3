#pragma once
// The attachment frames (docs/protocol.md "Attachments", issue 41): ATTACH and ATTACHMENT_URL a client
// sends, a SEND's `attachments` field, and the answers ATTACH_OK and ATTACHMENT_URL_OK. Parsing checks only
// the wire form; the rules are attachments/attachment_service.h's, called by gateway/attachment_requests.h.
// Like client_frame.h the parser never throws: an error is INVALID_ARGUMENT naming the field.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "attachments/attachment_types.h"
#include "core/ids.h"

namespace simdjson::dom {
class object;
class element;
}  // namespace simdjson::dom

namespace qim {

// ATTACH {conversation, name, content_type, size, sha256?, client_upload_id?}
struct AttachFrame {
  ConversationId conversation;
  attachments::UploadRequest request;
};

// ATTACHMENT_URL {conversation, message_id, attachment, thumbnail?}
struct AttachmentUrlFrame {
  ConversationId conversation;
  MessageId message_id;
  std::string attachment;
  bool thumbnail = false;
};

using AttachmentFrame = std::variant<AttachFrame, AttachmentUrlFrame>;

bool is_attachment_frame_type(std::string_view type);
// The frame, or the message of its INVALID_ARGUMENT.
std::variant<AttachmentFrame, std::string> parse_attachment_frame(std::string_view type,
                                                                  const simdjson::dom::object& o);
// A SEND's `attachments`: an array of {attachment, name, content_type, size, sha256?}, 1..10 entries.
std::variant<std::vector<attachments::AttachmentRef>, std::string> parse_attachment_refs(
    const simdjson::dom::element& e);

std::string encode_attach_ok(const std::string& ref, const ConversationId& conversation,
                             const std::string& attachment, const std::string& upload_url,
                             const std::string& method,
                             const std::vector<std::pair<std::string, std::string>>& headers,
                             int64_t expires_at_ms);
std::string encode_attachment_url_ok(const std::string& ref, const AttachmentUrlFrame& f,
                                     const std::string& url, int64_t expires_at_ms);

}  // namespace qim
