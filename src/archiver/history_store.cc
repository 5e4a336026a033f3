#include "archiver/history_store.h"

namespace qim {

Status validate_history_message(const Message& message) {
  QIM_RETURN_IF_ERROR(validate_message(message));
  if (message.conversation.empty())
    return Error(Errc::kInvalidArgument, "history: message without a conversation");
  if (message.id.value >= (uint64_t{1} << 63)) {
    return Error(Errc::kInvalidArgument,
                 "history: message id " + std::to_string(message.id.value) + " is at or above 2^63");
  }
  return {};
}

Status validate_history_query(const HistoryQuery& query) {
  if (query.limit == 0 || query.limit > kMaxHistoryReadLimit) {
    return Error(Errc::kInvalidArgument, "history limit must be 1.." + std::to_string(kMaxHistoryReadLimit) +
                                             ", got " + std::to_string(query.limit));
  }
  if (query.conversation.empty()) return Error(Errc::kInvalidArgument, "history read without a conversation");
  return {};
}

}  // namespace qim
