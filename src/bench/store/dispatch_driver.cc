#include "bench/store/dispatch_driver.h"

#include <fmt/format.h>

#include <map>

namespace qim {

Result<std::unique_ptr<DispatchDriver>> DispatchDriver::start(MailboxStore& store, const ShardMap& shards,
                                                              Epoch epoch) {
  std::unique_ptr<DispatchDriver> d(new DispatchDriver(store, shards, epoch));
  std::vector<MailboxSeq> frontiers;
  for (uint32_t s = 0; s < shards.shard_count(); ++s) {
    QIM_ASSIGN_OR_RETURN(auto marks, store.lane_watermarks(ShardId{s}, epoch));
    frontiers.push_back(marks[0]);
    d->queues_.push_back(std::make_unique<ShardQueue>());
    d->queues_.back()->next_offset = marks[0].offset().value + 1;
  }
  for (uint32_t s = 0; s < shards.shard_count(); ++s) {
    d->workers_.emplace_back([dp = d.get(), s, f = frontiers[s]] { dp->work(s, f); });
  }
  return d;
}

DispatchDriver::~DispatchDriver() {
  if (!joined_) (void)finish();
}

Status DispatchDriver::send(const Message& m, std::span<const UserId> recipients, const std::string& prefix) {
  if (recipients.empty()) return Error(Errc::kInvalidArgument, "a message without recipients");
  std::map<uint32_t, std::vector<UserId>> by_shard;
  for (const UserId& u : recipients) by_shard[shards_.shard_of(u).value].push_back(u);
  for (auto& [shard, users] : by_shard) {
    std::vector<std::vector<UserId>> chunks;
    for (size_t from = 0; from < users.size(); from += kMaxChunkEntries) {
      const size_t to = std::min(users.size(), from + kMaxChunkEntries);
      chunks.emplace_back(users.begin() + from, users.begin() + to);
    }
    QIM_ASSIGN_OR_RETURN(DispatchId id,
                         DispatchId::parse(fmt::format("{}-m{}-s{}", prefix, m.id.value, shard)));
    DispatchIdentity identity = make_identity(std::move(id), m, chunks);
    QIM_RETURN_IF_ERROR(push(shard, DispatchRecord{std::move(identity), m, std::move(chunks)}));
  }
  return ok_status();
}

Status DispatchDriver::push(uint32_t shard, DispatchRecord record) {
  ShardQueue& q = *queues_[shard];
  {
    std::unique_lock lock(q.mu);
    q.space.wait(lock, [&] { return q.items.size() < kMaxQueued || failed_.load(); });
    if (!failed_.load()) {
      q.items.push_back(Queued{std::move(record), Offset{q.next_offset++}});
      q.ready.notify_one();
      return ok_status();
    }
  }
  return first_error();
}

std::vector<DispatchDriver::Queued> DispatchDriver::take(ShardQueue& q, size_t limit) {
  std::unique_lock lock(q.mu);
  q.ready.wait(lock, [&] { return !q.items.empty() || q.closed || failed_.load(); });
  std::vector<Queued> out;
  while (!failed_.load() && !q.items.empty() && out.size() < limit) {
    out.push_back(std::move(q.items.front()));
    q.items.pop_front();
  }
  q.space.notify_all();
  return out;
}

void DispatchDriver::work(uint32_t shard, MailboxSeq frontier) {
  for (;;) {
    std::vector<Queued> page = take(*queues_[shard], store_.finish_page_limit());
    if (page.empty()) return;
    if (Status s = work_page(shard, page, frontier); !s.ok()) {
      stop_all(s.error());
      return;
    }
    finished_ += page.size();
  }
}

Status DispatchDriver::work_page(uint32_t shard, std::vector<Queued>& page, MailboxSeq& frontier) {
  const ShardId sid{shard};
  std::vector<BeginRequest> requests;
  for (const auto& q : page) requests.push_back(BeginRequest{&q.record.identity, q.offset});
  QIM_ASSIGN_OR_RETURN(auto outcomes, store_.begin_dispatch_page(sid, epoch_, requests));
  std::vector<ChunkWrite> writes;
  std::vector<PageItem> items;
  MailboxSeq running = frontier;
  for (size_t i = 0; i < page.size(); ++i) {
    const Queued& q = page[i];
    QIM_ASSIGN_OR_RETURN(const BeginOutcome begun, std::move(outcomes[i]));
    if (begun.needs_entries) {
      for (uint32_t c = 0; c < q.record.chunks.size(); ++c) {
        writes.push_back(ChunkWrite{q.record.identity.id, c, &q.record.message, q.record.chunks[c]});
      }
    }
    QIM_ASSIGN_OR_RETURN(const MailboxSeq observed, compose(epoch_, q.offset));
    items.push_back(PageItem{q.record.identity.id, uniform_advances(running, observed)});
    if (begun.canonical && begun.seq > running) running = observed;
  }
  QIM_RETURN_IF_ERROR(store_.write_chunks(sid, epoch_, writes));  // the whole page's entries at once
  QIM_ASSIGN_OR_RETURN(const PageOutcome done, store_.finish_dispatch_page(sid, epoch_, items));
  frontier = done.frontier;
  return ok_status();
}

void DispatchDriver::stop_all(const Error& e) {
  {
    std::lock_guard lock(error_mu_);
    if (!error_) error_ = e;
  }
  failed_ = true;
  for (auto& q : queues_) {
    std::lock_guard lock(q->mu);
    q->ready.notify_all();
    q->space.notify_all();
  }
}

Status DispatchDriver::first_error() {
  std::lock_guard lock(error_mu_);
  if (error_) return *error_;
  return ok_status();
}

Status DispatchDriver::finish() {
  if (!joined_) {
    for (auto& q : queues_) {
      std::lock_guard lock(q->mu);
      q->closed = true;
      q->ready.notify_all();
    }
    for (auto& w : workers_) w.join();
    joined_ = true;
  }
  return first_error();
}

}  // namespace qim
