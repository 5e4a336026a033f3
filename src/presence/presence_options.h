#pragma once
// PresenceOptions from the environment (docs/operations.md):
//   QIM_PRESENCE_GRACE_MS   5000   a user whose last connection closed is offline after this (0..600000)

#include "mailbox/store_options.h"
#include "presence/presence_hub.h"

namespace qim {

// Config error naming the variable for a value that is not an integer in range.
Result<PresenceOptions> presence_options_from_env(const EnvLookup& getenv);

}  // namespace qim
