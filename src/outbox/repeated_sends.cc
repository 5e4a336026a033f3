#include "outbox/repeated_sends.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <string_view>

namespace qim {

namespace {

// Each field hashed with its length and the hash so far as the seed, so ("ab","c") and ("a","bc") differ;
// no state to allocate on this per-record path.
uint64_t hash_of(std::initializer_list<std::string_view> fields) {
  uint64_t h = 0;
  for (std::string_view f : fields) h = XXH3_64bits_withSeed(f.data(), f.size(), h ^ f.size());
  return h;
}

}  // namespace

bool RepeatedSends::check_and_add(Offset offset, const OutboxRecord& r) {
  if (r.client_msg_id.empty()) return false;  // no key: never a repeat
  // A membership change is no SEND: the same op again (carol leaves, is added, leaves) is a new change.
  if (r.group_op) return false;
  evict_before(offset.value >= window_.records ? offset.value - window_.records : 0);
  const uint64_t key = hash_of({r.sender.str(), r.client_msg_id});
  const uint64_t content = hash_of({r.conversation.str(), r.body});
  auto& seen = by_key_[key];
  bool repeat = false;
  for (const Seen& s : seen) {
    const int64_t later_by = r.server_time_ms - s.server_time_ms;
    repeat = repeat || (s.content == content && later_by >= 0 && later_by <= window_.ms);
  }
  seen.push_back(Seen{offset.value, content, r.server_time_ms});
  order_.emplace_back(offset.value, key);
  return repeat;
}

void RepeatedSends::evict_before(uint64_t offset) {
  while (!order_.empty() && order_.front().first < offset) {
    auto it = by_key_.find(order_.front().second);
    if (it != by_key_.end()) {
      auto& seen = it->second;
      if (!seen.empty() && seen.front().offset == order_.front().first) seen.erase(seen.begin());
      if (seen.empty()) by_key_.erase(it);
    }
    order_.pop_front();
  }
}

void RepeatedSends::reset() {
  by_key_.clear();
  order_.clear();
}

OutboxRepeatFilter::OutboxRepeatFilter(Log& outbox, RepeatWindow window) : outbox_(outbox), window_(window) {
  partitions_.reserve(outbox.partition_count());
  for (uint32_t p = 0; p < outbox.partition_count(); ++p)
    partitions_.push_back(Partition{RepeatedSends(window), {}});
}

Status OutboxRepeatFilter::prime(uint32_t partition, Partition& state, uint64_t start) {
  state.seen.reset();
  state.next.reset();
  uint64_t next = start >= window_.records ? start - window_.records : 0;
  // Retention may have deleted the oldest of them: what is gone can no longer be repeated anyway.
  if (auto first = outbox_.start_offset(partition); first.ok()) next = std::max(next, first->value);
  while (next < start) {
    QIM_ASSIGN_OR_RETURN(auto batch, outbox_.read(partition, Offset{next},
                                                  static_cast<size_t>(std::min<uint64_t>(start - next, 1024)),
                                                  std::chrono::milliseconds(0)));
    if (batch.empty()) break;
    for (const auto& rec : batch) {
      if (rec.offset.value >= start) break;
      next = rec.offset.value + 1;
      if (auto r = decode_outbox_record(rec.value); r.ok()) state.seen.check_and_add(rec.offset, *r);
    }
  }
  state.next = start;
  return {};
}

Result<bool> OutboxRepeatFilter::is_repeat(uint32_t partition, Offset offset, const OutboxRecord* r) {
  if (partition >= partitions_.size())
    return Error(Errc::kInvalidArgument, "the outbox has no partition " + std::to_string(partition));
  Partition& state = partitions_[partition];
  if (state.next != offset.value) QIM_RETURN_IF_ERROR(prime(partition, state, offset.value));
  state.next = offset.value + 1;
  return r != nullptr && state.seen.check_and_add(offset, *r);
}

}  // namespace qim
