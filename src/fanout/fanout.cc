#include "fanout/fanout.h"

#include <condition_variable>
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

// Waits for a known number of append callbacks and keeps the first error.
class AppendWaiter {
 public:
  explicit AppendWaiter(size_t n) : remaining_(n) {}
  AppendCallback callback() {
    return [this](Result<Offset> r) {
      std::lock_guard lock(mu_);
      if (!r.ok() && !error_) error_ = r.error();
      if (--remaining_ == 0) cv_.notify_all();
    };
  }
  Status wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return remaining_ == 0; });
    if (error_) return *error_;
    return {};
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  size_t remaining_;
  std::optional<Error> error_;
};

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
  FanoutMetrics m{records_.load(),      dispatches_.load(), skipped_.load(), repeated_.load(), 0, 0, 0,
                  consumer_.positions()};
  m.group_ops = group_ops_.load();
  m.group_refused = group_refused_.load();
  m.group_loads = groups_ ? groups_->loads() : 0;
  return m;
}

Status Fanout::handle(uint32_t partition, std::span<const LogRecord> batch) {
  struct Append {
    uint32_t shard;
    std::string key;
    std::string value;
  };
  std::vector<Append> appends;
  uint64_t used = 0, skipped = 0, repeated = 0, group_ops = 0, group_refused = 0;
  for (const LogRecord& rec : batch) {
    auto outbox = decode_outbox_record(rec.value);
    QIM_ASSIGN_OR_RETURN(bool repeat,
                         repeats_.is_repeat(partition, rec.offset, outbox.ok() ? &*outbox : nullptr));
    if (repeat) {
      logger().info("fanout: outbox record {}:{} repeats an earlier SEND ({} {}): not dispatched", partition,
                    rec.offset.value, outbox->sender.str(), outbox->client_msg_id);
      ++repeated;
      continue;
    }
    const GroupId* group = nullptr;
    std::optional<Conversation> conversation;
    if (outbox.ok()) {
      if (auto c = Conversation::of(outbox->conversation); c.ok()) {
        conversation = *std::move(c);
        group = conversation->group_id();
      }
    }
    Result<std::vector<ShardDispatch>> plan = Result<std::vector<ShardDispatch>>(
        outbox.ok() ? Error(Errc::kInvalidArgument, "no group store configured") : outbox.error());
    if (outbox.ok() && group != nullptr && groups_) {
      // The store's errors fail the batch (retried from the same position): membership must not be guessed.
      QIM_ASSIGN_OR_RETURN(GroupDecision d, groups_->decide(*outbox, *group, rec.offset.value));
      if (d.op) ++group_ops;
      if (!d.skipped.empty()) {
        logger().info("fanout: outbox record {}:{} not dispatched: {}", partition, rec.offset.value,
                      d.skipped);
        ++group_refused;
        continue;
      }
      plan = plan_dispatches_to(*outbox, partition, rec.offset, shards_, options_.chunk_entries,
                                std::move(d.recipients));
    } else if (outbox.ok() && group == nullptr) {
      plan = plan_dispatches(*outbox, partition, rec.offset, shards_, options_.chunk_entries);
    }
    if (!plan.ok()) {
      logger().warn("fanout: skipping outbox record {}:{}: {}", partition, rec.offset.value,
                    plan.error().to_string());
      ++skipped;
      continue;
    }
    for (auto& d : *plan) {
      appends.push_back(Append{d.shard.value, d.record.identity.id.str(), encode_dispatch_record(d.record)});
    }
    ++used;
  }
  AppendWaiter waiter(appends.size());
  for (auto& a : appends)
    mailbox_log_.append(a.shard, std::move(a.key), std::move(a.value), waiter.callback());
  // The position is committed by the consumer only after this returns ok: every record is durable by then.
  QIM_RETURN_IF_ERROR(waiter.wait());
  records_ += used;
  dispatches_ += appends.size();
  skipped_ += skipped;
  repeated_ += repeated;
  group_ops_ += group_ops;
  group_refused_ += group_refused;
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
