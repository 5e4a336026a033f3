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
    const int64_t day = now_ms / kDayMs;
    std::lock_guard lock(mu_);
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

 private:
  struct UserDay {
    uint64_t bytes = 0;
    std::unordered_set<std::string> uploads;
  };
  std::mutex mu_;
  std::map<int64_t, std::unordered_map<std::string, UserDay>> days_;  // UTC day -> user -> what it granted
};

}  // namespace

Status check_charge_arguments(std::string_view upload, uint64_t bytes) {
  if (upload.empty() || upload.size() > kMaxUploadIdBytes)
    return Error(Errc::kInvalidArgument,
                 "upload budget: an upload id must be 1.." + std::to_string(kMaxUploadIdBytes) + " bytes");
  if (bytes == 0) return Error(Errc::kInvalidArgument, "upload budget: a charge must be of at least 1 byte");
  return {};
}

std::unique_ptr<UploadBudget> make_memory_upload_budget() {
  return std::make_unique<MemoryUploadBudget>();
}

}  // namespace qim::attachments
