#include "push/push_consumer.h"

#include <fmt/format.h>
#include <spdlog/sinks/null_sink.h>

#include "core/conversation.h"
#include "inbox/privacy.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace {

// The first `max` bytes of `body`, cut on a UTF-8 boundary.
std::string preview_of(const std::string& body, size_t max) {
  if (body.size() <= max) return body;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(body[n]) & 0xC0) == 0x80) --n;
  return body.substr(0, n);
}

PushConsumerOptions with_logger(PushConsumerOptions o) {
  if (!o.logger)
    o.logger = std::make_shared<spdlog::logger>("push", std::make_shared<spdlog::sinks::null_sink_mt>());
  return o;
}

}  // namespace

// One partition's open bursts and its sender, on the partition's thread.
class PushConsumer::PartitionHandler final : public OutboxFollower::Handler {
 public:
  PartitionHandler(PushConsumer& consumer, OutboxFollower::Partition& partition)
      : consumer_(consumer), partition_(partition), sender_(consumer.make_sender_()) {}

  // Sends the bursts due; with windows open, waits no longer than the shortest one.
  std::chrono::milliseconds turn() override {
    consumer_.flush(open_, *sender_, false);
    return open_.empty() ? std::chrono::milliseconds::max() : consumer_.options_.collapse;
  }
  Result<OutboxFollower::Taken> take(const LogRecord& rec) override {
    QIM_RETURN_IF_ERROR(consumer_.take(partition_.partition(), open_, rec));
    // Counted once taken, so a reader of the metric knows the record's window is open.
    ++consumer_.records_;
    return OutboxFollower::Taken::kDone;
  }
  // The open windows are sent before the last commit.
  void finish() override { consumer_.flush(open_, *sender_, true); }

 private:
  PushConsumer& consumer_;
  OutboxFollower::Partition& partition_;
  std::unique_ptr<PushSender> sender_;
  Bursts open_;
};

PushConsumer::PushConsumer(PushDeps deps, SenderFactory make_sender, PushConsumerOptions options)
    : deps_(deps),
      make_sender_(std::move(make_sender)),
      options_(with_logger(std::move(options))),
      clock_(options_.clock ? options_.clock : std::make_shared<SystemClock>()),
      repeats_(*deps_.outbox, options_.repeats),
      registry_(*deps_.registry),
      rate_(options_.per_device_per_minute),
      follower_(
          *deps_.outbox,
          [this](OutboxFollower::Partition& p) { return std::make_unique<PartitionHandler>(*this, p); },
          outbox_follower_options("push", options_)) {}

PushConsumer::~PushConsumer() {
  stop();
}

Status PushConsumer::start() {
  return follower_.start();
}

void PushConsumer::stop() {
  follower_.stop();
}

Result<std::vector<UserId>> PushConsumer::recipients(const OutboxRecord& r, uint64_t offset) {
  QIM_ASSIGN_OR_RETURN(auto conversation, Conversation::of(r.conversation));
  std::vector<UserId> out;
  if (const DirectPair* pair = conversation.direct_pair(); pair != nullptr) {
    if (auto peer = pair->peer_of(r.sender); peer && *peer != r.sender) out.push_back(*peer);
    return out;
  }
  const GroupId* group = conversation.group_id();
  if (group == nullptr || deps_.groups == nullptr) return out;
  QIM_ASSIGN_OR_RETURN(auto state, deps_.groups->load(*group));
  if (!state) return out;
  auto sender = state->members().find(r.sender);
  // A message of a non-member was not delivered (fanout refused it): nobody is told.
  if (sender == state->members().end() || !sender->second.member_at(offset)) return out;
  for (const auto& [user, member] : state->members()) {
    if (user != r.sender && member.member_at(offset)) out.push_back(user);
  }
  return out;
}

Status PushConsumer::take(uint32_t partition, Bursts& open, const LogRecord& rec) {
  auto record = decode_outbox_record(rec.value);
  QIM_ASSIGN_OR_RETURN(bool repeat,
                       repeats_.is_repeat(partition, rec.offset, record.ok() ? &*record : nullptr));
  if (!record.ok()) {
    options_.logger->warn("push: skipping outbox record {}:{}: {}", partition, rec.offset.value,
                          record.error().to_string());
    return {};
  }
  if (repeat || record->group_op || record->event || record->read_through) return {};
  QIM_ASSIGN_OR_RETURN(auto users, recipients(*record, rec.offset.value));
  const MessageId id = message_id_of(partition, rec.offset);
  for (const UserId& user : users) {
    auto [it, opened] = open.try_emplace({user, record->conversation});
    Burst& b = it->second;
    if (opened) {
      b.due_ms = now_ms() + options_.collapse.count();
      b.latest.user = user;
      b.latest.conversation = record->conversation;
      b.latest.count = 0;
    } else {
      ++collapsed_;
    }
    b.latest.message = id;
    b.latest.sender = record->sender;
    b.latest.preview = preview_of(record->body, options_.preview_bytes);
    b.latest.server_time_ms = record->server_time_ms;
    ++b.latest.count;
  }
  return {};
}

