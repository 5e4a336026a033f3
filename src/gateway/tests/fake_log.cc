#include "gateway/tests/fake_log.h"

namespace qim::testing {

void FakeLog::append(uint32_t partition, std::string key, std::string value, AppendCallback done) {
  Result<Offset> outcome = Error(Errc::kInvalidArgument, "unknown partition");
  {
    std::lock_guard lock(mu_);
    if (partition < records_.size()) {
      Offset offset{records_[partition].size()};
      records_[partition].push_back(LogRecord{partition, offset, 0, std::move(key), std::move(value)});
      outcome = offset;
    }
    if (holding_) {
      pending_.emplace_back(std::move(done), std::move(outcome));
      return;
    }
  }
  done(outcome);
}

Result<std::vector<LogRecord>> FakeLog::read(uint32_t partition, Offset from, size_t max,
                                             std::chrono::milliseconds) {
  std::lock_guard lock(mu_);
  if (partition >= records_.size()) return Error(Errc::kInvalidArgument, "unknown partition");
  std::vector<LogRecord> out;
  for (uint64_t o = from.value; o < records_[partition].size() && out.size() < max; ++o)
    out.push_back(records_[partition][o]);
  return out;
}

Result<Offset> FakeLog::end_offset(uint32_t partition) {
  std::lock_guard lock(mu_);
  if (partition >= records_.size()) return Error(Errc::kInvalidArgument, "unknown partition");
  return Offset{records_[partition].size()};
}

void FakeLog::hold(bool on) {
  std::lock_guard lock(mu_);
  holding_ = on;
}

void FakeLog::release() {
  std::vector<std::pair<AppendCallback, Result<Offset>>> ready;
  {
    std::lock_guard lock(mu_);
    ready.swap(pending_);
  }
  for (auto& [done, outcome] : ready) done(outcome);
}

void FakeLog::fail_held(Error error) {
  std::vector<std::pair<AppendCallback, Result<Offset>>> ready;
  {
    std::lock_guard lock(mu_);
    ready.swap(pending_);
    // A failed append leaves nothing behind in a real log either.
    for (auto& part : records_) part.clear();
  }
  for (auto& [done, outcome] : ready) done(error);
}

size_t FakeLog::held() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

size_t FakeLog::total_records() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& part : records_) n += part.size();
  return n;
}

std::vector<LogRecord> FakeLog::all_records() const {
  std::lock_guard lock(mu_);
  std::vector<LogRecord> out;
  for (const auto& part : records_) out.insert(out.end(), part.begin(), part.end());
  return out;
}

}  // namespace qim::testing
