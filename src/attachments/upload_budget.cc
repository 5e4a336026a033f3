#include "attachments/upload_budget.h"

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/clock.h"

namespace qim::attachments {

namespace {

class MemoryUploadBudget final : public UploadBudget {
 public:
  Result<BudgetCharge> charge(const UserId& user, std::string_view upload, uint64_t bytes, int64_t now_ms,
                              const UploadLimits& limits) override {
    QIM_RETURN_IF_ERROR(check_charge_arguments(upload, bytes));
    std::lock_guard lock(mu_);
    return charge_locked(user, upload, bytes, now_ms, limits);
  }

  Result<BudgetCharge> charge_claimed(const UserId& user, const UploadClaim& claim, std::string_view upload,
                                      uint64_t bytes, int64_t now_ms, const UploadLimits& limits) override {
    QIM_RETURN_IF_ERROR(check_claim_arguments(claim, upload, bytes));
    std::lock_guard lock(mu_);
    std::erase_if(claims_, [&](const auto& kv) { return kv.second.expires_at_ms <= now_ms; });
    const std::string key = user.str() + '\n' + std::string(claim.client_id);
    if (auto it = claims_.find(key); it != claims_.end()) {
      const UserDay& d = days_[now_ms / kDayMs][user.str()];
      BudgetCharge out;
      out.bytes_used = d.bytes;
      out.uploads_used = d.uploads.size();
      if (it->second.declaration != claim.declaration) {
        out.outcome = BudgetCharge::Outcome::kConflict;
        return out;
      }
      out.outcome = BudgetCharge::Outcome::kRepeated;
      out.attachment = it->second.attachment;
      out.expires_at_ms = it->second.expires_at_ms;
      return out;
    }
    QIM_ASSIGN_OR_RETURN(BudgetCharge out, charge_locked(user, upload, bytes, now_ms, limits));
    if (out.granted()) {
      claims_[key] =
          Claim{std::string(claim.declaration), std::string(claim.attachment), claim.expires_at_ms};
      out.attachment = std::string(claim.attachment);
      out.expires_at_ms = claim.expires_at_ms;
    }
    return out;
  }

 private:
  Result<BudgetCharge> charge_locked(const UserId& user, std::string_view upload, uint64_t bytes,
                                     int64_t now_ms, const UploadLimits& limits) {
    const int64_t day = now_ms / kDayMs;
    // What a day recorded is forgotten after it: keep today and yesterday (a clock stepped back).
    days_.erase(days_.begin(), days_.lower_bound(day - 1));
    UserDay& d = days_[day][user.str()];
    BudgetCharge out;
    if (d.uploads.contains(std::string(upload))) {
      out.outcome = BudgetCharge::Outcome::kRepeated;
    } else if (d.bytes + bytes > limits.bytes) {
      out.outcome = BudgetCharge::Outcome::kOverBytes;
    } else if (d.uploads.size() + 1 > limits.uploads) {
      out.outcome = BudgetCharge::Outcome::kOverUploads;
    } else {
      d.uploads.emplace(upload);
      d.bytes += bytes;
    }
    out.bytes_used = d.bytes;
    out.uploads_used = d.uploads.size();
    return out;
  }

  struct UserDay {
    uint64_t bytes = 0;
    std::unordered_set<std::string> uploads;
  };
  std::mutex mu_;
  std::map<int64_t, std::unordered_map<std::string, UserDay>> days_;  // UTC day -> user -> what it granted
  struct Claim {
    std::string declaration;
    std::string attachment;
    int64_t expires_at_ms = 0;
  };
  std::unordered_map<std::string, Claim> claims_;  // "<user>\n<client id>" -> its claim, until it expires
};

}  // namespace

Status check_charge_arguments(std::string_view upload, uint64_t bytes) {
  if (upload.empty() || upload.size() > kMaxUploadIdBytes)
    return Error(Errc::kInvalidArgument,
                 "upload budget: an upload id must be 1.." + std::to_string(kMaxUploadIdBytes) + " bytes");
  if (bytes == 0) return Error(Errc::kInvalidArgument, "upload budget: a charge must be of at least 1 byte");
  return {};
}

bool valid_client_upload_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxClientUploadIdBytes) return false;
  for (unsigned char c : id)
    if (c <= ' ' || c >= 0x7f) return false;
  return true;
}

Status check_claim_arguments(const UploadClaim& claim, std::string_view upload, uint64_t bytes) {
  QIM_RETURN_IF_ERROR(check_charge_arguments(upload, bytes));
  if (!valid_client_upload_id(claim.client_id))
    return Error(Errc::kInvalidArgument, "upload budget: a client upload id must be 1.." +
                                             std::to_string(kMaxClientUploadIdBytes) +
                                             " bytes of printable ASCII without spaces");
  if (claim.declaration.empty() || claim.attachment.empty() ||
      claim.declaration.find(' ') != std::string_view::npos ||
      claim.attachment.find(' ') != std::string_view::npos)
    return Error(Errc::kInvalidArgument,
                 "upload budget: a claim needs a declaration and an attachment, without spaces");
  return {};
}

std::unique_ptr<UploadBudget> make_memory_upload_budget() {
  return std::make_unique<MemoryUploadBudget>();
}

}  // namespace qim::attachments
