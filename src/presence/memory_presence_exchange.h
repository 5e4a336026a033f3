#pragma once
// The PresenceExchange of one process: a map of users to how many hubs hold them online. Several hubs
// (gateways) may share one (the unit tests run two). Listeners are called on the announcing hub's thread.

#include <map>
#include <mutex>

#include "presence/presence_exchange.h"

namespace qim {

class MemoryPresenceExchange final : public PresenceExchange {
 public:
  // Each hub sets its listener; all of them hear every change (each filters by its own watchers).
  void add_listener(const void* owner, Listener listener) override;
  void remove_listener(const void* owner) override;
  void watch(const UserId&, bool) override {}
  Status went_online(const UserId& user, PresencePrivacy privacy) override;
  Status went_offline(const UserId& user, PresencePrivacy privacy, int64_t at_ms) override;
  Status privacy_changed(const UserId& user, PresencePrivacy privacy) override;
  Result<std::vector<PresenceRecord>> records(std::span<const UserId> users) override;

 private:
  struct State {
    uint32_t holders = 0;  // hubs holding a live connection of the user
    PresenceRecord record;
  };
  void notify(const PresenceChange& change);

  std::mutex mu_;
  std::map<UserId, State> users_;
  std::mutex listeners_mu_;  // held while notifying: a change is heard in the order it was made
  std::vector<std::pair<const void*, Listener>> listeners_;
};

}  // namespace qim
