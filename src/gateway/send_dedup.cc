#include "gateway/send_dedup.h"

#include <xxhash.h>

namespace qim {

uint64_t send_fingerprint(const ConversationId& conversation, std::string_view body,
                          std::optional<MessageId> reply_to) {
  std::string bytes = conversation.str();
  bytes.push_back('\0');
  bytes.append(body);
  if (reply_to) {
    bytes.push_back('\0');
    bytes.push_back('r');
    bytes.append(std::to_string(reply_to->value));
  }
  return XXH3_64bits(bytes.data(), bytes.size());
}

std::string SendDedup::key_of(const UserId& sender, std::string_view client_msg_id) {
  std::string key = sender.str();
  key.push_back('\0');  // user ids never hold NUL, so the pair is unambiguous
  key.append(client_msg_id);
  return key;
}

SendDedup::Begin MemorySendDedup::begin(const std::string& key, int64_t now_ms, Waiter waiter) {
  std::lock_guard lock(mu_);
  if (auto it = done_.find(key); it != done_.end()) {
    if (now_ms - it->second.server_time_ms <= window_ms_) return Begin{Kind::kDone, it->second};
    done_.erase(it);  // outside the window: a new message (documented)
  }
  if (auto it = in_flight_.find(key); it != in_flight_.end()) {
    it->second.push_back(std::move(waiter));
    return Begin{Kind::kWaiting, std::nullopt};
  }
  in_flight_.emplace(key, std::vector<Waiter>{});
  return Begin{Kind::kFirst, std::nullopt};
}

void MemorySendDedup::complete(const std::string& key, const Result<SentMessage>& outcome) {
  std::vector<Waiter> waiters;
  {
    std::lock_guard lock(mu_);
    if (auto it = in_flight_.find(key); it != in_flight_.end()) {
      waiters = std::move(it->second);
      in_flight_.erase(it);
    }
    if (outcome.ok()) insert_locked(key, *outcome);
  }
  for (auto& w : waiters) w(outcome);
}

void MemorySendDedup::record(const std::string& key, const SentMessage& sent) {
  std::lock_guard lock(mu_);
  insert_locked(key, sent);
}

size_t MemorySendDedup::size() const {
  std::lock_guard lock(mu_);
  return done_.size();
}

void MemorySendDedup::insert_locked(const std::string& key, const SentMessage& sent) {
  done_[key] = sent;
  order_.emplace_back(key, sent.id);
  while (done_.size() > capacity_ && !order_.empty()) {
    auto& [old_key, old_id] = order_.front();
    // A key re-sent after its window has a newer entry; only the entry this slot recorded is evicted.
    if (auto it = done_.find(old_key); it != done_.end() && it->second.id == old_id) done_.erase(it);
    order_.pop_front();
  }
  // Keep the order queue from growing without bound when keys are refreshed (re-sent after the window).
  if (order_.size() > 2 * capacity_ + 16) {
    std::deque<std::pair<std::string, MessageId>> kept;
    for (auto& slot : order_) {
      if (auto it = done_.find(slot.first); it != done_.end() && it->second.id == slot.second)
        kept.push_back(std::move(slot));
    }
    order_ = std::move(kept);
  }
}

}  // namespace qim
