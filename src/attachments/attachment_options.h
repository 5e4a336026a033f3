#pragma once
// The attachment rules' settings (docs/operations.md "Attachments"). An unset variable keeps the default.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "mailbox/store_options.h"  // EnvLookup

namespace qim::attachments {

struct AttachmentOptions {
  uint64_t max_bytes = 100ull << 20;  // QIM_ATTACH_MAX_BYTES: one file
  // One user's ATTACHes per UTC day, on every gateway of the deployment together (docs/adr/0158):
  uint64_t daily_bytes = 2ull << 30;                 // QIM_ATTACH_DAILY_BYTES: their declared bytes
  uint64_t daily_uploads = 10'000;                   // QIM_ATTACH_DAILY_UPLOADS: their number (1..100000)
  std::vector<std::string> types = default_types();  // QIM_ATTACH_TYPES: comma-separated, exact match
  std::chrono::seconds put_ttl{300};                 // QIM_ATTACH_PUT_TTL_S: an upload URL's life
  std::chrono::seconds get_ttl{300};                 // QIM_ATTACH_GET_TTL_S: a download URL's life
  uint64_t hash_max_bytes = 16ull << 20;  // QIM_ATTACH_HASH_MAX_BYTES: largest object whose sha256 is checked
  // QIM_ATTACH_THUMB_MAX_BYTES: largest image read back for its thumbnail (larger ones get none; 0: none)
  uint64_t thumb_max_bytes = 20ull << 20;
  // QIM_ATTACH_ORPHAN_AGE_MS: an upload no SEND referenced is deleted once this old (1000.. ms; values under
  // a minute are for tests: an upload whose SEND comes later than this is lost)
  int64_t orphan_age_ms = 86'400'000;
  // QIM_ATTACH_SWEEP_INTERVAL_MS: how often each gateway process runs the orphan sweep (orphan_sweeper.h)
  int64_t sweep_interval_ms = 3'600'000;
  // QIM_ATTACH_RETENTION_MS: a sent attachment's objects are deleted this long after the last SEND that
  // referenced it (docs/adr/0151): by default when the mailbox retention has removed that message from every
  // mailbox (QIM_MAILBOX_RETENTION_MS, default 30 days, plus the day its entries' TTL adds); 0: kept forever.
  int64_t retention_ms = kDefaultMailboxRetentionMs + 86'400'000;

  static constexpr int64_t kDefaultMailboxRetentionMs = 30LL * 86'400'000;

  static std::vector<std::string> default_types();
  bool allows(std::string_view content_type) const;
};

// Reads the variables above. Config naming the variable on a bad value.
Result<AttachmentOptions> attachment_options_from_env(const EnvLookup& getenv);

}  // namespace qim::attachments
