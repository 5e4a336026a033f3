#include "webhooks/webhook_consumer.h"

#include <fmt/format.h>
#include <spdlog/sinks/null_sink.h>

#include "core/conversation.h"
#include "webhooks/signature.h"

namespace qim {

namespace {

constexpr std::chrono::milliseconds kErrorPause{1000};  // a log or store error, not the hook's
constexpr size_t kDeadLetterReadMax = 100'000;

WebhookConsumerOptions with_logger(WebhookConsumerOptions o) {
  if (!o.logger)
    o.logger = std::make_shared<spdlog::logger>("webhooks", std::make_shared<spdlog::sinks::null_sink_mt>());
  return o;
}

}  // namespace

// One partition's sender, on the partition's thread: a record's events are delivered one at a time, in
// order; the record is done once each was acknowledged or dead-lettered.
class WebhookConsumer::PartitionHandler final : public OutboxFollower::Handler {
 public:
  PartitionHandler(WebhookConsumer& consumer, OutboxFollower::Partition& partition)
      : consumer_(consumer), partition_(partition), sender_(consumer.make_sender_()) {}

  Result<OutboxFollower::Taken> take(const LogRecord& rec) override {
    // Counted once per record read, not once per attempt of a record the store could not answer for.
    if (counted_ != rec.offset.value) {
      counted_ = rec.offset.value;
      ++consumer_.records_;
    }
    QIM_ASSIGN_OR_RETURN(auto events, consumer_.events_of(partition_.partition(), rec));
    if (partition_.stopping()) return OutboxFollower::Taken::kUnfinished;
    for (const WebhookEvent& e : events) {
      if (consumer_.deliver(partition_, *sender_, e) == Outcome::kStopped) break;
    }
    // The record in hand was not finished: it is sent again after a restart.
    if (partition_.stopping()) return OutboxFollower::Taken::kUnfinished;
    return OutboxFollower::Taken::kDone;
  }

