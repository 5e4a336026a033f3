#include "log/embedded/embedded_log.h"

#include <spdlog/sinks/null_sink.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/thread_name.h"
#include "log/embedded/frame.h"

namespace qim {

using embedded_log::File;
using embedded_log::Segment;

namespace {

constexpr const char* kMetaHeader = "qim-embedded-log v1";
constexpr size_t kReadMaxBytes = 8 << 20;

Status check_meta(const EmbeddedLogOptions& o) {
  std::ostringstream want;
  want << kMetaHeader << "\nname " << o.name << "\npartitions " << o.partitions << "\n";
  QIM_ASSIGN_OR_RETURN(std::optional<uint32_t> created, embedded_log_partitions(o.dir));
  if (!created) return embedded_log::write_file_atomically(o.dir + "/META", want.str());
  const uint32_t partitions = *created;
  if (partitions != o.partitions) {
    return Error(Errc::kConfig, "the " + o.name + " log in " + o.dir + " was created with " +
                                    std::to_string(partitions) + " partitions, not " +
                                    std::to_string(o.partitions) +
                                    " (the partition count of a log cannot change)");
  }
  return {};
}

}  // namespace

Result<std::optional<uint32_t>> embedded_log_partitions(const std::string& dir) {
  const std::string path = dir + "/META";
  auto have = embedded_log::read_whole_file(path);
  if (!have.ok()) {
    if (have.code() == Errc::kNotFound) return std::optional<uint32_t>();
    return have.error();
  }
  std::istringstream in(*have);
  std::string header, key, name;
  uint32_t partitions = 0;
  std::getline(in, header);
  in >> key >> name >> key >> partitions;
  if (header != kMetaHeader || !in || partitions == 0) {
    return Error(Errc::kCorruptEntry,
                 path + " does not parse (expected '" + kMetaHeader + "', a name and a partition count)");
  }
  return std::optional(partitions);
}

Result<std::unique_ptr<EmbeddedLog>> EmbeddedLog::open(EmbeddedLogOptions options) {
  if (options.dir.empty()) return Error(Errc::kConfig, "embedded log: empty directory");
  if (options.partitions == 0 || options.partitions > 65536) {
    return Error(Errc::kConfig, "embedded log " + options.name + ": partitions must be 1..65536, got " +
                                    std::to_string(options.partitions));
  }
  if (options.segment_bytes < 4096) return Error(Errc::kConfig, "embedded log: segment_bytes below 4096");
  if (options.journal_bytes < embedded_log::kMinJournalBytes) {
    return Error(Errc::kConfig,
                 "embedded log: journal_bytes below " + std::to_string(embedded_log::kMinJournalBytes));
  }
  if (!options.clock) options.clock = std::make_shared<SystemClock>();
  if (!options.logger) {
    options.logger = std::make_shared<spdlog::logger>("log", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
  QIM_RETURN_IF_ERROR(embedded_log::make_dirs(options.dir + "/consumers"));
  QIM_ASSIGN_OR_RETURN(auto lock,
                       embedded_log::DirLock::acquire(options.dir, "the " + options.name + " log"));
  QIM_RETURN_IF_ERROR(check_meta(options));
  std::unique_ptr<EmbeddedLog> log(new EmbeddedLog(std::move(options), std::move(lock)));
  for (uint32_t i = 0; i < log->options_.partitions; ++i) {
    auto p = std::make_unique<Partition>();
    p->id = i;
    p->dir = log->options_.dir + "/p" + std::to_string(i);
    QIM_RETURN_IF_ERROR(log->recover_partition(*p));
    log->partitions_.push_back(std::move(p));
  }
  {
    std::vector<embedded_log::JournalEntry> entries;
    QIM_ASSIGN_OR_RETURN(log->journal_, embedded_log::Journal::open(log->options_.dir + "/JOURNAL",
                                                                    log->options_.journal_bytes, entries));
    QIM_RETURN_IF_ERROR(log->replay_journal(entries));
    QIM_RETURN_IF_ERROR(log->checkpoint());  // the replayed records synced, a fresh generation
  }
  if (log->options_.retention_ms) {
    QIM_RETURN_IF_ERROR(log->enforce_retention());  // a log reopened after a long stop starts trimmed
    log->retention_ = std::thread([raw = log.get()] {
      std::unique_lock lock(raw->retention_mu_);
      while (!raw->retention_cv_.wait_for(lock, raw->options_.retention_check_interval,
                                          [raw] { return raw->retention_stop_; })) {
        lock.unlock();
        if (auto r = raw->enforce_retention(); !r.ok()) {
          raw->options_.logger->error("{} log: retention: {}", raw->options_.name, r.error().to_string());
        }
        lock.lock();
      }
    });
  }
  log->writer_ = std::thread([raw = log.get()] {
    set_thread_name("log-" + raw->options_.name);
    raw->writer_loop();
  });
  return log;
}

EmbeddedLog::EmbeddedLog(EmbeddedLogOptions options, embedded_log::DirLock lock)
    : options_(std::move(options)), lock_(std::move(lock)), offsets_(options_.dir + "/consumers") {}

EmbeddedLog::~EmbeddedLog() {
  close();
}

Result<EmbeddedLog::Partition*> EmbeddedLog::partition(uint32_t id) {
  if (id >= partitions_.size()) {
    return Error(Errc::kInvalidArgument, options_.name + " log has no partition " + std::to_string(id) +
                                             " (" + std::to_string(partitions_.size()) + " partitions)");
  }
  return partitions_[id].get();
}

void EmbeddedLog::append(uint32_t partition_id, std::string key, std::string value, AppendCallback done) {
  Pending p{partition_id, std::move(key), std::move(value), std::move(done), std::nullopt};
  if (partition_id >= partitions_.size()) {
    p.error = Error(Errc::kInvalidArgument,
                    options_.name + " log has no partition " + std::to_string(partition_id));
  } else if (p.value.size() > options_.max_record_bytes) {
    p.error = Error(Errc::kInvalidArgument, "record of " + std::to_string(p.value.size()) +
                                                " bytes exceeds the " + options_.name + " log's limit of " +
                                                std::to_string(options_.max_record_bytes));
  } else if (p.key.size() > embedded_log::kMaxKeyBytes) {
    p.error =
        Error(Errc::kInvalidArgument, "record key of " + std::to_string(p.key.size()) + " bytes exceeds " +
                                          std::to_string(embedded_log::kMaxKeyBytes));
  }
  bool closing = false;
  {
    std::lock_guard lock(queue_mu_);
    closing = closing_;
    // Bounded while the writer waits for the disk: an append past the bound is refused now, not queued
    // behind a slow fsync for longer than any caller waits (decision 106).
    const bool full = options_.max_queued_appends > 0 && queue_.size() >= options_.max_queued_appends;
    if (!closing && !full) {
      queue_.push_back(std::move(p));
      if (writer_idle_) queue_cv_.notify_one();
      return;
    }
  }
  if (closing) {
    p.done(Error(Errc::kTransport, options_.name + " log is closed"));
    return;
  }
  refused_queue_full_.fetch_add(1, std::memory_order_relaxed);
  p.done(Error(Errc::kTimeout, options_.name + " log has " + std::to_string(options_.max_queued_appends) +
                                   " appends waiting for the disk (QIM_LOG_MAX_QUEUED_APPENDS): not written, "
                                   "retry later"));
}

void EmbeddedLog::writer_loop() {
  std::vector<Pending> batch;
  // When the last batch started; the next one starts no sooner than batch_interval after it.
  auto last_start = std::chrono::steady_clock::time_point::min();
  while (true) {
    {
      std::unique_lock lock(queue_mu_);
      writer_idle_ = true;
      queue_cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      writer_idle_ = false;
      if (options_.batch_interval.count() > 0 && !closing_) {
        // Appends arriving meanwhile join this batch without waking the writer; close() cuts the wait.
        const auto due = last_start + options_.batch_interval;
        if (std::chrono::steady_clock::now() < due) queue_cv_.wait_until(lock, due, [&] { return closing_; });
      }
      if (queue_.empty()) {  // closing and drained: the segments take over from the journal
        if (Status s = checkpoint(); !s.ok()) {
          options_.logger->warn("{} log: checkpoint at close failed (the next open replays the journal): {}",
                                options_.name, s.error().to_string());
        }
        return;
      }
      batch.swap(queue_);
      last_start = std::chrono::steady_clock::now();
    }
    const int64_t now = options_.clock->now_ms();
    std::map<uint32_t, std::vector<Pending*>> by_partition;  // call order kept within a partition
    for (auto& p : batch) {
      if (p.error) {
        p.result = *p.error;
        continue;
      }
      by_partition[p.partition].push_back(&p);
    }
    auto fail = [&](Partition& part, std::vector<Pending*>& pendings, const Error& e) {
      part.failed = Error(Errc::kIo, options_.name + " log partition " + std::to_string(part.id) +
                                         " refuses appends after a failed write (" + e.message() +
                                         "); reopen the log to recover");
      options_.logger->error("{}", part.failed->message());
      for (Pending* p : pendings) p->result = e;
    };
    std::vector<Staged> staged;
    for (auto& [id, pendings] : by_partition) {
      Partition& part = *partitions_[id];
      if (part.failed) {
        for (Pending* p : pendings) p->result = *part.failed;
        continue;
      }
      Staged st;
      Status s = stage_frames(part, pendings, now, st);
      if (!s.ok()) {
        const bool restored = take_back(st);
        if (restored && embedded_log::is_no_space(s.error())) {
          // A full disk: the write did not happen and the segment is back to what it was, so the batch is
          // refused (UNAVAILABLE to a client, which retries) and the partition takes appends again once
          // space returns. Not after a failed fsync: that stays fatal until a reopen.
          options_.logger->warn("{} log partition {}: {}; appends refused until space returns", options_.name,
                                part.id, s.error().message());
          for (Pending* p : pendings) p->result = s.error();
          continue;
        }
        fail(part, pendings, s.error());
        continue;
      }
      staged.push_back(std::move(st));
    }
    if (!staged.empty()) {
      if (Status s = make_durable(staged); !s.ok()) {
        for (auto& st : staged) {
          (void)take_back(st);
          fail(*st.partition, *st.pendings, s.error());
        }
      } else {
        for (auto& st : staged) publish(st, now);
      }
    }
    batches_++;
    for (auto& p : batch) p.done(std::move(p.result));  // after publishing: durable before acknowledged
    batch.clear();
  }
}

Result<std::shared_ptr<Segment>> EmbeddedLog::roll(Partition& p, Segment& current) {
  // The sealed segment is made durable before its successor exists, so a crash can only tear the last one.
  QIM_RETURN_IF_ERROR(current.file.sync_data());
  syncs_++;
  auto seg = std::make_shared<Segment>();
  seg->base = p.next_offset;
  seg->end_offset = p.next_offset;
  QIM_ASSIGN_OR_RETURN(seg->file, File::open(p.dir + "/" + embedded_log::segment_file_name(seg->base), true));
  QIM_RETURN_IF_ERROR(embedded_log::sync_dir(p.dir));
  return seg;
}

Status EmbeddedLog::stage_frames(Partition& p, std::vector<Pending*>& pendings, int64_t now_ms, Staged& st) {
  st.partition = &p;
  st.pendings = &pendings;
  auto active = p.segments.back();  // only this thread changes `segments`
  st.first_offset = p.next_offset;
  st.size_before = active->size;
  st.touched.push_back(Touched{active,
                               active->size,
                               active->end_offset,
                               {},
                               false,
                               active->index.empty() ? 0 : active->index.back().pos});
  std::string buf;
  auto flush = [&](Touched& t) -> Status {
    const uint64_t at = t.size - buf.size();
    Status s = t.seg->file.write_at(at, buf);
    st.frames += buf;
    buf.clear();
    return s;
  };
  for (Pending* pending : pendings) {
    const size_t bytes = embedded_log::frame_size(pending->key.size(), pending->value.size());
    Touched* t = &st.touched.back();
    if (t->size + bytes > options_.segment_bytes && t->end_offset > t->seg->base) {
      QIM_RETURN_IF_ERROR(flush(*t));
      QIM_ASSIGN_OR_RETURN(auto next, roll(p, *t->seg));
      st.touched.push_back(Touched{next, 0, p.next_offset, {}, true, 0});
      t = &st.touched.back();
    }
    if (p.next_offset > kMaxOffset) {
      return Error(Errc::kResourceExhausted, options_.name + " log partition " + std::to_string(p.id) +
                                                 " is full: offsets must stay below 2^48");
    }
    const uint64_t offset = p.next_offset++;
    if (t->size >= t->last_index_pos + embedded_log::kIndexIntervalBytes) {
      t->index.push_back(embedded_log::IndexEntry{offset, t->size});
      t->last_index_pos = t->size;
    }
    embedded_log::append_frame(buf, offset, now_ms, pending->key, pending->value);
    t->size += bytes;
    t->end_offset = offset + 1;
    t->written = true;
    pending->result = Offset{offset};
  }
  return flush(st.touched.back());
}

bool EmbeddedLog::take_back(Staged& st) {
  if (st.touched.empty()) return true;
  st.partition->next_offset = st.first_offset;
  bool restored = st.touched.front().seg->file.truncate(st.size_before).ok();
  for (const auto& t : st.touched) {
    std::error_code ec;
    if (t.fresh && !std::filesystem::remove(t.seg->file.path(), ec)) restored = false;
  }
  return restored;
}

Status EmbeddedLog::make_durable(std::vector<Staged>& staged) {
  std::vector<embedded_log::JournalEntry> entries;
  for (auto& st : staged) {
    for (const auto& t : st.touched) {
      if (std::find(dirty_.begin(), dirty_.end(), t.seg) == dirty_.end()) dirty_.push_back(t.seg);
    }
    entries.push_back(embedded_log::JournalEntry{st.partition->id, std::move(st.frames)});
  }
  QIM_ASSIGN_OR_RETURN(bool journaled, journal_.append(entries));
  if (!journaled) return checkpoint();  // the batch is durable once its segments are synced
  syncs_++;
  return {};
}

Status EmbeddedLog::checkpoint() {
  for (const auto& seg : dirty_) {
    QIM_RETURN_IF_ERROR(seg->file.sync_data());
    syncs_++;
  }
  dirty_.clear();
  QIM_RETURN_IF_ERROR(journal_.reset());
  checkpoints_++;
  return {};
}

void EmbeddedLog::publish(Staged& st, int64_t now_ms) {
  Partition& p = *st.partition;
  {
    std::lock_guard lock(p.mu);
    for (auto& t : st.touched) {
      t.seg->size = t.size;
      t.seg->end_offset = t.end_offset;
      t.seg->index.insert(t.seg->index.end(), t.index.begin(), t.index.end());
      if (t.written) t.seg->max_timestamp_ms = std::max(t.seg->max_timestamp_ms, now_ms);
      if (t.fresh) p.segments.push_back(t.seg);
    }
    p.durable_end = p.next_offset;
  }
  p.cv.notify_all();
  appends_ += st.pendings->size();
}

Result<std::vector<LogRecord>> EmbeddedLog::read(uint32_t partition_id, Offset from, size_t max,
                                                 std::chrono::milliseconds wait) {
  QIM_ASSIGN_OR_RETURN(Partition * p, partition(partition_id));
  std::vector<LogRecord> out;
  if (max == 0) return out;
  std::unique_lock lock(p->mu);
  if (from.value > p->durable_end) {
    return Error(Errc::kInvalidArgument, options_.name + " log partition " + std::to_string(partition_id) +
                                             ": offset " + std::to_string(from.value) +
                                             " is beyond the end " + std::to_string(p->durable_end));
  }
  auto below_start = [&](uint64_t offset) {
    return Error(Errc::kExpiredCursor,
                 options_.name + " log partition " + std::to_string(partition_id) + ": offset " +
                     std::to_string(offset) + " is below the log start " +
                     std::to_string(p->segments.front()->base) +
                     " (older records were deleted by the log's retention); resume at the start or later");
  };
  if (from.value < p->segments.front()->base) return below_start(from.value);
  p->cv.wait_for(lock, wait, [&] { return p->durable_end > from.value || closed_for_readers_.load(); });
  uint64_t next = from.value;
  while (next < p->durable_end && out.size() < max) {
    // Retention may have deleted segments while the lock was released.
    if (next < p->segments.front()->base) return below_start(next);
    const uint64_t limit = p->durable_end;
    auto it = std::upper_bound(p->segments.begin(), p->segments.end(), next,
                               [](uint64_t o, const std::shared_ptr<Segment>& s) { return o < s->base; });
    std::shared_ptr<Segment> seg = *std::prev(it);
    const embedded_log::IndexEntry start = seg->seek(next);
    const uint64_t size = seg->size;
    const uint64_t seg_end = seg->end_offset;
    lock.unlock();  // read the file without holding up the writer
    size_t bytes = 0;
    for (const auto& r : out) bytes += r.value.size();
    QIM_ASSIGN_OR_RETURN(uint64_t after, embedded_log::read_segment(
                                             *seg, start.pos, size, next, std::min(limit, seg_end), max,
                                             kReadMaxBytes - std::min(bytes, kReadMaxBytes),
                                             embedded_log::max_frame_body_bytes(options_.max_record_bytes),
                                             partition_id, out));
    lock.lock();
    if (after == next) break;  // byte budget spent
    next = after;
  }
  return out;
}

Result<Offset> EmbeddedLog::end_offset(uint32_t partition_id) {
  QIM_ASSIGN_OR_RETURN(Partition * p, partition(partition_id));
  std::lock_guard lock(p->mu);
  return Offset{p->durable_end};
}

Result<Offset> EmbeddedLog::start_offset(uint32_t partition_id) {
  QIM_ASSIGN_OR_RETURN(Partition * p, partition(partition_id));
  std::lock_guard lock(p->mu);
  return Offset{p->segments.front()->base};
}

Result<uint64_t> EmbeddedLog::enforce_retention() {
  if (!options_.retention_ms) return uint64_t{0};
  const int64_t horizon = options_.clock->now_ms() - *options_.retention_ms;
  uint64_t deleted = 0;
  std::optional<Error> first_error;
  for (auto& part : partitions_) {
    Partition& p = *part;
    std::vector<std::shared_ptr<Segment>> gone;
    {
      std::lock_guard lock(p.mu);
      // Sealed segments only (never the last, which the writer appends to), oldest first, each only if
      // every record in it was appended before the horizon.
      size_t n = 0;
      while (n + 1 < p.segments.size() && p.segments[n]->max_timestamp_ms < horizon) ++n;
      gone.assign(p.segments.begin(), p.segments.begin() + static_cast<std::ptrdiff_t>(n));
      p.segments.erase(p.segments.begin(), p.segments.begin() + static_cast<std::ptrdiff_t>(n));
    }
    if (gone.empty()) continue;
    // Readers holding a segment keep its file open; unlinking only removes the name.
    uint64_t records = 0;
    for (const auto& seg : gone) {
      records += seg->end_offset - seg->base;
      std::error_code ec;
      std::filesystem::remove(seg->file.path(), ec);
      if (ec && !first_error) {
        first_error = Error(Errc::kIo, "cannot delete " + seg->file.path() + ": " + ec.message());
      }
    }
    if (Status s = embedded_log::sync_dir(p.dir); !s.ok() && !first_error) first_error = s.error();
    deleted += gone.size();
    segments_deleted_ += gone.size();
    records_deleted_ += records;
    options_.logger->info(
        "{} log: partition {}: retention deleted {} segment(s), offsets {}..{} ({} records "
        "older than {} ms); the log now starts at {}",
        options_.name, p.id, gone.size(), gone.front()->base, gone.back()->end_offset - 1, records,
        *options_.retention_ms, gone.back()->end_offset);
  }
  if (first_error) return *first_error;
  return deleted;
}

Status EmbeddedLog::commit(const std::string& group, uint32_t partition_id, Offset next) {
  QIM_ASSIGN_OR_RETURN(Offset end, end_offset(partition_id));
  if (next > end) {
    return Error(Errc::kInvalidArgument, "cannot commit " + group + " at offset " +
                                             std::to_string(next.value) + " of " + options_.name +
                                             " partition " + std::to_string(partition_id) +
                                             ": the log ends at " + std::to_string(end.value));
  }
  return offsets_.commit(group, partition_id, next.value);
}

Result<std::optional<Offset>> EmbeddedLog::committed(const std::string& group, uint32_t partition_id) {
  QIM_RETURN_IF_ERROR(partition(partition_id));
  QIM_ASSIGN_OR_RETURN(auto next, offsets_.committed(group, partition_id));
  if (!next) return std::optional<Offset>();
  return std::optional(Offset{*next});
}

void EmbeddedLog::close() {
  {
    std::lock_guard lock(retention_mu_);
    retention_stop_ = true;
  }
  retention_cv_.notify_all();
  if (retention_.joinable()) retention_.join();
  {
    std::lock_guard lock(queue_mu_);
    closing_ = true;
  }
  queue_cv_.notify_one();
  if (writer_.joinable()) writer_.join();
  closed_for_readers_ = true;
  for (auto& p : partitions_) {
    std::lock_guard lock(p->mu);  // pairs with the readers' predicate check
    p->cv.notify_all();
  }
}

EmbeddedLogStats EmbeddedLog::stats() const {
  return EmbeddedLogStats{appends_.load(),         batches_.load(),           syncs_.load(),
                          checkpoints_.load(),     replayed_.load(),          segments_deleted_.load(),
                          records_deleted_.load(), refused_queue_full_.load()};
}

}  // namespace qim
