#pragma once
// DELIVERED (docs/protocol.md "Inbox", docs/adr/0078): "the recipient's mailbox holds the message", told
// to its sender when the recipient's shard frontier covers it. A DeliveryNotifier in the MailboxNode's
// process: for each move it is told of, the entries made visible that belong to a direct conversation and
// sit in a recipient's mailbox (an entry that counts as unread for its user, inbox/unread_rule.h: not the
// sender's own copy, not a system entry) become one DELIVERED per (conversation, sender), naming the
// highest message of the move, sent to the sender through the SignalBus. A decorator: the report is then
// handed on unchanged to `inner` (if any).
//
// It never blocks: the SignalBus queues and bounds (signal_bus.h), and it is registered downstream of the
// node's FanInNotifier (Pipeline::deliver_to), never on a shard worker's thread. At most
// `max_signals_per_move` signals per report; the rest are dropped and counted (the state is readable:
// CONVERSATIONS' peer_delivered_through). A "range unknown" report sends nothing: DELIVERED is a hint the
// client can pull again, never a chain to heal.

#include <atomic>
#include <cstdint>
#include <string>

#include "delivery/notifier.h"
#include "delivery/signal_bus.h"

namespace qim {

class DeliveredNotifier final : public DeliveryNotifier {
 public:
  // `signals` and `inner` (may be null) must outlive this object.
  explicit DeliveredNotifier(SignalBus& signals, DeliveryNotifier* inner = nullptr,
                             size_t max_signals_per_move = 4096);

  void entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                       std::span<const MailboxEntry> entries) override;
  void range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) override;

  uint64_t sent() const { return sent_.load(); }
  uint64_t dropped() const { return dropped_.load(); }
  // qim_delivered_signals_total, qim_delivered_signals_dropped_total (Prometheus text).
  std::string metrics_text() const;

 private:
  SignalBus& signals_;
  DeliveryNotifier* inner_;
  const size_t max_per_move_;
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace qim