 private:
  WebhookConsumer& consumer_;
  OutboxFollower::Partition& partition_;
  std::unique_ptr<HookSender> sender_;
  uint64_t counted_ = UINT64_MAX;
};

WebhookConsumer::WebhookConsumer(Log& outbox, Log& dead_letters, GroupStore* groups,
                                 SenderFactory make_sender, WebhookConsumerOptions options)
    : outbox_(outbox),
      dead_letters_(dead_letters),
      groups_(groups),
      make_sender_(std::move(make_sender)),
      options_(with_logger(std::move(options))),
      clock_(options_.clock ? options_.clock : std::make_shared<SystemClock>()),
      repeats_(outbox, options_.repeats),
      follower_(
          outbox,
          [this](OutboxFollower::Partition& p) { return std::make_unique<PartitionHandler>(*this, p); },
          outbox_follower_options("webhooks", options_)) {
  for (uint32_t p = 0; p < outbox.partition_count(); ++p)
    attempts_.push_back(std::make_unique<std::atomic<uint32_t>>(0));
}

WebhookConsumer::~WebhookConsumer() {
  stop();
}

Status WebhookConsumer::start() {
  return follower_.start();
}

void WebhookConsumer::stop() {
  follower_.stop();
}

Result<std::vector<WebhookEvent>> WebhookConsumer::events_of(uint32_t partition, const LogRecord& rec) {
  auto record = decode_outbox_record(rec.value);
  QIM_ASSIGN_OR_RETURN(bool repeat,
                       repeats_.is_repeat(partition, rec.offset, record.ok() ? &*record : nullptr));
  if (!record.ok()) {
    options_.logger->warn("webhooks: skipping outbox record {}:{}: {}", partition, rec.offset.value,
                          record.error().to_string());
    return std::vector<WebhookEvent>{};
  }
  if (repeat) return std::vector<WebhookEvent>{};  // the first SEND made the event
  RecordFate fate;
  auto conversation = Conversation::of(record->conversation);
  if (groups_ != nullptr && conversation.ok() && conversation->group_id() != nullptr) {
    const GroupId& group = *conversation->group_id();
    if (record->group_op) {
      QIM_ASSIGN_OR_RETURN(auto outcome, groups_->outcome(group, rec.offset.value));
      // Not decided yet: only possible when not following fanout (then ask again); when following, fanout
      // passed it without deciding (it quarantined the record), so it changed nothing.
      if (!outcome && options_.follow.empty())
        return Error(Errc::kNotFound,
                     fmt::format("group op {}:{} not applied yet", partition, rec.offset.value));
      fate.delivered = outcome && outcome->applied;
    } else {
      QIM_ASSIGN_OR_RETURN(auto member, groups_->member(group, record->sender));
      fate.delivered = member && member->member_at(rec.offset.value);
    }
  }
  if (record->event && options_.messages != nullptr) {
    QIM_ASSIGN_OR_RETURN(auto state, options_.messages->load(record->event->target));
    const EventOutcome* outcome = nullptr;
    if (state) {
      if (auto it = state->events.find(rec.offset.value); it != state->events.end()) outcome = &it->second;
    }
    // Not decided yet: only possible when not following fanout (ask again); when following, fanout passed
    // it without a decision recorded (an event about no known message), so it changed nothing.
    if (outcome == nullptr && options_.follow.empty()) {
      QIM_ASSIGN_OR_RETURN(uint64_t watermark, options_.messages->watermark(partition));
      if (watermark <= rec.offset.value)
        return Error(Errc::kNotFound,
                     fmt::format("message event {}:{} not decided yet", partition, rec.offset.value));
    }
    fate.delivered = outcome != nullptr && outcome->applied;
  }
  return webhook_events_of(*record, partition, rec.offset, fate);
}

WebhookConsumer::Outcome WebhookConsumer::deliver(OutboxFollower::Partition& p, HookSender& sender,
                                                  const WebhookEvent& e) {
  const int64_t first = now_ms();
  uint32_t attempts = 0;
  std::atomic<uint32_t>& in_hand = *attempts_[p.partition()];
  for (;;) {
    if (p.stopping()) return Outcome::kStopped;
    SignedDelivery d;
    d.id = e.id;
    d.timestamp = now_ms() / 1000;
    d.signature = webhook_signature(options_.key, d.id, d.timestamp, e.body);
    d.body = e.body;
    Status s = sender.deliver(d);
    if (s.ok()) {
      ++delivered_;
      in_hand = 0;
      return Outcome::kAcknowledged;
    }
    ++attempts;
    ++failed_;
    in_hand = attempts;
    auto delay = retry_delay(options_.retry, attempts, std::chrono::milliseconds(now_ms() - first));
    if (!delay) {
      const std::string letter = encode_dead_letter(e, attempts, now_ms(), s.error().to_string());
      for (;;) {
        auto appended = dead_letters_.append_sync(0, e.id, letter);
        if (appended.ok()) break;
        options_.logger->error("webhooks: cannot append event {} to the dead-letter log (retrying): {}", e.id,
                               appended.error().to_string());
        if (p.stopping()) return Outcome::kStopped;
        p.pause(kErrorPause);
      }
      options_.logger->error("webhooks: event {} ({}) dead-lettered after {} attempts: {}", e.id, e.type,
                             attempts, s.error().to_string());
      ++dead_;
      in_hand = 0;
      return Outcome::kDeadLettered;
    }
    options_.logger->warn("webhooks: event {} attempt {} failed ({}); next in {} ms", e.id, attempts,
                          s.error().to_string(), delay->count());
    // What the hook acknowledged before this event is not resent after a crash during the pause.
    (void)p.commit(true);
    p.pause(*delay);
  }
}

WebhookMetrics WebhookConsumer::metrics() const {
  WebhookMetrics m{delivered_.load(), failed_.load(), dead_.load(), replayed_.load(), records_.load(), {}};
  const int64_t now = clock_->now_ms();
  for (const OutboxFollowerPosition& p : follower_.positions()) {
    WebhookPartitionMetrics pm;
    pm.partition = p.partition;
    pm.next = p.next;
    auto end = outbox_.end_offset(p.partition);
    pm.lag = end.ok() && end->value > pm.next ? end->value - pm.next : 0;
    const int64_t head = p.head_time_ms;
    pm.head_age_ms = head > 0 && now > head ? now - head : 0;
    pm.attempts = attempts_[p.partition]->load();
    m.partitions.push_back(pm);
  }
  return m;
}

std::string WebhookConsumer::prometheus() const {
  const WebhookMetrics m = metrics();
  std::string out;
  auto one = [&out](const char* name, const char* type, const char* help, uint64_t v) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3}\n", name, help, type, v);
  };
  one("qim_webhook_delivered_total", "counter", "Events the hook acknowledged (resends included)",
      m.delivered);
  one("qim_webhook_failed_attempts_total", "counter", "Deliveries that failed (each retry counts)",
      m.failed_attempts);
  one("qim_webhook_dead_lettered_total", "counter", "Events given up after their retry time (dead letters)",
      m.dead_lettered);
  one("qim_webhook_replayed_total", "counter", "Dead letters the hook acknowledged on replay", m.replayed);
  one("qim_webhook_records_total", "counter", "Outbox records the webhook consumer read", m.records);
  auto family = [&out, &m](const char* name, const char* help, auto value) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} gauge\n", name, help);
    for (const auto& p : m.partitions)
      out += fmt::format("{}{{partition=\"{}\"}} {}\n", name, p.partition, value(p));
  };
  family("qim_webhook_lag", "Outbox records not yet acknowledged or dead-lettered",
         [](const WebhookPartitionMetrics& p) { return p.lag; });
  family("qim_webhook_lag_seconds", "Age of the Outbox record being delivered (0 when caught up)",
         [](const WebhookPartitionMetrics& p) { return static_cast<double>(p.head_age_ms) / 1000.0; });
  family("qim_webhook_retry_attempts", "Failed attempts of the event being delivered",
         [](const WebhookPartitionMetrics& p) { return p.attempts; });
  return out;
}

