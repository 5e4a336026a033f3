#pragma once
// What the attachment frames carry (docs/protocol.md "Attachments"), as plain values: the protocol's parser
// fills them, attachment_service.h decides on them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qim::attachments {

// ATTACH {conversation, name, content_type, size, sha256?, client_upload_id?}: what the client is about to
// upload.
struct UploadRequest {
  std::string name;                   // the file's name, 1..kMaxAttachmentNameBytes
  std::string content_type;           // e.g. image/png (lower case, no parameters)
  uint64_t size = 0;                  // exact bytes, > 0
  std::optional<std::string> sha256;  // 64 lower-case hex digits
  // The client's id of this upload (1..128 printable ASCII, no space): a repeat of the ATTACH with it and
  // the same declaration, within the grant's validity, is the same grant, charged once (docs/adr/0161).
  std::optional<std::string> client_upload_id;
};

// One entry of a SEND's `attachments`: an uploaded object the message shows, as the client declares it.
struct AttachmentRef {
  std::string attachment;  // the id ATTACH_OK gave
  std::string name;
  std::string content_type;
  uint64_t size = 0;
  std::optional<std::string> sha256;  // checked against the object when present (bounded size)
};

// An entry as the stored message carries it: the declaration, checked, with what the server found.
struct StoredAttachment {
  AttachmentRef ref;
  std::string kind;    // "image" (png, jpeg, webp, gif) or "file"
  uint32_t width = 0;  // images whose thumbnail was made: their dimensions (0: not known)
  uint32_t height = 0;
  bool thumbnail = false;  // a thumbnail is stored beside the object (ATTACHMENT_URL "thumbnail":true)
};

inline constexpr size_t kMaxAttachmentNameBytes = 255;
inline constexpr size_t kMaxAttachmentsPerMessage = 10;

}  // namespace qim::attachments
