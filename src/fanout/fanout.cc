#include "fanout/fanout.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

#include "fanout/dispatch_plan.h"
#include "mailbox/message_codec.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace {

std::vector<uint32_t> all_partitions(const Log& log) {
  std::vector<uint32_t> out;
  for (uint32_t p = 0; p < log.partition_count(); ++p) out.push_back(p);
  return out;
}

// Waits for a known number of append callbacks and keeps each one's error.
class AppendWaiter {
 public:
  explicit AppendWaiter(size_t n) : remaining_(n), errors_(n) {}
  AppendCallback callback(size_t i) {
    return [this, i](Result<Offset> r) {
      std::lock_guard lock(mu_);
      if (!r.ok()) errors_[i] = r.error();
      if (--remaining_ == 0) cv_.notify_all();
    };
  }
  // Every append's error (nullopt: appended), once all have answered.
  std::vector<std::optional<Error>> wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return remaining_ == 0; });
    return std::move(errors_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  size_t remaining_;
  std::vector<std::optional<Error>> errors_;
};

// An error that the same record meets again however often it is retried: a row or record that does not
// decode, or a value the store or log refuses as it is. The others (Transport, Timeout, Io, ...) are an
// engine that is away for now.
bool permanent(const Error& e) {
  return e.code() == Errc::kCorruptEntry || e.code() == Errc::kInvalidArgument;
}

}  // namespace

Fanout::Fanout(Log& outbox, Log& mailbox_log, ShardMap shards, FanoutOptions options)
    : outbox_(outbox),
      mailbox_log_(mailbox_log),
      shards_(shards),
      options_(std::move(options)),
      repeats_(outbox_, options_.repeats),
      groups_(options_.groups
                  ? std::make_unique<GroupRecipients>(*options_.groups, options_.group_max_members)
                  : nullptr),
      quarantine_(options_.quarantine ? std::make_unique<Quarantine>(
                                            *options_.quarantine,
                                            options_.clock ? options_.clock : std::make_shared<SystemClock>())
                                      : nullptr),
      events_(options_.messages
                  ? std::make_unique<MessageEvents>(outbox_, *options_.messages, options_.lifecycle)
                  : nullptr),
      known_watermarks_(outbox_.partition_count()),
      consumer_(outbox_, options_.consumer,
                [this](uint32_t p, std::span<const LogRecord> batch) { return handle(p, batch); }) {}

Fanout::~Fanout() {
  stop();
}

Status Fanout::start() {
  if (mailbox_log_.partition_count() != shards_.shard_count()) {
    return Error(Errc::kConfig, "the mailbox log has " + std::to_string(mailbox_log_.partition_count()) +
                                    " partitions but QIM_SHARDS is " + std::to_string(shards_.shard_count()) +
                                    ": they must be equal (partition = shard)");
  }
  return consumer_.start();
}

Status Fanout::drain(std::chrono::milliseconds limit, const std::function<void(uint64_t)>& progress) {
  return consumer_.drain(limit, progress);
}

void Fanout::stop() {
  consumer_.stop();
}

Status Fanout::check_replay(uint32_t partition, Offset next) {
  QIM_ASSIGN_OR_RETURN(Offset end, outbox_.end_offset(partition));
  if (next > end) {
    return Error(Errc::kInvalidArgument, "outbox partition " + std::to_string(partition) + " ends at " +
                                             std::to_string(end.value) + "; cannot replay from " +
                                             std::to_string(next.value));
  }
  if (!options_.outbox_retention_ms) return {};
  const int64_t now = options_.clock ? options_.clock->now_ms() : SystemClock().now_ms();
  return check_replay_horizon(outbox_, partition, next,
                              ReplayLimit{now, *options_.outbox_retention_ms, options_.repeats});
}

Status Fanout::replay_from(uint32_t partition, Offset next) {
  QIM_RETURN_IF_ERROR(check_replay(partition, next));
  logger().info("fanout: replay of outbox partition {} from offset {} requested", partition, next.value);
  return consumer_.seek(partition, next);
}

FanoutMetrics Fanout::metrics() const {
  FanoutMetrics m;
  m.records = records_.load();
  m.dispatches = dispatches_.load();
  m.skipped = skipped_.load();
  m.repeats = repeated_.load();
  m.positions = consumer_.positions();
  m.group_ops = group_ops_.load();
  m.group_refused = group_refused_.load();
  m.group_loads = groups_ ? groups_->loads() : 0;
  m.quarantined = quarantined_.load();
  m.events = events_read_.load();
  m.events_refused = events_refused_.load();
  return m;
}

