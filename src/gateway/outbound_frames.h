#pragma once
// A connection's outbound queue: the frames waiting for the WebSocket, answers ahead of pushes.
//
// A connection carries two kinds of frame. Answers (AUTH_OK, SEND_ACK, SYNC_PAGE, HISTORY_PAGE, ERROR,
// ...) carry the `ref` of a frame the client sent and are written in the order they were made; pushes
// (DELIVER, SYNC_NEEDED) carry no `ref` and are written in the order they were made. Between the two
// kinds the protocol promises no order (docs/protocol.md: a push and a SYNC page may overlap, the client
// buffers pushes during a SYNC), so an answer is written before the pushes still waiting. Without that, a
// sender's SEND_ACK waited behind every DELIVER queued before it: under overload the sender's connection
// carries two frames a message (its SEND_ACK and its own mailbox copy's DELIVER) and the SEND_ACK reached
// the client seconds after the recipient had the message (docs/benchmarks.md, "Answers before pushes").
//
// The frame being written stays at the front until written: nothing overtakes it. The bounds count both
// kinds and the frame being written. Not thread-safe: a connection uses it on its strand only.

#include <cstddef>
#include <deque>
#include <memory>
#include <string>

namespace qim {

class OutboundFrames {
 public:
  using Frame = std::shared_ptr<const std::string>;
  enum class Kind { kAnswer, kPush };

  // Queues `frame` behind the frames of its kind. The caller checks would_exceed() first.
  void add(Kind kind, Frame frame);
  // Whether queueing `bytes` more would pass max_frames frames or max_bytes bytes. An empty queue always
  // takes one frame (a SYNC_PAGE alone may be over the byte bound).
  bool would_exceed(size_t bytes, size_t max_frames, size_t max_bytes) const;

  // The frame to write next: the one being written if any, else the oldest answer, else the oldest push.
  // Marks it as being written. Null when nothing is queued.
  const Frame& start_next();
  // The frame start_next() gave is written: forgets it.
  void written();
  bool writing() const { return writing_ != nullptr; }

  // Drops everything not yet being written (a slow consumer's queue before its close).
  void drop_waiting();
  // Drops everything, the frame being written too (the connection failed).
  void clear();

  bool empty() const { return writing_ == nullptr && answers_.empty() && pushes_.empty(); }
  size_t frames() const { return answers_.size() + pushes_.size() + (writing_ ? 1 : 0); }
  size_t bytes() const { return bytes_; }

 private:
  std::deque<Frame> answers_;
  std::deque<Frame> pushes_;
  Frame writing_;
  size_t bytes_ = 0;  // of every frame held, the one being written included
};

}  // namespace qim
