#pragma once
// What presence reads from the store, behind one small interface (the inbox provides it:
// inbox_presence_directory.h; tests and a deployment without an inbox use MemoryPresenceDirectory):
// a user's direct peers (subscribed implicitly at AUTH, and who counts as a contact) and their privacy
// setting. Read once per connection (peers) and once per change of a user (privacy): never per watcher.

#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "core/status.h"
#include "presence/presence_types.h"

namespace qim {

class PresenceDirectory {
 public:
  virtual ~PresenceDirectory() = default;
  // The users `user` shares a direct conversation with, at most `limit` (the most recent first where the
  // store knows). A store error as it is.
  virtual Result<std::vector<UserId>> direct_peers(const UserId& user, size_t limit) = 0;
  // The user's "presence" setting; kEveryone when never set. A store error as it is.
  virtual Result<PresencePrivacy> privacy(const UserId& user) = 0;
  // The users `user` blocks (inbox/privacy.h): their presence is not shown to `user` (docs/adr/0096).
  // Read once per connection (AUTH) and when the user's block list changes. None by default.
  virtual Result<std::set<UserId>> blocks(const UserId& user) {
    (void)user;
    return std::set<UserId>{};
  }
};

// In memory: for tests, and for a gateway without an inbox (no peers, everyone visible unless set here).
class MemoryPresenceDirectory final : public PresenceDirectory {
 public:
  void set_privacy(const UserId& user, PresencePrivacy p);
  // Records a direct conversation between a and b (both ways).
  void add_peers(const UserId& a, const UserId& b);
  void set_blocks(const UserId& user, std::set<UserId> blocked);

  Result<std::vector<UserId>> direct_peers(const UserId& user, size_t limit) override;
  Result<PresencePrivacy> privacy(const UserId& user) override;
  Result<std::set<UserId>> blocks(const UserId& user) override;

 private:
  std::mutex mu_;
  std::map<UserId, PresencePrivacy> privacy_;
  std::map<UserId, std::set<UserId>> peers_;
  std::map<UserId, std::set<UserId>> blocks_;
};

}  // namespace qim
