#include "batch_writer.h"

namespace qim::cql {

size_t BatchWriter::add(const Prepared& statement, Values values) {
  const size_t bytes = values.wire_bytes();
  if (limits_.max_statements <= 1 || bytes > limits_.max_bytes) {
    ++requests_;
    pending_.push_back(session_.execute_async(statement, values, options_));
    return pending_.size() - 1;
  }
  if (!open_.empty() && open_bytes_ + bytes > limits_.max_bytes) send();
  if (open_.empty()) {
    open_slot_ = pending_.size();
    pending_.emplace_back();  // filled by send()
  }
  open_.emplace_back(&statement, std::move(values));
  open_bytes_ += bytes;
  const size_t slot = open_slot_;
  if (open_.size() >= limits_.max_statements) send();
  return slot;
}

void BatchWriter::keep_together(size_t statements) {
  if (!open_.empty() && statements <= limits_.max_statements &&
      open_.size() + statements > limits_.max_statements)
    send();
}

void BatchWriter::send() {
  if (open_.empty()) return;
  ++requests_;
  if (open_.size() == 1) {
    // A batch of one is the statement with more framing.
    pending_[open_slot_] = session_.execute_async(*open_.front().first, open_.front().second, options_);
  } else {
    Batch batch(BatchType::kUnlogged);
    for (auto& [statement, values] : open_) batch.add(*statement, std::move(values));
    pending_[open_slot_] = session_.batch_async(batch, options_);
  }
  open_.clear();
  open_bytes_ = 0;
}

std::vector<PendingResult> BatchWriter::finish() {
  send();
  return std::move(pending_);
}

}  // namespace qim::cql
