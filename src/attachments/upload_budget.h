#pragma once
// A user's daily upload budget (docs/adr/0158, which replaces the per-process budget of decision 112): the
// bytes and the number of uploads granted to one user in one UTC day, charged per upload id. The attachment
// rules (attachment_service.h) charge it at each ATTACH grant; the gateways of a deployment share one
// budget, so together they grant no more than it.
//
//   memory (`qim up`, one process): make_memory_upload_budget() below
//   the routing Redis (every gateway of a distributed deployment): redis/redis_upload_budget.h
//
// The contract every backend keeps (tests: redis/upload_budget_contract_test.cc):
// - A charge is keyed by (user, UTC day of `now_ms`, upload id). The first charge of an upload id that fits
//   both limits adds its bytes and one upload to the user's day, atomically with the check; a charge that
//   would take the day over either limit adds nothing.
// - A charge of an upload id already charged that day adds nothing and answers kRepeated (with the
//   day's totals), whatever its `bytes` and the limits now: a retry after a lost answer is charged once.
//   A refused charge records nothing, so its retry is decided again.
// - A new UTC day starts every user's budget again; what a day recorded is forgotten after it.
// - Errors: InvalidArgument for an empty upload id, one over kMaxUploadIdBytes, or 0 bytes (nothing is
//   charged); Transport or Timeout when the backend did not answer: the charge may or may not have been
//   made, and a retry with the same upload id settles it.
// - A claimed charge (charge_claimed: ATTACH with a `client_upload_id`, docs/adr/0161) first looks up the
//   user's claim of that client id. A claim still valid (now < its expires_at) with the same declaration
//   answers kRepeated with the claim's attachment and expiry and charges nothing, whatever the day and the
//   limits now; with another declaration kConflict (nothing charged). Otherwise the charge is decided as
//   above and, only when it is kCharged (or kRepeated: a retry of this very charge), the claim
//   (declaration, attachment, expires_at) is recorded with it, atomically: a claim exists exactly for a
//   charged upload. A claim is forgotten after its expires_at. InvalidArgument also for a client id that is
//   not 1..kMaxClientUploadIdBytes of printable ASCII without spaces.
// Thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/ids.h"
#include "core/status.h"

namespace qim::attachments {

inline constexpr size_t kMaxUploadIdBytes = 128;
inline constexpr size_t kMaxClientUploadIdBytes = 128;

// The limits one charge is checked against (AttachmentOptions: QIM_ATTACH_DAILY_BYTES,
// QIM_ATTACH_DAILY_UPLOADS).
struct UploadLimits {
  uint64_t bytes = 0;    // per user per UTC day
  uint64_t uploads = 0;  // per user per UTC day
};

struct BudgetCharge {
  enum class Outcome {
    kCharged,      // counted now
    kRepeated,     // this upload id was charged before today: nothing added
    kOverBytes,    // refused: the bytes would pass limits.bytes
    kOverUploads,  // refused: one more upload would pass limits.uploads
    kConflict,     // refused (charge_claimed): the client upload id is claimed for another declaration
  };
  Outcome outcome = Outcome::kCharged;
  uint64_t bytes_used = 0;    // the user's day after this call
  uint64_t uploads_used = 0;  // the user's day after this call
  // charge_claimed, when granted: the claim's grant (the first one's on a repeat).
  std::string attachment;
  int64_t expires_at_ms = 0;

  bool granted() const { return outcome == Outcome::kCharged || outcome == Outcome::kRepeated; }
};

// What a client's ATTACH with a `client_upload_id` claims (charge_claimed).
struct UploadClaim {
  std::string_view client_id;    // the client's upload id
  std::string_view declaration;  // a digest of what it declared (attachment_service.cc: declaration_digest)
  std::string_view attachment;   // the attachment id this grant gives, if it is the first
  int64_t expires_at_ms = 0;     // the grant's validity (its upload URL's expiry): the claim's life
};

class UploadBudget {
 public:
  virtual ~UploadBudget() = default;
  // Charges upload `upload` of `bytes` to `user` on the UTC day of `now_ms` (the contract above).
  virtual Result<BudgetCharge> charge(const UserId& user, std::string_view upload, uint64_t bytes,
                                      int64_t now_ms, const UploadLimits& limits) = 0;
  // The same under the client's claim `claim` (the contract above): a repeat of a valid claim is kRepeated
  // with the claim's attachment and expires_at_ms; another declaration under it kConflict.
  virtual Result<BudgetCharge> charge_claimed(const UserId& user, const UploadClaim& claim,
                                              std::string_view upload, uint64_t bytes, int64_t now_ms,
                                              const UploadLimits& limits) = 0;
};

// The budget in this process's memory: what one process (`qim up`) needs; two AttachmentServices over it
// share it. Keeps the current day (and the one before, for a clock that steps back over midnight).
std::unique_ptr<UploadBudget> make_memory_upload_budget();

// The argument checks every backend makes first (InvalidArgument naming the problem, or OK).
Status check_charge_arguments(std::string_view upload, uint64_t bytes);
// The same for a claimed charge: the charge's, then the client id's and the claim's.
Status check_claim_arguments(const UploadClaim& claim, std::string_view upload, uint64_t bytes);
// Whether `id` is a valid client upload id: 1..kMaxClientUploadIdBytes of printable ASCII, no space.
bool valid_client_upload_id(std::string_view id);

}  // namespace qim::attachments
