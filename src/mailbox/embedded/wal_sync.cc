#include "mailbox/embedded/wal_sync.h"

#include <algorithm>

#include "mailbox/embedded/rocks_error.h"

namespace qim::embedded {

Status WalSyncer::sync_published() {
  // Published writes have their log records written already (RocksDB appends to the log before it
  // inserts and publishes), so a sync that starts after reading this sequence covers them.
  const uint64_t wanted = db_.GetLatestSequenceNumber();
  std::unique_lock lock(mu_);
  while (!failed_ && synced_through_ < wanted) {
    if (syncing_) {
      synced_cv_.wait(lock);
      continue;
    }
    syncing_ = true;
    const uint64_t covers = db_.GetLatestSequenceNumber();
    lock.unlock();
    if (rocksdb::Status ready = gate_ ? gate_->ready() : rocksdb::Status::OK(); !ready.ok()) {
      lock.lock();
      syncing_ = false;
      synced_cv_.notify_all();
      return rocks_status(ready, "sync the write-ahead log: the store stopped after a write error");
    }
    Status synced = rocks_status(db_.SyncWAL(), "sync the write-ahead log");
    lock.lock();
    syncing_ = false;
    if (synced.ok()) {
      synced_through_ = std::max(synced_through_, covers);
    } else {
      failed_ = synced.error();
    }
    synced_cv_.notify_all();
  }
  if (failed_) return *failed_;
  return {};
}

Status WalSyncer::failure() {
  std::lock_guard lock(mu_);
  if (failed_) return *failed_;
  return {};
}

}  // namespace qim::embedded
