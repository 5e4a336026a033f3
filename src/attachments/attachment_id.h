#pragma once
// Attachment ids (docs/adr/0112): "a1.<random>.<mac>", where <random> is 16 random bytes (base64url) that
// also name the object ("att/<random>", so keys are unguessable) and <mac> is the first 16 bytes of
// HMAC-SHA256(server secret, "att1|<uploader>|<conversation>|<random>"). Stateless, like tokens: any
// gateway holding the secret checks that an id was minted for this uploader in this conversation, so
// nobody can reference, or fetch through a message of their own, someone else's upload.

#include <optional>
#include <string>
#include <string_view>

#include "core/ids.h"
#include "core/status.h"

namespace qim::attachments {

struct MintedId {
  std::string id;   // what ATTACH_OK names
  std::string key;  // the object's key
};

// A new id for (uploader, conversation). Io when the system has no randomness.
Result<MintedId> mint_attachment_id(std::string_view secret, const UserId& uploader,
                                    const ConversationId& conversation);

// The object key of `id` when it was minted for (uploader, conversation) with `secret`; nullopt for an id
// that does not parse or whose mac does not match (compared in constant time).
std::optional<std::string> key_of_attachment(std::string_view secret, std::string_view id,
                                             const UserId& uploader, const ConversationId& conversation);

// Keys beside an object: the thumbnail, and the marker written when a SEND referencing it was accepted
// (the orphan sweep keeps objects with a marker; docs/adr/0114).
inline std::string thumbnail_key(std::string_view key) {
  return std::string(key) + ".thumb.jpg";
}
inline std::string referenced_marker_key(std::string_view key) {
  return std::string(key) + ".ref";
}
inline constexpr std::string_view kAttachmentKeyPrefix = "att/";

}  // namespace qim::attachments
