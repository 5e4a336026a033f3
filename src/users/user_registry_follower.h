#pragma once
// A gateway's catch-up on the user registry's cells (docs/adr/0149): every `interval` it refreshes the
// registry's in-memory view from what the other gateways wrote (UserRegistry::refresh), so a user
// created, renamed or deleted through one gateway's API is known to every gateway's send path at most one
// interval (plus a round trip) later. A failed round is logged and retried at the next; the view keeps
// what it had meanwhile.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "users/user_registry.h"

namespace qim {

class UserRegistryFollower {
 public:
  // `registry` must outlive the follower.
  UserRegistryFollower(UserRegistry& registry, std::chrono::milliseconds interval);
  ~UserRegistryFollower();  // stop()
  UserRegistryFollower(const UserRegistryFollower&) = delete;
  UserRegistryFollower& operator=(const UserRegistryFollower&) = delete;

  void start();
  void stop();

 private:
  void run();

  UserRegistry& registry_;
  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace qim