void PushConsumer::notify(PushSender& sender, const PushNotification& burst) {
  const UserId& user = burst.user;
  auto targets = registry_.devices(user);
  if (!targets.ok()) {
    options_.logger->warn("push: cannot read the devices of {}: {} (this notification is dropped)",
                          user.str(), targets.error().to_string());
    ++failed_;
    return;
  }
  if (targets->empty()) return;
  const int64_t now = now_ms();
  auto mutes = Privacy(*deps_.registry).mutes(user);
  if (mutes.ok()) {
    if (auto m = mutes->find(burst.conversation); m != mutes->end() && m->second.active(now)) {
      muted_ += targets->size();
      return;
    }
  } else {
    options_.logger->warn("push: cannot read the mutes of {}: {} (not sent)", user.str(),
                          mutes.error().to_string());
    ++failed_;
    return;
  }
  std::map<std::string, DeviceSession> sessions;
  if (deps_.sessions != nullptr) {
    auto devices = deps_.sessions->devices(user);
    if (!devices.ok()) {
      // Not knowing who is online, nobody is woken (a device online would get it twice).
      options_.logger->warn("push: cannot read the sessions of {}: {} (not sent)", user.str(),
                            devices.error().to_string());
      ++failed_;
      return;
    }
    for (auto& d : *devices) sessions.emplace(d.device, d);
  }
  std::optional<uint32_t> badge;
  if (deps_.inbox != nullptr) {
    if (auto page = deps_.inbox->conversations(user, std::nullopt, 1, now); page.ok())
      badge = page->unread_conversations;
  }
  for (const auto& [device, target] : *targets) {
    if (auto s = sessions.find(device.str()); s != sessions.end()) {
      if (s->second.not_before_ms > target.registered_ms) {
        // Registered by a session revoked since: that device hears nothing until it registers again.
        if (registry_.drop_rejected(user, device, target).ok()) ++unregistered_;
        options_.logger->info("push: {}/{} was revoked after it registered: unregistered", user.str(),
                              device.str());
        continue;
      }
      if (s->second.live > 0) {
        ++online_;
        continue;
      }
    }
    if (!rate_.take(user, device, now)) {
      ++rated_;
      continue;
    }
    PushNotification n = burst;
    n.device = device;
    n.badge = badge;
    const PushResult r = sender.send(target, n);
    switch (r.outcome) {
      case PushOutcome::kSent:
        ++sent_;
        break;
      case PushOutcome::kRejected:
        if (Status s = registry_.drop_rejected(user, device, target); s.ok()) {
          ++unregistered_;
          options_.logger->info("push: {}/{} unregistered: {}", user.str(), device.str(), r.detail);
        } else {
          options_.logger->warn("push: cannot unregister {}/{} ({}): {}", user.str(), device.str(), r.detail,
                                s.error().to_string());
        }
        break;
      case PushOutcome::kFailed:
        ++failed_;
        options_.logger->warn("push: to {}/{} ({}) failed: {}", user.str(), device.str(),
                              push_provider_name(target.provider), r.detail);
        break;
    }
  }
}

void PushConsumer::flush(Bursts& open, PushSender& sender, bool all) {
  const int64_t now = now_ms();
  for (auto it = open.begin(); it != open.end();) {
    if (all || it->second.due_ms <= now) {
      notify(sender, it->second.latest);
      it = open.erase(it);
    } else {
      ++it;
    }
  }
}

PushMetrics PushConsumer::metrics() const {
  return PushMetrics{sent_.load(),  failed_.load(), unregistered_.load(), online_.load(),
                     muted_.load(), rated_.load(),  collapsed_.load(),    records_.load()};
}

std::string PushConsumer::prometheus() const {
  const PushMetrics m = metrics();
  std::string out;
  auto one = [&out](const char* name, const char* help, uint64_t v) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} counter\n{0} {2}\n", name, help, v);
  };
  one("qim_push_sent_total", "Notifications a push provider accepted", m.sent);
  one("qim_push_failed_total", "Notifications that failed (provider error, unreachable, a store read)",
      m.failed);
  one("qim_push_unregistered_total", "Devices unregistered (token rejected by the provider, or revoked)",
      m.unregistered);
  out +=
      "# HELP qim_push_suppressed_total Notifications not sent, by reason\n"
      "# TYPE qim_push_suppressed_total counter\n";
  out += fmt::format("qim_push_suppressed_total{{reason=\"online\"}} {}\n", m.suppressed_online);
  out += fmt::format("qim_push_suppressed_total{{reason=\"muted\"}} {}\n", m.suppressed_muted);
  out += fmt::format("qim_push_suppressed_total{{reason=\"rate\"}} {}\n", m.suppressed_rate);
  one("qim_push_collapsed_total", "Messages folded into their burst's notification", m.collapsed);
  one("qim_push_records_total", "Outbox records the push consumer read", m.records);
  return out;
}

}  // namespace qim
