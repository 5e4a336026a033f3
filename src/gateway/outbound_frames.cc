#include "gateway/outbound_frames.h"

namespace qim {

void OutboundFrames::add(Kind kind, Frame frame) {
  bytes_ += frame->size();
  (kind == Kind::kAnswer ? answers_ : pushes_).push_back(std::move(frame));
}

bool OutboundFrames::would_exceed(size_t bytes, size_t max_frames, size_t max_bytes) const {
  return !empty() && (frames() >= max_frames || bytes_ + bytes > max_bytes);
}

const OutboundFrames::Frame& OutboundFrames::start_next() {
  if (writing_ == nullptr) {
    std::deque<Frame>& from = !answers_.empty() ? answers_ : pushes_;
    if (!from.empty()) {
      writing_ = std::move(from.front());
      from.pop_front();
    }
  }
  return writing_;
}

void OutboundFrames::written() {
  if (writing_ == nullptr) return;
  bytes_ -= writing_->size();
  writing_.reset();
}

void OutboundFrames::drop_waiting() {
  answers_.clear();
  pushes_.clear();
  bytes_ = writing_ ? writing_->size() : 0;
}

void OutboundFrames::clear() {
  writing_.reset();
  drop_waiting();  // with nothing being written, that leaves no bytes counted
}

}  // namespace qim
