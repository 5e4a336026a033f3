#pragma once
// The PresenceDirectory of a deployment with an inbox: a user's direct peers are the peers of their
// conversation rows of kind direct (InboxBackend::conversation_rows, one read per AUTH), the privacy is
// the inbox setting "presence" (InboxBackend::settings, one read per change of that user).

#include "inbox/inbox_backend.h"
#include "presence/presence_directory.h"

namespace qim {

class InboxPresenceDirectory final : public PresenceDirectory {
 public:
  // `inbox` must outlive the directory.
  explicit InboxPresenceDirectory(InboxBackend& inbox) : inbox_(inbox) {}

  // The peers of the user's direct conversation rows, the most recent (highest seq) first.
  Result<std::vector<UserId>> direct_peers(const UserId& user, size_t limit) override;
  // settings(user)["presence"]; kEveryone when unset, kNobody for a value it does not know (fail closed).
  Result<PresencePrivacy> privacy(const UserId& user) override;
  // Privacy::blocks (inbox/privacy.h): one read.
  Result<std::set<UserId>> blocks(const UserId& user) override;

 private:
  InboxBackend& inbox_;
};

}  // namespace qim
