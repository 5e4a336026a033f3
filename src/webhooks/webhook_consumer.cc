#include "webhooks/webhook_consumer.h"

#include <fmt/format.h>
#include <spdlog/sinks/null_sink.h>

#include "core/conversation.h"
#include "webhooks/signature.h"

namespace qim {

namespace {

constexpr std::chrono::milliseconds kErrorPause{1000};  // a log or store error, not the hook's
constexpr size_t kDeadLetterReadMax = 100'000;

}  // namespace

WebhookConsumer::WebhookConsumer(Log& outbox, Log& dead_letters, GroupStore* groups,
                                 SenderFactory make_sender, WebhookConsumerOptions options)
    : outbox_(outbox),
      dead_letters_(dead_letters),
      groups_(groups),
      make_sender_(std::move(make_sender)),
      options_(std::move(options)),
      clock_(options_.clock ? options_.clock : std::make_shared<SystemClock>()),
      repeats_(outbox, options_.repeats) {
  if (!options_.logger) {
    options_.logger =
        std::make_shared<spdlog::logger>("webhooks", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
}

WebhookConsumer::~WebhookConsumer() {
  stop();
}

Status WebhookConsumer::start() {
  if (started_) return {};
  std::vector<uint32_t> parts = options_.partitions;
  if (parts.empty()) {
    for (uint32_t p = 0; p < outbox_.partition_count(); ++p) parts.push_back(p);
  }
  std::vector<std::unique_ptr<Partition>> states;
  for (uint32_t p : parts) {
    if (p >= outbox_.partition_count())
      return Error(Errc::kInvalidArgument, fmt::format("webhooks: no outbox partition {}", p));
    auto s = std::make_unique<Partition>();
    s->partition = p;
    QIM_ASSIGN_OR_RETURN(auto committed, outbox_.committed(options_.group, p));
    QIM_ASSIGN_OR_RETURN(Offset start, outbox_.start_offset(p));
    uint64_t next = 0;
    if (committed) {
      next = committed->value;
      if (next < start.value) {
        options_.logger->warn(
            "webhooks: outbox partition {}: records {}..{} were deleted by the outbox retention before "
            "they were sent; starting at {}",
            p, next, start.value - 1, start.value);
        next = start.value;
      }
    } else if (options_.start_at_end) {
      QIM_ASSIGN_OR_RETURN(Offset end, outbox_.end_offset(p));
      next = end.value;
      QIM_RETURN_IF_ERROR(outbox_.commit(options_.group, p, end));
    } else {
      next = start.value;
    }
    s->next = next;
    s->committed = committed ? committed->value : next;
    states.push_back(std::move(s));
  }
  partitions_ = std::move(states);
  stopping_ = false;
  started_ = true;
  for (auto& p : partitions_) p->thread = std::thread([this, s = p.get()] { run(*s); });
  return {};
}

void WebhookConsumer::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& p : partitions_) {
    if (p->thread.joinable()) p->thread.join();
  }
}

void WebhookConsumer::pause(std::chrono::milliseconds d) {
  if (options_.sleep) {
    options_.sleep(d);
    return;
  }
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, d, [this] { return stopping_.load(); });
}

Status WebhookConsumer::commit(Partition& p, bool force) {
  const uint64_t next = p.next.load();
  if (next <= p.committed) return {};
  if (!force && now_ms() - p.last_commit_ms < options_.commit_interval.count()) return {};
  p.last_commit_ms = now_ms();
  Status s = outbox_.commit(options_.group, p.partition, Offset{next});
  if (s.ok()) {
    p.committed = next;
  } else {
    // Not fatal: the position stays behind, so a restart resends a little more; the next commit retries.
    options_.logger->warn("webhooks: cannot commit outbox partition {} at {}: {}", p.partition, next,
                          s.error().to_string());
  }
  return s;
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
  return webhook_events_of(*record, partition, rec.offset, fate);
}

