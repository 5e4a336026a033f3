#include "gateway/fair_pool.h"

#include <algorithm>

#include "core/thread_name.h"

namespace qim {

FairPool::FairPool(std::string name, uint32_t threads) : name_(std::move(name)) {
  threads = std::max<uint32_t>(threads, 1);
  threads_.reserve(threads);
  for (uint32_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this, i] {
      set_thread_name(name_ + std::to_string(i));
      work();
    });
  }
}

FairPool::~FairPool() {
  stop();
}

bool FairPool::submit(uint64_t lane, Task task) {
  std::lock_guard lock(mu_);
  if (stopping_) return false;
  Lane& l = lanes_[lane];
  const bool was_idle = l.tasks.empty() && !l.running;
  l.tasks.push_back(std::move(task));
  ++queued_;
  if (was_idle) {
    ready_.push_back(lane);
    wake_.notify_one();
  }
  return true;
}

void FairPool::close_lane(uint64_t lane) {
  std::deque<Task> dropped;  // destroyed outside the lock: a task may own what calls back into the pool
  {
    std::lock_guard lock(mu_);
    auto it = lanes_.find(lane);
    if (it == lanes_.end()) return;
    dropped.swap(it->second.tasks);
    queued_ -= dropped.size();
    dropped_ += dropped.size();
    if (!it->second.running) {
      lanes_.erase(it);
      ready_.erase(std::remove(ready_.begin(), ready_.end(), lane), ready_.end());
    }
  }
}

void FairPool::stop() {
  std::vector<std::deque<Task>> dropped;
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& [id, lane] : lanes_) {
      dropped_ += lane.tasks.size();
      dropped.push_back(std::move(lane.tasks));
      lane.tasks.clear();
    }
    queued_ = 0;
    ready_.clear();
    threads.swap(threads_);
  }
  wake_.notify_all();
  for (auto& t : threads) {
    if (t.joinable()) t.join();
  }
}

size_t FairPool::queued() const {
  std::lock_guard lock(mu_);
  return queued_;
}

uint64_t FairPool::expired_count() const {
  std::lock_guard lock(mu_);
  return expired_;
}

uint64_t FairPool::dropped_count() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

void FairPool::work() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
    if (stopping_) return;
    const uint64_t id = ready_.front();
    ready_.pop_front();
    Lane& lane = lanes_[id];
    Task task = std::move(lane.tasks.front());
    lane.tasks.pop_front();
    --queued_;
    lane.running = true;
    const bool late = Clock::now() > task.deadline;
    if (late) ++expired_;
    lock.unlock();
    if (!late) {
      task.run();
    } else if (task.expired) {
      task.expired();
    }
    task = Task{};  // released before the lock is taken again (see close_lane)
    lock.lock();
    auto it = lanes_.find(id);
    if (it == lanes_.end()) continue;  // cannot happen: a running lane is never erased
    it->second.running = false;
    if (!it->second.tasks.empty() && !stopping_) {
      ready_.push_back(id);  // its next task waits for the other lanes' turns
      wake_.notify_one();
    } else if (it->second.tasks.empty()) {
      lanes_.erase(it);
    }
  }
}

}  // namespace qim
