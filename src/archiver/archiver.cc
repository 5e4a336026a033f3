#include "archiver/archiver.h"

#include "outbox/outbox_record.h"

namespace qim {

namespace {

// The history rows are written without a sync and made durable once per commit of the Outbox position
// (decision 36): a power loss before the sync loses rows whose position was not committed either, so the
// replay writes them again. A sync per batch cost one fdatasync per message at low rates.
ConsumerOptions consumer_options(const ArchiverOptions& options) {
  ConsumerOptions o = options.consumer;
  if (options.make_durable)
    o.before_commit = [durable = options.make_durable](uint32_t) { return durable(); };
  return o;
}

}  // namespace

Archiver::Archiver(Log& outbox, HistoryStore& history, ArchiverOptions options)
    : history_(history),
      options_(std::move(options)),
      repeats_(outbox, options_.repeats),
      consumer_(outbox, consumer_options(options_),
                [this](uint32_t p, std::span<const LogRecord> batch) { return handle(p, batch); }) {}

Archiver::~Archiver() {
  stop();
}

Status Archiver::start() {
  return consumer_.start();
}

Status Archiver::drain(std::chrono::milliseconds limit, const std::function<void(uint64_t)>& progress) {
  return consumer_.drain(limit, progress);
}

void Archiver::stop() {
  consumer_.stop();
}

ArchiverMetrics Archiver::metrics() const {
  return ArchiverMetrics{messages_.load(), skipped_.load(), repeated_.load(), events_.load(),
                         consumer_.positions()};
}

Result<uint64_t> Archiver::watermark(uint32_t partition, uint64_t offset, bool refresh) {
  {
    std::lock_guard lock(mu_);
    auto it = watermarks_.find(partition);
    if (it != watermarks_.end() && (it->second > offset || !refresh)) return it->second;
  }
  QIM_ASSIGN_OR_RETURN(uint64_t w, options_.messages->watermark(partition));
  std::lock_guard lock(mu_);
  uint64_t& cached = watermarks_[partition];
  cached = std::max(cached, w);
  return cached;
}

Status Archiver::handle(uint32_t partition, std::span<const LogRecord> batch) {
  // An undecodable record or a message the store would refuse will never do: skip it (logged). The rest
  // go to the store together, so a remote store overlaps their round trips; a failure there (disk,
  // transport) fails the batch, which the consumer retries from the same position. A message written
  // twice in one batch (a SEND and its recall) is written once, in its last state: a backend may issue a
  // batch's writes in parallel.
  std::vector<Message> messages;
  std::unordered_map<uint64_t, size_t> slot;  // message id -> index in `messages`
  auto put = [&](Message m) {
    auto [it, fresh] = slot.try_emplace(m.id.value, messages.size());
    if (fresh) {
      messages.push_back(std::move(m));
    } else {
      messages[it->second] = std::move(m);
    }
  };
  messages.reserve(batch.size());
  uint64_t skipped = 0, repeated = 0, events = 0;
  for (const LogRecord& rec : batch) {
    auto outbox = decode_outbox_record(rec.value);
    QIM_ASSIGN_OR_RETURN(bool repeat,
                         repeats_.is_repeat(partition, rec.offset, outbox.ok() ? &*outbox : nullptr));
    if (repeat) {
      ++repeated;  // fanout logs it
      continue;
    }
    // A membership change is no chat message: its system entry is in the members' mailboxes (fanout
    // decides whether it applied), not in HISTORY.
    if (outbox.ok() && outbox->group_op) continue;
    if (outbox.ok() && outbox->event) {
      if (options_.messages == nullptr) continue;  // fanout does not dispatch them either
      // Fanout decides; until it has (its watermark is past this offset), the batch waits and is retried.
      QIM_ASSIGN_OR_RETURN(uint64_t w, watermark(partition, rec.offset.value, true));
      if (w <= rec.offset.value) {
        return Error(Errc::kTimeout, "fanout has not decided the message event at outbox " +
                                         std::to_string(partition) + ":" + std::to_string(rec.offset.value) +
                                         " yet");
      }
      QIM_ASSIGN_OR_RETURN(auto state, options_.messages->load(outbox->event->target));
      if (!state) continue;  // about no known message: refused
      auto it = state->events.find(rec.offset.value);
      if (it == state->events.end() || !it->second.applied) continue;
      Message m{state->id,
                state->conversation,
                state->sender,
                state->sender_device,
                state->client_msg_id,
                state->sent_at_ms,
                {}};
      if (outbox->event->kind == MessageEventKind::kRecall) {
        put(std::move(m));  // the tombstone: the row without its body
      } else if (!state->recalled() && state->last_edit_offset() == rec.offset.value) {
        m.body = outbox->body;  // the current body (an earlier edit, replayed, is not written)
        put(std::move(m));
      } else {
        continue;
      }
      ++events;
      continue;
    }
    Status s = outbox.ok() ? Status() : Status(outbox.error());
    if (outbox.ok()) {
      Message m = to_message(*outbox, message_id_of(partition, rec.offset));
      s = validate_history_message(m);
      bool write = s.ok();
      if (write && options_.messages != nullptr) {
        // Only below the watermark can an event be about this message: a plain SEND on the live path reads
        // nothing here.
        QIM_ASSIGN_OR_RETURN(uint64_t w, watermark(partition, rec.offset.value, false));
        if (rec.offset.value < w) {
          QIM_ASSIGN_OR_RETURN(auto state, options_.messages->load(m.id));
          if (state && state->recalled()) {
            m.body.clear();  // a replay never brings a recalled body back
          } else if (state && state->edit_count() > 0) {
            write = false;  // its last edit writes it, with the current body
          }
        }
      }
      if (write) put(std::move(m));
    }
    if (!s.ok()) {
      consumer_.logger().warn("archiver: skipping outbox record {}:{}: {}", partition, rec.offset.value,
                              s.error().to_string());
      ++skipped;
    }
  }
  if (!messages.empty()) QIM_RETURN_IF_ERROR(history_.append_all(messages));
  messages_ += messages.size();
  skipped_ += skipped;
  repeated_ += repeated;
  events_ += events;
  return {};
}

}  // namespace qim
