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
    : outbox_(outbox),
      history_(history),
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

Status Archiver::replay_from(uint32_t partition, Offset next) {
  consumer_.logger().info("archiver: replay of outbox partition {} from offset {} requested", partition,
                          next.value);
  return consumer_.seek(partition, next);
}

ArchiverMetrics Archiver::metrics() const {
  return ArchiverMetrics{messages_.load(), skipped_.load(), repeated_.load(), events_.load(),
                         consumer_.positions()};
}

Result<std::optional<MessageId>> Archiver::reply_to_of(MessageId id) {
  const auto partition = static_cast<uint32_t>(id.value >> kOffsetBits);
  const Offset offset{id.value & ((uint64_t{1} << kOffsetBits) - 1)};
  QIM_ASSIGN_OR_RETURN(Offset start, outbox_.start_offset(partition));
  if (offset.value < start.value) return std::optional<MessageId>();  // removed by retention: no reference
  QIM_ASSIGN_OR_RETURN(auto records, outbox_.read(partition, offset, 1, std::chrono::milliseconds(0)));
  if (records.empty() || records.front().offset != offset) return std::optional<MessageId>();
  auto rec = decode_outbox_record(records.front().value);
  return rec.ok() ? rec->reply_to : std::optional<MessageId>();
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
    if (outbox.ok() && is_read_receipt(*outbox)) continue;  // a read receipt is no chat message either
    if (outbox.ok() && outbox->event) {
      if (options_.messages == nullptr) continue;  // fanout does not dispatch them either
      // A reaction changes no history row: HISTORY folds it from the message state (docs/adr/0124).
      if (is_reaction(outbox->event->kind)) continue;
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
      // The row keeps its reference: from the SEND in this batch, else from its Outbox record.
      if (auto it = slot.find(state->id.value); it != slot.end()) {
        m.reply_to = messages[it->second].reply_to;
      } else {
        QIM_ASSIGN_OR_RETURN(m.reply_to, reply_to_of(state->id));
      }
      if (outbox->event->kind == MessageEventKind::kRecall) {
        if (options_.on_recall) {
          // The message as it was: in this batch (its SEND came with the recall), else in the history.
          std::optional<Message> original;
          if (auto it = slot.find(state->id.value); it != slot.end()) {
            original = messages[it->second];
          } else {
            QIM_ASSIGN_OR_RETURN(auto page, history_.read(HistoryQuery{state->conversation,
                                                                       MessageId{state->id.value + 1}, 1}));
            if (!page.messages.empty() && page.messages.front().id == state->id)
              original = page.messages.front();
          }
          if (original && !original->body.empty()) QIM_RETURN_IF_ERROR(options_.on_recall(*original));
        }
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
            // Recalled before the archiver got here (it lags fanout, or a replay): the body is here, in
            // the Outbox record, not in the history: hand it over first (idempotent on a replay).
            if (options_.on_recall && !m.body.empty()) QIM_RETURN_IF_ERROR(options_.on_recall(m));
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
