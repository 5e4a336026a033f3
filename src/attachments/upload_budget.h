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
// Thread-safe.

#include <cstdint>
#include <memory>
#include <string_view>

#include "core/ids.h"
#include "core/status.h"

namespace qim::attachments {

inline constexpr size_t kMaxUploadIdBytes = 128;

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
  };
  Outcome outcome = Outcome::kCharged;
  uint64_t bytes_used = 0;    // the user's day after this call
  uint64_t uploads_used = 0;  // the user's day after this call

  bool granted() const { return outcome == Outcome::kCharged || outcome == Outcome::kRepeated; }
};

class UploadBudget {
 public:
  virtual ~UploadBudget() = default;
  // Charges upload `upload` of `bytes` to `user` on the UTC day of `now_ms` (the contract above).
  virtual Result<BudgetCharge> charge(const UserId& user, std::string_view upload, uint64_t bytes,
                                      int64_t now_ms, const UploadLimits& limits) = 0;
};

// The budget in this process's memory: what one process (`qim up`) needs; two AttachmentServices over it
// share it. Keeps the current day (and the one before, for a clock that steps back over midnight).
std::unique_ptr<UploadBudget> make_memory_upload_budget();

// The argument checks every backend makes first (InvalidArgument naming the problem, or OK).
Status check_charge_arguments(std::string_view upload, uint64_t bytes);

}  // namespace qim::attachments