Result<std::string> WebhookConsumer::list_dead_letters() {
  std::lock_guard lock(replay_mu_);
  QIM_ASSIGN_OR_RETURN(auto cursor, dead_letters_.committed(kDeadLetterReplayGroup, 0));
  QIM_ASSIGN_OR_RETURN(auto letters, read_dead_letters(dead_letters_, 0, kDeadLetterReadMax));
  return render_dead_letters(letters, cursor.value_or(Offset{0}).value);
}

Result<ReplayReport> WebhookConsumer::replay_dead_letters(std::optional<uint64_t> from) {
  std::lock_guard lock(replay_mu_);
  QIM_ASSIGN_OR_RETURN(auto committed, dead_letters_.committed(kDeadLetterReplayGroup, 0));
  const uint64_t saved = committed.value_or(Offset{0}).value;
  ReplayReport report;
  report.cursor = from.value_or(saved);
  QIM_ASSIGN_OR_RETURN(auto letters, read_dead_letters(dead_letters_, report.cursor, kDeadLetterReadMax));
  std::unique_ptr<HookSender> sender = make_sender_();
  size_t i = 0;
  for (; i < letters.size(); ++i) {
    const DeadLetter& d = letters[i];
    SignedDelivery sd{d.id, now_ms() / 1000, "", d.body};
    sd.signature = webhook_signature(options_.key, sd.id, sd.timestamp, sd.body);
    Status s = sender->deliver(sd);
    if (!s.ok()) {
      report.error = fmt::format("dead letter {} ({}): {}", d.position, d.id, s.error().to_string());
      break;
    }
    ++report.replayed;
    ++replayed_;
    report.cursor = d.position + 1;
    // The cursor only moves forward: a replay from an earlier position does not make later ones pending.
    if (report.cursor > saved)
      QIM_RETURN_IF_ERROR(dead_letters_.commit(kDeadLetterReplayGroup, 0, Offset{report.cursor}));
  }
  report.pending = letters.size() - i;
  return report;
}

}  // namespace qim