Status Fanout::quarantine(uint32_t partition, const LogRecord& rec, const Error& why) {
  QIM_RETURN_IF_ERROR(quarantine_->put_outbox(partition, rec.offset, why, rec.value));
  logger().error("fanout: quarantined the outbox record {}:{}: {}", partition, rec.offset.value,
                 why.to_string());
  ++quarantined_;
  return {};
}

Result<bool> Fanout::recalled_send(uint32_t partition, Offset offset, std::optional<uint64_t>& watermark) {
  // Only below the watermark can an event about this message have been decided: on the live path a SEND
  // costs no state read, and a batch at most one watermark read (none when it continues an eventless one).
  if (!watermark) {
    QIM_ASSIGN_OR_RETURN(uint64_t w, options_.messages->watermark(partition));
    watermark = w;
  }
  if (offset.value >= *watermark) return false;
  QIM_ASSIGN_OR_RETURN(auto state, options_.messages->load(message_id_of(partition, offset)));
  return state.has_value() && state->recalled();
}

Status Fanout::handle(uint32_t partition, std::span<const LogRecord> batch) {
  struct Append {
    uint32_t shard;
    std::string key;
    std::string value;
    size_t record;  // index in `batch` of the Outbox record it comes from
  };
  std::vector<Append> appends;
  uint64_t used = 0, skipped = 0, repeated = 0, group_ops = 0, group_refused = 0, events = 0,
           events_refused = 0;
  // The message state's watermark: read at most once per batch and only if needed, or known from the batch
  // before when this one continues it and that one held no event (nobody else raises it: one fanout reads
  // a partition). Taken out now, so a batch that fails leaves nothing known and its retry reads the store.
  std::optional<uint64_t> watermark;
  std::optional<KnownWatermark>* known =
      partition < known_watermarks_.size() ? &known_watermarks_[partition] : nullptr;
  if (known != nullptr && *known && !batch.empty() && (*known)->next == batch.front().offset.value)
    watermark = (*known)->value;
  if (known != nullptr) known->reset();
  for (size_t index = 0; index < batch.size(); ++index) {
    const LogRecord& rec = batch[index];
    auto outbox = decode_outbox_record(rec.value);
    QIM_ASSIGN_OR_RETURN(bool repeat,
                         repeats_.is_repeat(partition, rec.offset, outbox.ok() ? &*outbox : nullptr));
    if (repeat) {
      logger().info("fanout: outbox record {}:{} repeats an earlier SEND ({} {}): not dispatched", partition,
                    rec.offset.value, outbox->sender.str(), outbox->client_msg_id);
      ++repeated;
      continue;
    }
    // A read receipt (docs/adr/0147) is for the event webhook alone: no mailbox holds it.
    if (outbox.ok() && is_read_receipt(*outbox)) continue;
    const GroupId* group = nullptr;
    std::optional<Conversation> conversation;
    if (outbox.ok()) {
      if (auto c = Conversation::of(outbox->conversation); c.ok()) {
        conversation = *std::move(c);
        group = conversation->group_id();
      }
    }
    // An EDIT or RECALL goes to the same recipients as a message of its conversation at its offset, once
    // fanout has decided it (fanout/message_events.h); its entry is the event's own (event_entry_body).
    const bool is_event = outbox.ok() && outbox->event.has_value();
    if (is_event) {
      ++events;
      if (!events_) {
        logger().warn(
            "fanout: outbox record {}:{} is a message event and no message store is configured: "
            "not dispatched",
            partition, rec.offset.value);
        ++events_refused;
        continue;
      }
    }
    Result<std::vector<ShardDispatch>> plan = Result<std::vector<ShardDispatch>>(
        outbox.ok() ? Error(Errc::kInvalidArgument, "no group store configured") : outbox.error());
    std::optional<OutboxRecord> entry;    // what an applied event materialises as
    std::optional<MessageState> decided;  // the target's state after an applied event
    auto decide_event = [&](bool moderates) -> Result<bool> {
      QIM_ASSIGN_OR_RETURN(EventDecision ed,
                           events_->decide(*outbox, partition, rec.offset.value, moderates));
      if (!ed.outcome.applied) {
        logger().info("fanout: outbox record {}:{}: {} of {} by {} refused: {}", partition, rec.offset.value,
                      message_event_name(outbox->event->kind), outbox->event->target.value,
                      outbox->sender.str(), event_refusal_name(ed.outcome.refusal));
        return false;
      }
      decided = ed.state;
      entry = *outbox;
      entry->client_msg_id = event_entry_client_id(outbox->event->kind);
      entry->body =
          event_entry_body(*ed.state, outbox->event->kind, outbox->sender, outbox->body, rec.offset.value);
      entry->event.reset();
      return true;
    };
    if (outbox.ok() && group != nullptr && groups_) {
      // A transient store error fails the batch (retried from the same position): membership must not be
      // guessed. A permanent one (a row that does not decode) would fail it forever, stalling every
      // conversation of the partition: the record is quarantined instead.
      auto membership = groups_->decide(*outbox, *group, rec.offset.value);
      if (!membership.ok()) {
        if (!quarantine_ || !permanent(membership.error())) return membership.error();
        QIM_RETURN_IF_ERROR(quarantine(partition, rec, membership.error()));
        if (is_event) QIM_RETURN_IF_ERROR(events_->settle(partition, rec.offset.value));
        ++skipped;
        continue;
      }
      GroupDecision d = *std::move(membership);
      if (d.op) ++group_ops;
      if (!d.skipped.empty()) {
        logger().info("fanout: outbox record {}:{} not dispatched: {}", partition, rec.offset.value,
                      d.skipped);
        ++group_refused;
        if (is_event) {
          QIM_RETURN_IF_ERROR(events_->settle(partition, rec.offset.value));
          ++events_refused;
        }
        continue;
      }
      if (is_event) {
        QIM_ASSIGN_OR_RETURN(bool moderates, groups_->moderates(*group, outbox->sender, rec.offset.value));
        QIM_ASSIGN_OR_RETURN(bool applied, decide_event(moderates));
        if (!applied) {
          ++events_refused;
          continue;
        }
      }
      plan = plan_dispatches_to(entry ? *entry : *outbox, partition, rec.offset, shards_,
                                options_.chunk_entries, std::move(d.recipients));
      // A recall also names, per shard, the members who received the SEND or one of its named edits and
      // were removed since: the node redacts their entries too and writes them none (docs/adr/0160).
      if (plan.ok() && entry && outbox->event->kind == MessageEventKind::kRecall && decided) {
        std::vector<uint64_t> earlier = recall_named_edits(*decided, rec.offset.value);
        earlier.push_back(decided->id.value & kMaxOffset);
        QIM_ASSIGN_OR_RETURN(std::vector<UserId> former,
                             groups_->former_members(*group, earlier, rec.offset.value));
        if (const size_t left_out = add_former_recipients(*plan, shards_, std::move(former)); left_out > 0) {
          logger().warn(
              "fanout: recall {}:{} leaves the text in the entries of {} removed members: over {} "
              "in one shard",
              partition, rec.offset.value, left_out, kMaxFormerRecipients);
        }
      }
    } else if (outbox.ok() && group == nullptr) {
      if (is_event) {
        QIM_ASSIGN_OR_RETURN(bool applied, decide_event(false));
        if (!applied) {
          ++events_refused;
          continue;
        }
      }
      plan =
          plan_dispatches(entry ? *entry : *outbox, partition, rec.offset, shards_, options_.chunk_entries);
    } else if (is_event) {
      QIM_RETURN_IF_ERROR(events_->settle(partition, rec.offset.value));  // quarantined or skipped below
    }
    // A SEND, or an edit of it, read again after its recall (a replay from before it): its records keep
    // the original identity, digest included, so the store sees the same dispatch (no DispatchConflict),
    // but carry no body (an edit entry's "body" is empty), so no entry they write (a new epoch's, or one
    // whose identity was lost) brings it back (docs/adr/0129).
    if (plan.ok() && events_) {
      std::optional<std::string> redacted;
      if (!is_event) {
        QIM_ASSIGN_OR_RETURN(bool recalled, recalled_send(partition, rec.offset, watermark));
        if (recalled) redacted = std::string();
      } else if (entry && outbox->event->kind == MessageEventKind::kEdit && decided && decided->recalled()) {
        redacted = event_entry_body(*decided, MessageEventKind::kEdit, outbox->sender, "", rec.offset.value);
      }
      if (redacted) {
        for (auto& d : *plan) d.record.message.body = *redacted;
      }
    }
    std::vector<Append> mine;
    if (plan.ok()) {
      std::optional<Error> too_large;
      for (auto& d : *plan) {
        Append a{d.shard.value, d.record.identity.id.str(), encode_dispatch_record(d.record), index};
        // Checked before anything of the record is appended, so a message is dispatched whole or not at all.
        if (a.value.size() > mailbox_log_.max_record_bytes()) {
          too_large = Error(Errc::kInvalidArgument, "dispatch record " + a.key + " of " +
                                                        std::to_string(a.value.size()) +
                                                        " bytes is over the mailbox log's bound of " +
                                                        std::to_string(mailbox_log_.max_record_bytes()));
          break;
        }
        mine.push_back(std::move(a));
      }
      if (too_large) plan = *std::move(too_large);
    }
    if (!plan.ok()) {
      ++skipped;
      if (quarantine_) {
        QIM_RETURN_IF_ERROR(quarantine(partition, rec, plan.error()));
        continue;
      }
      logger().warn("fanout: skipping outbox record {}:{}: {}", partition, rec.offset.value,
                    plan.error().to_string());
      continue;
    }
    for (auto& a : mine) appends.push_back(std::move(a));
    ++used;
  }
  AppendWaiter waiter(appends.size());
  for (size_t i = 0; i < appends.size(); ++i) {
    auto& a = appends[i];
    mailbox_log_.append(a.shard, std::move(a.key), std::move(a.value), waiter.callback(i));
  }
  // The position is committed by the consumer only after this returns ok: every record is durable by then,
  // or quarantined. A transient failure of any append fails the batch (the retry appends the same records
  // again, which the store treats as repeated observations).
  const std::vector<std::optional<Error>> failed = waiter.wait();
  std::map<size_t, Error> refused;  // Outbox records (index in `batch`) one of whose appends was refused
  size_t not_appended = 0;
  for (size_t i = 0; i < failed.size(); ++i) {
    if (!failed[i]) continue;
    ++not_appended;
    if (!quarantine_ || !permanent(*failed[i])) return *failed[i];
    refused.try_emplace(appends[i].record, *failed[i]);
  }
  for (const auto& [index, why] : refused) {
    // Its other shards' records may be appended (those members see the message): its message says so.
    QIM_RETURN_IF_ERROR(
        quarantine(partition, batch[index],
                   Error(why.code(),
                         "a dispatch record was refused by the mailbox log (other shards' records of this "
                         "message may have been appended): " +
                             why.message())));
    --used;
    ++skipped;
  }
  records_ += used;
  dispatches_ += appends.size() - not_appended;
  skipped_ += skipped;
  repeated_ += repeated;
  group_ops_ += group_ops;
  group_refused_ += group_refused;
  events_read_ += events;
  events_refused_ += events_refused;
  // An event may have raised the watermark (decided, refused or settled): the next batch reads it again.
  if (known != nullptr && events == 0 && watermark && !batch.empty())
    *known = KnownWatermark{batch.back().offset.value + 1, *watermark};
  return {};
}

