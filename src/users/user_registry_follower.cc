#include "users/user_registry_follower.h"

#include <spdlog/spdlog.h>

#include "core/thread_name.h"

namespace qim {

UserRegistryFollower::UserRegistryFollower(UserRegistry& registry, std::chrono::milliseconds interval)
    : registry_(registry), interval_(interval) {}

UserRegistryFollower::~UserRegistryFollower() {
  stop();
}

void UserRegistryFollower::start() {
  thread_ = std::thread([this] { run(); });
}

void UserRegistryFollower::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void UserRegistryFollower::run() {
  set_thread_name("users");
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    if (Status s = registry_.refresh(); !s.ok())
      spdlog::warn("users: the registry's refresh failed (retried in {} ms): {}", interval_.count(),
                   s.error().to_string());
    lock.lock();
  }
}

}  // namespace qim
