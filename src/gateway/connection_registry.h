#pragma once
// The live connections of a gateway, by user, and the push side of hybrid delivery: the MailboxNode's
// notifier lands here and each visible entry is queued to every live connection (every device) of its
// user. Pushes are best effort: the mailbox stays the truth, a client that missed one SYNCs.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "delivery/notifier.h"

namespace qim {

class Connection;
class GatewayMetrics;

class ConnectionRegistry final : public DeliveryNotifier {
 public:
  ConnectionRegistry(bool push_enabled, GatewayMetrics& metrics) : push_(push_enabled), metrics_(metrics) {}

  // Every open connection (for stop()), and the authenticated ones by user (for pushes).
  void add_open(uint64_t id, const std::shared_ptr<Connection>& c);
  void add_user(const UserId& user, uint64_t id, const std::shared_ptr<Connection>& c);
  void remove(const UserId* user, uint64_t id);
  std::vector<std::shared_ptr<Connection>> all_open() const;

  // Called on a shard worker thread: groups entries by user, encodes one DELIVER per user, queues it to
  // each of that user's connections (their strands do the writing). Never blocks on a connection.
  void entries_visible(ShardId shard, MailboxSeq frontier, std::span<const MailboxEntry> entries) override;

 private:
  const bool push_;
  GatewayMetrics& metrics_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::weak_ptr<Connection>> open_;
  std::unordered_map<std::string, std::vector<std::pair<uint64_t, std::weak_ptr<Connection>>>> by_user_;
};

}  // namespace qim
