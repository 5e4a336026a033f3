#pragma once
// Runs the attachment rules' orphan sweep (AttachmentService::sweep_orphans: uploads that no accepted SEND
// referenced, older than QIM_ATTACH_ORPHAN_AGE_MS, are deleted; docs/adr/0114; and sent ones past
// QIM_ATTACH_RETENTION_MS, docs/adr/0151) on a thread of its own, once
// at start and then every `period`, and counts what it did for /metrics. Every gateway process with an
// object store runs one: two sweeps at once only delete the same orphans twice, which succeeds.
//
// Thread safety: prometheus() may be called from any thread; the destructor stops the thread and waits for
// a sweep under way.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "attachments/attachment_service.h"

namespace spdlog {
class logger;
}

namespace qim::attachments {

class OrphanSweeper {
 public:
  // Starts the thread; `rules` and `logger` must outlive the sweeper.
  OrphanSweeper(AttachmentService& rules, std::chrono::milliseconds period, spdlog::logger& logger);
  ~OrphanSweeper();
  OrphanSweeper(const OrphanSweeper&) = delete;
  OrphanSweeper& operator=(const OrphanSweeper&) = delete;

  // qim_attachment_sweeps_total, qim_attachment_sweep_failures_total, qim_attachment_orphans_deleted_total,
  // qim_attachment_expired_deleted_total (past retention, docs/adr/0151),
  // qim_attachment_objects_listed_total.
  std::string prometheus() const;

 private:
  void run();

  AttachmentService& rules_;
  std::chrono::milliseconds period_;
  spdlog::logger& logger_;
  std::atomic<uint64_t> sweeps_{0}, failures_{0}, deleted_{0}, expired_{0}, listed_{0};
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;     // last: started once the members above exist
};

}  // namespace qim::attachments
