#pragma once
// Hybrid delivery, the node's side: when a shard's frontier moves, the MailboxNode tells the gateways
// which entries became visible. Gateways push them to live connections; a client that misses a push (or
// sees a gap in mailbox_seq) pulls with SYNC. Pushes are best effort; the mailbox is the truth.

#include <span>

#include "core/sharding.h"
#include "mailbox/message.h"

namespace qim {

class DeliveryNotifier {
 public:
  virtual ~DeliveryNotifier() = default;
  // Entries of `shard` at or below `frontier` that the last advance made visible. Must not block for long:
  // called on the shard worker's thread.
  virtual void entries_visible(ShardId shard, MailboxSeq frontier, std::span<const MailboxEntry> entries) = 0;
};

}  // namespace qim
