#pragma once
// The push role (docs/push.md, docs/adr/0117): follows the Outbox in its own consumer group ("qim-push"),
// behind fanout's committed position (so a group message's fate is decided), one thread per partition
// (outbox/outbox_follower.h), and
// notifies the recipients' devices that have no live connection.
//
// For each message (not a group op, edit or recall; not a repeated SEND) its recipients are the direct
// peer, or the group's members at the message's offset, never the sender. A recipient's burst in one
// conversation is collapsed: the first message opens a window (QIM_PUSH_COLLAPSE_MS), later ones only
// update it, and when it closes the recipient's devices get one notification (the latest message, the
// burst's count). Then, per registered device (push_registry.h): none if the conversation is muted for the
// user (inbox/privacy.h), if the device has a live connection on any gateway (sessions: DeviceSession::live),
// if a revocation came after its registration (it is then unregistered), or past the device's bound per
// minute (device_rate.h). The badge is the user's unread conversations (the inbox), when it answers.
// A provider that rejects the token (push_sender.h) unregisters the device.
//
// At most once: the position is committed past records whose bursts were opened (every commit_interval,
// and when stopping, after the open windows were flushed); a crash loses the windows open then (at most
// QIM_PUSH_COLLAPSE_MS of notifications), never sends one twice after a clean restart.

#include <spdlog/logger.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "core/clock.h"
#include "groups/group_store.h"
#include "inbox/inbox.h"
#include "log/log.h"
#include "outbox/outbox_follower.h"
#include "outbox/repeated_sends.h"
#include "push/device_rate.h"
#include "push/push_registry.h"
#include "push/push_sender.h"
#include "sessions/session_store.h"

namespace qim {

inline constexpr const char* kPushGroup = "qim-push";

struct PushConsumerOptions {
  std::string group = kPushGroup;
  std::vector<uint32_t> partitions;                 // empty: every partition
  size_t batch_max = 256;                           // Outbox records read at a time
  std::chrono::milliseconds commit_interval{1000};  // 0: after every batch
  std::chrono::milliseconds poll_wait{200};
  std::chrono::milliseconds collapse{2000};  // QIM_PUSH_COLLAPSE_MS: a burst's window
  uint32_t per_device_per_minute = 10;       // QIM_PUSH_DEVICE_PER_MINUTE
  size_t preview_bytes = 100;                // QIM_PUSH_PREVIEW_BYTES (0: no preview)
  bool start_at_end = true;                  // a new group starts at the Outbox's end (no push for the past)
  std::string follow;                        // a consumer group to stay behind (fanout's); empty: none
  RepeatWindow repeats;
  std::shared_ptr<const Clock> clock;  // system clock if null
  std::shared_ptr<spdlog::logger> logger;
};

struct PushDeps {
  Log* outbox = nullptr;             // required
  InboxBackend* registry = nullptr;  // required: the push registry's and the mutes' cells
  GroupStore* groups = nullptr;      // null: group messages make no notification
  Inbox* inbox = nullptr;            // null: no badge
  SessionStore* sessions = nullptr;  // null: every device counts as offline and none as revoked
};

struct PushMetrics {
  uint64_t sent = 0;          // notifications a provider accepted
  uint64_t failed = 0;        // notifications a provider failed (or could not be reached)
  uint64_t unregistered = 0;  // devices unregistered (the provider rejected the token, or revoked)
  uint64_t suppressed_online = 0, suppressed_muted = 0, suppressed_rate = 0;
  uint64_t collapsed = 0;  // messages folded into an earlier notification of their burst
  uint64_t records = 0;    // Outbox records read
};

class PushConsumer {
 public:
  using SenderFactory = std::function<std::unique_ptr<PushSender>()>;  // one per partition thread
  PushConsumer(PushDeps deps, SenderFactory make_sender, PushConsumerOptions options);
  ~PushConsumer();
  PushConsumer(const PushConsumer&) = delete;
  PushConsumer& operator=(const PushConsumer&) = delete;

  // Reads the committed positions and starts one thread per partition. InvalidArgument for an unknown
  // partition; the log's error if a position cannot be read.
  Status start();
  // Sends the open windows, commits, stops. Idempotent.
  void stop();

  PushMetrics metrics() const;
  std::string prometheus() const;

 private:
  struct Burst {
    int64_t due_ms = 0;
    PushNotification latest;  // user, conversation, message, sender, preview, time; count
  };
  using Bursts = std::map<std::pair<UserId, ConversationId>, Burst>;
  class PartitionHandler;  // one partition's bursts and sender (push_consumer.cc)

  // Opens or extends the bursts of one record's recipients. An error: ask again after a pause.
  Status take(uint32_t partition, Bursts& open, const LogRecord& rec);
  Result<std::vector<UserId>> recipients(const OutboxRecord& r, uint64_t offset);
  // Sends the bursts due at `now` (all of them when `all`).
  void flush(Bursts& open, PushSender& sender, bool all);
  void notify(PushSender& sender, const PushNotification& burst);
  int64_t now_ms() const { return clock_->now_ms(); }

  PushDeps deps_;
  SenderFactory make_sender_;
  PushConsumerOptions options_;
  std::shared_ptr<const Clock> clock_;
  OutboxRepeatFilter repeats_;
  PushRegistry registry_;
  DeviceRate rate_;
  std::atomic<uint64_t> sent_{0}, failed_{0}, unregistered_{0}, online_{0}, muted_{0}, rated_{0},
      collapsed_{0}, records_{0};
  OutboxFollower follower_;  // last: its threads stop before the members they use go
};

}  // namespace qim
