#pragma once
// Hybrid delivery, the node's side: when a shard's frontier moves, the MailboxNode tells the gateways
// which entries became visible. Gateways push them to live connections; the mailbox is the truth.
//
// Every move of a shard's frontier is reported exactly once, in order, as a range (from, to]: the reports
// of one shard form a chain (each `from` is the previous `to`). The receiver can therefore tell a complete
// stream from one with a hole, and a hole is what makes a gateway tell its clients to SYNC
// (docs/protocol.md "Delivery"). A reporter that cannot say which entries a move made visible reports the
// range as unknown; it never stays silent.

#include <span>

#include "core/sharding.h"
#include "mailbox/message.h"

namespace qim {

class DeliveryNotifier {
 public:
  virtual ~DeliveryNotifier() = default;
  // The frontier of `shard` moved from `from` to `to` (from < to), and `entries` are ALL the entries the
  // move made visible: every entry of the shard with seq in (from, to], ascending by seq (a move over only
  // refused records has none). Must not block for long: called on the shard worker's thread.
  virtual void entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                               std::span<const MailboxEntry> entries) = 0;
  // The frontier of `shard` moved from `from` to `to`, but which entries became visible is not known
  // (e.g. a frontier write reported as failed that had landed, or notifications dropped under load).
  // Receivers must treat every entry of the shard in (from, to] as possibly missed. Same thread rules.
  // from == to (an empty range) is a break without a move: a receiver-side layer that lost what it cannot
  // name (delivery across gateways: a dropped subscription) reports its chain's end that way.
  virtual void range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) = 0;
};

}  // namespace qim
