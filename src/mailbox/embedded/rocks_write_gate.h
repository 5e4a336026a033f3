#pragma once
// A RocksDB database through a full disk (issue 42, item 3). When a write fails for want of space RocksDB
// stops the database (a background error: every later write returns it) and its log writer keeps the
// error. Calling SyncWAL then trips an assertion in Debian's RocksDB 7.8 build (the process aborts) and
// would fail anyway; and the database stays stopped until someone resumes it. The gate is the database's
// event listener: it learns of the background error as RocksDB sets it, so SyncWAL is not called while the
// database is stopped, and the next write (or sync) first tries DB::Resume() (at most every 200 ms), which
// succeeds once space returns (RocksDB flushes its memtables, so what was written before is durable).
// RocksDB's own recovery is turned off (OnErrorRecoveryBegin). Until then the caller gets the error, an Io
// refusal that is UNAVAILABLE to a client.
//
// Thread safety: every method may be called from any thread. What it does not close: a SyncWAL that starts
// between a failing log write and RocksDB raising the error (microseconds, once per fault).

#include <rocksdb/db.h>
#include <rocksdb/listener.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace qim::embedded {

class RocksWriteGate final : public rocksdb::EventListener {
 public:
  // The database to resume; set once it is open (before that, nothing is resumed).
  void attach(rocksdb::DB* db) { db_.store(db); }

  // OK if the database takes writes (after resuming it if it had stopped and now can); else the error that
  // stopped it.
  rocksdb::Status ready() {
    if (!stopped_.load()) return rocksdb::Status::OK();
    uint64_t errors = 0;
    rocksdb::DB* db = db_.load();
    {
      std::lock_guard lock(mu_);
      if (!stopped_.load()) return rocksdb::Status::OK();
      const auto now = std::chrono::steady_clock::now();
      if (db == nullptr || resuming_ || now < next_try_) return error_;
      next_try_ = now + std::chrono::milliseconds(200);
      resuming_ = true;
      errors = errors_;
    }
    // Without the lock: a Resume that fails raises the error again, through OnBackgroundError. OK: resumed,
    // or nothing to resume (RocksDB's own recovery ended it); Busy: its recovery is still running.
    const rocksdb::Status s = db->Resume();
    std::lock_guard lock(mu_);
    resuming_ = false;
    if (!s.ok() || errors_ != errors) return error_;
    stopped_.store(false);
    return rocksdb::Status::OK();
  }

  // RocksDB's own recovery from a full disk waits until the free space exceeds its disk buffer (the write
  // buffer size, 64 MiB by default), which a small or nearly full disk never has: the database would stay
  // stopped for good. The gate resumes instead, as soon as a write can go in.
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status, bool* auto_recovery) override {
    if (auto_recovery != nullptr) *auto_recovery = false;
  }

  void OnBackgroundError(rocksdb::BackgroundErrorReason, rocksdb::Status* bg_error) override {
    if (bg_error == nullptr || bg_error->ok()) return;
    std::lock_guard lock(mu_);
    error_ = *bg_error;
    ++errors_;
    stopped_.store(true);
  }

 private:
  std::atomic<rocksdb::DB*> db_{nullptr};
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  rocksdb::Status error_;  // guarded by mu_: the background error that stopped the database
  uint64_t errors_ = 0;    // guarded by mu_: background errors raised so far
  bool resuming_ = false;  // guarded by mu_: one Resume at a time
  std::chrono::steady_clock::time_point next_try_{};  // guarded by mu_
};

}  // namespace qim::embedded
