#pragma once
// The gateway's worker pools (store reads, group checks and changes): a few threads shared by every
// connection, each connection a lane of its own (docs/protocol.md "Limits and closes", per-connection work).
//
// - A lane's tasks run one at a time, in the order they were submitted.
// - Lanes take turns (round robin): a connection with many tasks queued delays another connection's next
//   task by at most one task of each busy lane, never by its whole queue.
// - A task not started by its deadline is not run: its `expired` callback runs instead, so the client hears
//   that nothing was done (a client that gave up must not find the work done minutes later).
// - close_lane() drops a lane's queued tasks (the connection is gone: nobody waits for their answers).
// - stop() drops what is queued and joins the threads; the gateway calls it before the io_context its tasks
//   post their answers to is destroyed.
//
// Thread-safe. Tasks never run on the submitting thread.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace qim {

class FairPool {
 public:
  using Clock = std::chrono::steady_clock;
  struct Task {
    Clock::time_point deadline = Clock::time_point::max();
    std::function<void()> run;      // the work
    std::function<void()> expired;  // instead of run when the deadline passed first; may be empty
  };

  // Starts `threads` (>= 1) threads named "<name><i>".
  FairPool(std::string name, uint32_t threads);
  ~FairPool();
  FairPool(const FairPool&) = delete;
  FairPool& operator=(const FairPool&) = delete;

  // Queues `task` at the back of `lane`. False once stop() began: the task is dropped, neither callback runs.
  bool submit(uint64_t lane, Task task);
  // Drops the lane's queued tasks (neither callback runs); a task of it already running finishes.
  void close_lane(uint64_t lane);
  // Drops every queued task and returns once the threads ended (a running task finishes first).
  // Idempotent; submit() refuses from now on.
  void stop();

  // Tasks queued and not started, over every lane (for tests and metrics).
  size_t queued() const;
  // Tasks dropped so far: their deadline passed (their `expired` ran) or their lane was closed.
  uint64_t expired_count() const;
  uint64_t dropped_count() const;

 private:
  struct Lane {
    std::deque<Task> tasks;
    bool running = false;  // one of its tasks runs now: the lane is not in ready_
  };
  void work();

  const std::string name_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::unordered_map<uint64_t, Lane> lanes_;
  std::deque<uint64_t> ready_;  // lanes with a task to start and none running, in turn order
  size_t queued_ = 0;
  uint64_t expired_ = 0;
  uint64_t dropped_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace qim
