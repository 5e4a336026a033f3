#pragma once
// The event webhook's consumer (docs/webhooks.md): reads the Outbox in its own consumer group
// ("qim-webhooks"), one thread per partition (outbox/outbox_follower.h), and POSTs each record's events
// (webhooks/webhook_event.h), signed (webhooks/signature.h), to the hook, one at a time and in Outbox order:
// an event is sent only once every earlier event of its partition was acknowledged (2xx) or dead-lettered, so
// the events of a conversation (one partition) arrive in order. At least once: the partition's position is
// committed only past acknowledged (or dead-lettered) events: after a batch (at most once per
// commit_interval, as fanout and the archiver: on Kafka a commit is a write to the offsets topic), before
// each pause of a retry and when stopping; a clean restart resends nothing acknowledged, a crash resends at
// most the events acknowledged since the last commit (one commit_interval's worth).
//
// A failed attempt is retried after the pauses of `retry` (webhooks/retry_policy.h); past its retry time
// the event is appended to the dead-letter log (webhooks/dead_letters.h) and the partition moves on. The
// position never passes an event that is neither acknowledged nor durably dead-lettered.
//
// With `follow` set (the fanout group), a partition is read only up to that group's committed position:
// fanout has then decided each record (a group op applied or refused, a group message delivered or not),
// and `groups` says what it decided; the cost is up to fanout's commit interval (1 s) of latency.

#include <spdlog/logger.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/clock.h"
#include "groups/group_store.h"
#include "lifecycle/message_state_store.h"
#include "log/log.h"
#include "outbox/outbox_follower.h"
#include "outbox/repeated_sends.h"
#include "webhooks/dead_letters.h"
#include "webhooks/hook_sender.h"
#include "webhooks/retry_policy.h"

namespace qim {

inline constexpr const char* kWebhookGroup = "qim-webhooks";

struct WebhookConsumerOptions {
  std::string key;  // the decoded secret (decode_webhook_secret)
  RetryPolicy retry;
  std::string group = kWebhookGroup;
  std::vector<uint32_t> partitions;                 // empty: every partition
  size_t batch_max = 64;                            // QIM_WEBHOOK_BATCH: Outbox records read at a time
  std::chrono::milliseconds commit_interval{1000};  // QIM_WEBHOOK_COMMIT_INTERVAL_MS (0: after every batch)
  std::chrono::milliseconds poll_wait{200};
  bool start_at_end = false;  // QIM_WEBHOOK_START=latest: a group with no position starts at the end
  std::string follow;         // a consumer group to stay behind (fanout's); empty: none
  // Where fanout records its EDIT and RECALL decisions (lifecycle/message_state_store.h): a refused one
  // makes no event. Null: every EDIT and RECALL record is an event (no deployment without the store
  // accepts them: the gateway refuses them UNAVAILABLE). Must outlive the consumer.
  MessageStateStore* messages = nullptr;
  RepeatWindow repeats;                // repeated SENDs make no event (outbox/repeated_sends.h)
  std::shared_ptr<const Clock> clock;  // the signature's timestamp, the retry time; system clock if null
  // How the consumer pauses (tests: a fake that advances a ManualClock). Default: a wait that a stop cuts.
  std::function<void(std::chrono::milliseconds)> sleep;
  std::shared_ptr<spdlog::logger> logger;
};

struct WebhookPartitionMetrics {
  uint32_t partition = 0;
  uint64_t next = 0;        // first Outbox offset not yet acknowledged or dead-lettered
  uint64_t lag = 0;         // Outbox records from next to the end
  int64_t head_age_ms = 0;  // how long ago the record in hand was appended (0 when caught up)
  uint32_t attempts = 0;    // failed attempts of the event in hand
};

struct WebhookMetrics {
  uint64_t delivered = 0;        // events acknowledged (resends included)
  uint64_t failed_attempts = 0;  // attempts that failed (each retry counts)
  uint64_t dead_lettered = 0;
  uint64_t replayed = 0;  // dead letters acknowledged on replay
  uint64_t records = 0;   // Outbox records read
  std::vector<WebhookPartitionMetrics> partitions;
};

struct ReplayReport {
  uint64_t replayed = 0;
  uint64_t cursor = 0;   // the replay cursor after the run
  uint64_t pending = 0;  // dead letters still after it
  std::string error;     // the failure that stopped the replay; empty if every one was acknowledged
};

class WebhookConsumer {
 public:
  using SenderFactory = std::function<std::unique_ptr<HookSender>()>;
  // `groups` may be null (no group check: every record is an event). Nothing starts before start().
  WebhookConsumer(Log& outbox, Log& dead_letters, GroupStore* groups, SenderFactory make_sender,
                  WebhookConsumerOptions options);
  ~WebhookConsumer();
  WebhookConsumer(const WebhookConsumer&) = delete;
  WebhookConsumer& operator=(const WebhookConsumer&) = delete;

  // Reads the committed positions and starts one thread per partition. InvalidArgument for an unknown
  // partition; the log's error if a position cannot be read.
  Status start();
  // Stops after the attempt in hand and commits what was acknowledged. Idempotent.
  void stop();

  WebhookMetrics metrics() const;
  std::string prometheus() const;

  // The dead letters (with the replay cursor), and a replay from the cursor (or from `from`): see
  // webhooks/dead_letters.h. Serialised with each other; safe while the partitions run.
  Result<std::string> list_dead_letters();
  Result<ReplayReport> replay_dead_letters(std::optional<uint64_t> from);

 private:
  enum class Outcome { kAcknowledged, kDeadLettered, kStopped };
  class PartitionHandler;  // one partition's sender (webhook_consumer.cc)

  // The events of one record, after what fanout made of it. An error: ask again after a pause.
  Result<std::vector<WebhookEvent>> events_of(uint32_t partition, const LogRecord& rec);
  Outcome deliver(OutboxFollower::Partition& p, HookSender& sender, const WebhookEvent& e);
  int64_t now_ms() const { return clock_->now_ms(); }

  Log& outbox_;
  Log& dead_letters_;
  GroupStore* groups_;
  SenderFactory make_sender_;
  WebhookConsumerOptions options_;
  std::shared_ptr<const Clock> clock_;
  OutboxRepeatFilter repeats_;
  // Failed attempts of the event in hand, by partition (the metric's).
  std::vector<std::unique_ptr<std::atomic<uint32_t>>> attempts_;
  std::mutex replay_mu_;
  std::atomic<uint64_t> delivered_{0}, failed_{0}, dead_{0}, replayed_{0}, records_{0};
  OutboxFollower follower_;  // last: its threads stop before the members they use go
};

}  // namespace qim