Result<std::vector<ConsumerPosition>> rewind_fanout(Log& outbox, std::span<const uint32_t> partitions,
                                                    Offset next, const std::string& group,
                                                    std::optional<ReplayLimit> limit) {
  std::vector<uint32_t> chosen(partitions.begin(), partitions.end());
  if (chosen.empty()) chosen = all_partitions(outbox);
  std::vector<ConsumerPosition> out;
  for (uint32_t p : chosen) {
    if (p >= outbox.partition_count()) {
      return Error(Errc::kInvalidArgument, "the outbox has no partition " + std::to_string(p) + " (" +
                                               std::to_string(outbox.partition_count()) + " partitions)");
    }
  }
  if (limit) {  // every partition is checked before any position moves
    for (uint32_t p : chosen) {
      QIM_ASSIGN_OR_RETURN(Offset end, outbox.end_offset(p));
      QIM_RETURN_IF_ERROR(check_replay_horizon(outbox, p, std::min(next, end), *limit));
    }
  }
  for (uint32_t p : chosen) {
    QIM_ASSIGN_OR_RETURN(Offset end, outbox.end_offset(p));
    const Offset to = std::min(next, end);
    QIM_RETURN_IF_ERROR(outbox.commit(group, p, to));
    out.push_back(ConsumerPosition{p, to, end.value - to.value});
  }
  return out;
}

}  // namespace qim
