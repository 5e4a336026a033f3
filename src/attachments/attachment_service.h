#pragma once
// The attachment rules (issue 41; docs/protocol.md "Attachments"), over an ObjectStore: what may be
// uploaded (type, size, a user's daily budget), the ids that bind an upload to its uploader and
// conversation (attachment_id.h), the checks of the objects a SEND references before it is appended, the
// download URLs of a message's attachments, and the deletions (recall, retention, uploads never sent).
// Who is a member of a conversation, and who may see a message, is decided by the caller (the gateway:
// the same rules as SEND and HISTORY); this decides everything about the objects. Every refusal is a
// wire code. Thread-safe; the calls that talk to the store block (run them off an I/O thread).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "attachments/attachment_options.h"
#include "attachments/attachment_types.h"
#include "attachments/message_body.h"
#include "attachments/object_store.h"
#include "attachments/upload_budget.h"
#include "core/clock.h"
#include "core/ids.h"
#include "gateway/protocol/wire_code.h"

namespace qim::attachments {

struct Refusal {
  WireCode code = WireCode::kInternal;
  std::string message;
};
template <typename T>
using Decided = std::variant<T, Refusal>;

// ATTACH_OK's content.
struct UploadGrant {
  std::string attachment;  // the id to reference in SEND
  std::string upload_url;
  std::string method = "PUT";
  std::vector<std::pair<std::string, std::string>> headers;  // what the client must send with the PUT
  int64_t expires_at_ms = 0;
};

struct DownloadGrant {
  std::string url;
  int64_t expires_at_ms = 0;
};

struct SweepReport {
  uint64_t listed = 0;   // objects looked at
  uint64_t deleted = 0;  // orphan uploads (and their thumbnails) deleted
  uint64_t expired = 0;  // sent attachments past retention deleted (object, thumbnail, marker)
};

class AttachmentService {
 public:
  // `secret` keys the attachment ids' mac (the gateway's auth secret); must not be empty. `budget`: the
  // daily upload budget the grants are charged to, shared by every gateway of the deployment (the routing
  // Redis: redis/redis_upload_budget.h); it must outlive the service. Null: a budget in this service's
  // memory (one process: `qim up`, tests).
  AttachmentService(ObjectStore& store, std::string secret, AttachmentOptions options,
                    std::shared_ptr<const Clock> clock, UploadBudget* budget = nullptr);

  const AttachmentOptions& options() const { return options_; }

  // ATTACH by `uploader` (a member of `conversation`, checked by the caller). Refusals: INVALID_ARGUMENT
  // (a bad name, size 0, a malformed sha256), UNSUPPORTED_TYPE (not in QIM_ATTACH_TYPES), TOO_LARGE (over
  // QIM_ATTACH_MAX_BYTES), QUOTA_EXCEEDED (over the uploader's daily budget of bytes or of uploads),
  // UNAVAILABLE (the budget did not answer a charge and its one retry; the store could not sign).
  // The budget is charged here, at the grant, under the new upload's id: a charge whose answer is lost is
  // retried once with the same id, which the budget counts once (upload_budget.h). A grant whose URL then
  // cannot be signed keeps its charge (the client's retry is a new upload, unless it names a client id).
  // With `client_upload_id` (docs/adr/0161): a repeat by the same uploader with the same id and the same
  // declaration (conversation, name, content_type, size, sha256) before the first grant's expires_at is
  // answered with the first grant's attachment id and expires_at (a URL signed again, expiring then) and
  // charges nothing; the same id with another declaration then is INVALID_ARGUMENT (so is a malformed id).
  // Every gateway of a deployment decides it alike: the claim lives in the budget (upload_budget.h).
  Decided<UploadGrant> grant_upload(const UserId& uploader, const ConversationId& conversation,
                                    const UploadRequest& request);

  // The checks of a SEND's `attachments` by `sender` to `conversation`, before it is appended: each id was
  // minted for this sender in this conversation and its object exists (else ATTACHMENT_MISSING: also for
  // another user's id, so nothing is revealed), with the declared size and type (HEAD) and sha256 when
  // declared (a GET of at most hash_max_bytes; larger: INVALID_ARGUMENT), else ATTACHMENT_MISMATCH. An
  // image of at most thumb_max_bytes is read back and must decode (else ATTACHMENT_MISMATCH); its thumbnail
  // (thumbnailer.h) is written beside it and the entry gets the original's width/height and thumbnail=true.
  // Nothing is written unless every entry passed; then the thumbnails, then each object's "referenced"
  // marker (the orphan sweep keeps it). Returns the entries as the stored body carries them. INVALID_ARGUMENT
  // for none, over kMaxAttachmentsPerMessage or the same id twice; UNAVAILABLE when the store does not
  // answer.
  Decided<std::vector<StoredAttachment>> check_references(const UserId& sender,
                                                          const ConversationId& conversation,
                                                          std::span<const AttachmentRef> refs);

  // A download URL of attachment `id` of a message `sender` sent to `conversation` at `sent_at_ms` with
  // `body`, for a reader the caller found may see that message. UNKNOWN_ATTACHMENT when the body does not
  // carry `id`, the id was not minted for that sender and conversation, a thumbnail is asked for and there
  // is none, or the message is older than retention_ms (its objects are deleted: docs/adr/0151).
  Decided<DownloadGrant> grant_download(const UserId& sender, const ConversationId& conversation,
                                        int64_t sent_at_ms, std::string_view body, std::string_view id,
                                        bool thumbnail);

  // Deletes the objects (and thumbnails and markers) a message body references; idempotent (a body with
  // none, or objects already gone, is a success). Transport/Timeout from the store.
  Status delete_objects_of(const UserId& sender, const ConversationId& conversation, std::string_view body);

  // One pass over the store's attachment objects: deletes those older than orphan_age_ms without a
  // "referenced" marker (with their thumbnail), and, when retention_ms > 0, those whose marker is older
  // than retention_ms (the message that sent them has left every mailbox: docs/adr/0151; with thumbnail and
  // marker). Everything else stays. The store's errors; what was deleted before one stays deleted.
  Result<SweepReport> sweep_orphans();

 private:
  ObjectStore& store_;
  const std::string secret_;
  const AttachmentOptions options_;
  std::shared_ptr<const Clock> clock_;
  std::unique_ptr<UploadBudget> own_budget_;  // when none was given
  UploadBudget& budget_;                      // the daily budgets (docs/adr/0158)
};

// "image" for the types a thumbnail is made of (png, jpeg, webp, gif), else "file".
std::string_view attachment_kind(std::string_view content_type);

}  // namespace qim::attachments