WebhookConsumer::Outcome WebhookConsumer::deliver(Partition& p, HookSender& sender, const WebhookEvent& e) {
  const int64_t first = now_ms();
  uint32_t attempts = 0;
  for (;;) {
    if (stopping_) return Outcome::kStopped;
    SignedDelivery d;
    d.id = e.id;
    d.timestamp = now_ms() / 1000;
    d.signature = webhook_signature(options_.key, d.id, d.timestamp, e.body);
    d.body = e.body;
    Status s = sender.deliver(d);
    if (s.ok()) {
      ++delivered_;
      p.attempts = 0;
      return Outcome::kAcknowledged;
    }
    ++attempts;
    ++failed_;
    p.attempts = attempts;
    auto delay = retry_delay(options_.retry, attempts, std::chrono::milliseconds(now_ms() - first));
    if (!delay) {
      const std::string letter = encode_dead_letter(e, attempts, now_ms(), s.error().to_string());
      for (;;) {
        auto appended = dead_letters_.append_sync(0, e.id, letter);
        if (appended.ok()) break;
        options_.logger->error("webhooks: cannot append event {} to the dead-letter log (retrying): {}", e.id,
                               appended.error().to_string());
        if (stopping_) return Outcome::kStopped;
        pause(kErrorPause);
      }
      options_.logger->error("webhooks: event {} ({}) dead-lettered after {} attempts: {}", e.id, e.type,
                             attempts, s.error().to_string());
      ++dead_;
      p.attempts = 0;
      return Outcome::kDeadLettered;
    }
    options_.logger->warn("webhooks: event {} attempt {} failed ({}); next in {} ms", e.id, attempts,
                          s.error().to_string(), delay->count());
    // What the hook acknowledged before this event is not resent after a crash during the pause.
    (void)commit(p, true);
    pause(*delay);
  }
}

void WebhookConsumer::run(Partition& p) {
  std::unique_ptr<HookSender> sender = make_sender_();
  // Fanout's committed position, asked again only once this partition caught up with it (on Kafka each
  // ask is a round trip to the group coordinator).
  uint64_t limit = options_.follow.empty() ? UINT64_MAX : 0;
  while (!stopping_) {
    const uint64_t next = p.next.load();
    if (next >= limit) {
      auto decided = outbox_.committed(options_.follow, p.partition);
      if (!decided.ok()) {
        options_.logger->warn("webhooks: cannot read {}'s position on partition {}: {}", options_.follow,
                              p.partition, decided.error().to_string());
        pause(kErrorPause);
        continue;
      }
      limit = decided->value_or(Offset{0}).value;
      if (next >= limit) {
        pause(options_.poll_wait);
        continue;
      }
    }
    auto batch = outbox_.read(p.partition, Offset{next}, std::min<uint64_t>(options_.batch_max, limit - next),
                              options_.poll_wait);
    if (!batch.ok()) {
      options_.logger->warn("webhooks: cannot read outbox partition {} at {}: {}", p.partition, next,
                            batch.error().to_string());
      pause(kErrorPause);
      continue;
    }
    for (const LogRecord& rec : *batch) {
      if (rec.offset.value >= limit || stopping_) break;
      p.head_time_ms = rec.timestamp_ms;
      ++records_;
      Result<std::vector<WebhookEvent>> events = std::vector<WebhookEvent>{};
      while (!stopping_) {
        events = events_of(p.partition, rec);
        if (events.ok()) break;
        options_.logger->warn("webhooks: outbox record {}:{}: {} (trying again)", p.partition,
                              rec.offset.value, events.error().to_string());
        pause(kErrorPause);
      }
      if (stopping_) break;
      for (const WebhookEvent& e : *events) {
        if (deliver(p, *sender, e) == Outcome::kStopped) break;
      }
      if (stopping_) break;  // the record in hand was not finished: it is sent again after a restart
      p.next = rec.offset.value + 1;
    }
    p.head_time_ms = 0;
    (void)commit(p, false);
  }
  (void)commit(p, true);
}

WebhookMetrics WebhookConsumer::metrics() const {
  WebhookMetrics m{delivered_.load(), failed_.load(), dead_.load(), replayed_.load(), records_.load(), {}};
  const int64_t now = clock_->now_ms();
  for (const auto& p : partitions_) {
    WebhookPartitionMetrics pm;
    pm.partition = p->partition;
    pm.next = p->next.load();
    auto end = outbox_.end_offset(p->partition);
    pm.lag = end.ok() && end->value > pm.next ? end->value - pm.next : 0;
    const int64_t head = p->head_time_ms.load();
    pm.head_age_ms = head > 0 && now > head ? now - head : 0;
    pm.attempts = p->attempts.load();
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
