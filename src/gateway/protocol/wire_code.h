#pragma once
// The stable error codes of the protocol's ERROR frame (docs/protocol.md). Clients match on these
// strings, so a code is never renamed or reused; new codes are only added.

#include <string_view>

#include "core/status.h"

namespace qim {

enum class WireCode {
  kBadFrame,            // not a JSON object, or no string "type"; binary frames
  kUnknownType,         // a "type" this protocol version does not define
  kUnsupportedVersion,  // "v" other than 1
  kTooLarge,            // a body or frame over its limit
  kRateLimited,         // frames over the connection's rate, or another bound hit
  kUnauthenticated,     // no AUTH yet, or a bad or expired token
  kForbidden,           // authenticated, but not allowed (another user's conversation, a sender field)
  kExpiredCursor,       // SYNC cursor below the mailbox's trim: resync from zero
  kInvalidArgument,     // a field is missing, of the wrong type, or out of range
  kNotFound,
  kUnavailable,  // a dependency did not answer or refused for now: retry later
  kInternal,     // a bug or broken invariant on the server side
  // Group refusals (docs/protocol.md "Groups"):
  kUnknownGroup,  // no such group
  kNotAMember,    // the caller is not a member of the group
  kNotAllowed,    // the caller's role does not allow it (or the target is the owner)
  kGroupFull,     // over the group's member limit
  // Privacy refusals (docs/protocol.md "Blocking"):
  kBlocked,  // the recipient (or the user to add to a group) blocks the caller
  // EDIT and RECALL refusals (docs/protocol.md "Editing and recalling"):
  kUnknownMessage,   // no such message in that conversation
  kWindowPassed,     // the message is older than the edit or recall window (or edits are off)
  kMessageRecalled,  // the message was recalled: no edit, no second recall
  // The before-send hook's refusal (docs/webhooks.md "Before send"): the message carries its reason.
  kRejected,
  // The user registry's refusals (docs/api.md "Users"): a user it does not hold; a user (or a look-alike
  // id) it holds already.
  kUnknownUser,
  kUserExists,
  // REACT and UNREACT refusals (docs/protocol.md "Reactions"):
  kBadReaction,        // 'emoji' is not one emoji grapheme nor a short code
  kReactionLimit,      // the message's distinct reactions, or the caller's on it, are at their bound
  kReactionUnchanged,  // REACT of a reaction the caller holds, UNREACT of one they do not
  // Attachment refusals (docs/protocol.md "Attachments"):
  kAttachmentsDisabled,  // the deployment has no object store configured
  kUnsupportedType,      // a content type not in QIM_ATTACH_TYPES
  kQuotaExceeded,        // over the user's daily upload budget
  kAttachmentMissing,    // a SEND names an attachment that is not the sender's upload here, or not uploaded
  kAttachmentMismatch,   // the uploaded object differs from the declaration (size, type, sha256, image)
  kUnknownAttachment,    // ATTACHMENT_URL of something unknown or not visible to the caller (one code)
  // PUSH_REGISTER refusals (docs/protocol.md "Push", gateway/protocol/push_frames.h):
  kUnknownProvider,  // 'provider' is not fcm, apns or webpush
  kBadPushToken,     // the token is not of its provider's form
  kTooManyDevices,   // the user has kMaxPushDevices other devices registered
};
// The last code: arrays indexed by code (the gateway's error counters) are sized by it. A new code goes
// after it and moves it.
inline constexpr WireCode kLastWireCode = WireCode::kTooManyDevices;

// "BAD_FRAME", "UNKNOWN_TYPE", ...
std::string_view wire_code_name(WireCode code);

// The one place an error value becomes a wire code.
WireCode wire_code_of(Errc code);

}  // namespace qim
