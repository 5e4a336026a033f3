#include "inbox/delivered_notifier.h"

#include <map>
#include <utility>

#include "core/conversation.h"
#include "gateway/protocol/inbox_frames.h"
#include "inbox/unread_rule.h"

namespace qim {

DeliveredNotifier::DeliveredNotifier(SignalBus& signals, DeliveryNotifier* inner, size_t max_signals_per_move)
    : signals_(signals), inner_(inner), max_per_move_(max_signals_per_move) {}

void DeliveredNotifier::entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                                        std::span<const MailboxEntry> entries) {
  // Per (conversation, sender): the highest message made visible, and whose mailbox holds it. One
  // conversation's message ids share an Outbox partition, so the highest id is the latest message.
  struct Latest {
    MessageId message;
    UserId recipient;
  };
  std::map<std::pair<ConversationId, UserId>, Latest> latest;
  for (const MailboxEntry& e : entries) {
    if (!counts_as_unread(e)) continue;  // the sender's own copy, or a system entry
    const Message& m = e.message;
    auto c = Conversation::of(m.conversation);
    if (!c.ok() || c->direct_pair() == nullptr) continue;  // groups: RECEIPTS, not DELIVERED
    auto [it, inserted] = latest.try_emplace({m.conversation, m.sender}, Latest{m.id, e.user});
    if (!inserted && it->second.message < m.id) it->second = Latest{m.id, e.user};
  }
  size_t n = 0;
  for (const auto& [key, l] : latest) {
    if (n++ == max_per_move_) {
      dropped_.fetch_add(latest.size() - max_per_move_);
      break;
    }
    const UserId sender[] = {key.second};
    signals_.send(sender, encode_delivered(key.first, l.recipient, l.message));
    sent_.fetch_add(1);
  }
  if (inner_ != nullptr) inner_->entries_visible(shard, from, to, entries);
}

void DeliveredNotifier::range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) {
  if (inner_ != nullptr) inner_->range_unknown(shard, from, to);
}

std::string DeliveredNotifier::metrics_text() const {
  return "# HELP qim_delivered_signals_total DELIVERED signals sent to senders.\n"
         "# TYPE qim_delivered_signals_total counter\n"
         "qim_delivered_signals_total " +
         std::to_string(sent()) +
         "\n# HELP qim_delivered_signals_dropped_total DELIVERED signals over the per-move bound, not sent.\n"
         "# TYPE qim_delivered_signals_dropped_total counter\n"
         "qim_delivered_signals_dropped_total " +
         std::to_string(dropped()) + "\n";
}

}  // namespace qim
