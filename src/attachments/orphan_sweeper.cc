#include "attachments/orphan_sweeper.h"

#include <spdlog/spdlog.h>

namespace qim::attachments {

OrphanSweeper::OrphanSweeper(AttachmentService& rules, std::chrono::milliseconds period,
                             spdlog::logger& logger)
    : rules_(rules), period_(period), logger_(logger), thread_([this] { run(); }) {}

OrphanSweeper::~OrphanSweeper() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void OrphanSweeper::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    auto report = rules_.sweep_orphans();
    sweeps_.fetch_add(1);
    if (report.ok()) {
      deleted_.fetch_add(report->deleted);
      expired_.fetch_add(report->expired);
      listed_.fetch_add(report->listed);
      if (report->deleted > 0 || report->expired > 0)
        logger_.info(
            "attachments: the sweep deleted {} orphan uploads and {} attachments past retention ({} "
            "objects listed)",
            report->deleted, report->expired, report->listed);
    } else {
      failures_.fetch_add(1);
      logger_.warn("attachments: the orphan sweep failed: {}", report.error().to_string());
    }
    lock.lock();
    wake_.wait_for(lock, period_, [this] { return stopping_; });
  }
}

std::string OrphanSweeper::prometheus() const {
  return "# TYPE qim_attachment_sweeps_total counter\nqim_attachment_sweeps_total " +
         std::to_string(sweeps_.load()) +
         "\n# TYPE qim_attachment_sweep_failures_total counter\nqim_attachment_sweep_failures_total " +
         std::to_string(failures_.load()) +
         "\n# TYPE qim_attachment_orphans_deleted_total counter\nqim_attachment_orphans_deleted_total " +
         std::to_string(deleted_.load()) +
         "\n# TYPE qim_attachment_expired_deleted_total counter\nqim_attachment_expired_deleted_total " +
         std::to_string(expired_.load()) +
         "\n# TYPE qim_attachment_objects_listed_total counter\nqim_attachment_objects_listed_total " +
         std::to_string(listed_.load()) + "\n";
}

}  // namespace qim::attachments
