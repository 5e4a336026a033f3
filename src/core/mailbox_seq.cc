#include "core/mailbox_seq.h"

namespace qim {

Status check_offset(Offset offset) {
  if (offset.value > kMaxOffset) {
    return Error(Errc::kInvalidArgument, "offset " + std::to_string(offset.value) +
                                             " is not below 2^48 (max " + std::to_string(kMaxOffset) + ")");
  }
  return {};
}

Status check_epoch(Epoch epoch) {
  if (epoch.value > kMaxEpoch) {
    return Error(Errc::kInvalidArgument, "epoch " + std::to_string(epoch.value) + " is not below 2^16");
  }
  return {};
}

Result<MailboxSeq> compose(Epoch epoch, Offset offset) {
  QIM_RETURN_IF_ERROR(check_epoch(epoch));
  QIM_RETURN_IF_ERROR(check_offset(offset));
  return MailboxSeq::from_raw((uint64_t{epoch.value} << kOffsetBits) | offset.value);
}

std::string MailboxSeq::to_string() const {
  return std::to_string(epoch().value) + ":" + std::to_string(offset().value);
}

}  // namespace qim
