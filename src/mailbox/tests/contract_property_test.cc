// Random runs of a shard's life checked against a model: fanout appends records and replays (repeated
// observations) to the shard's log; the worker takes pages of random sizes from it, begins, writes and
// finishes them; sometimes it crashes between the entry writes and the frontier write (a restart, then
// a replay from the last finished position), and sometimes a new owner takes the shard at the next
// epoch. After every step the store must agree with the model: the frontier, every begin's canonical
// offset, and each user's visible mailbox: every entry written at or below its own epoch's frontier (an
// entry an older owner wrote above its last frontier is never shown; the new owner writes it again).
//
// Runs are seeded; a failure prints its seed. QIM_PROPERTY_SEED=<n> replays one run,
// QIM_PROPERTY_RUNS=<n> changes how many runs each backend does.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>
#include <set>

#include "mailbox/tests/contract_helpers.h"

namespace qim::test {
namespace {

constexpr ShardId kShard{0};
constexpr int kSteps = 120;
constexpr int kUsers = 6;

struct LogItem {
  uint64_t offset;
  size_t record;  // index into Simulation::records_
};

// What the store should hold, computed from the rules of the contract alone.
struct Model {
  std::map<std::pair<uint32_t, std::string>, uint64_t> canonical;  // (epoch, dispatch id) -> offset
  MailboxSeq frontier;                                             // the highest epoch's frontier
  std::map<uint32_t, MailboxSeq> frontiers;                        // epoch -> that epoch's last frontier
  std::map<UserId, std::map<MailboxSeq, Message>> written;  // every entry ever written, by user and seq

  void advance(MailboxSeq to) {
    frontier = to;
    frontiers[to.epoch().value] = to;
  }

  std::vector<MailboxEntry> visible(const UserId& user) const {
    std::vector<MailboxEntry> out;
    auto it = written.find(user);
    if (it == written.end()) return out;
    for (const auto& [seq, message] : it->second) {
      auto f = frontiers.find(seq.epoch().value);
      if (f != frontiers.end() && seq <= f->second) out.push_back(MailboxEntry{user, seq, message});
    }
    return out;
  }
};

class Simulation {
 public:
  Simulation(const BackendFixture& fixture, uint64_t seed) : rng_(seed) {
    context_.shards = *ShardMap::create(2);
    context_.clock = std::make_shared<ManualClock>(20'000 * kDayMs);
    for (int i = 0; i < kUsers; ++i) users_.push_back(user_in_shard(context_.shards, kShard, i));
    session_ = std::make_unique<StoreSession>(fixture, context_);
  }

  void run() {
    ASSERT_TRUE(is_ok(session_->start()));
    for (int step = 0; step < kSteps && !::testing::Test::HasFailure(); ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      const int dice = pick(0, 99);
      if (dice < 30) {
        append_new_records();
      } else if (dice < 40) {
        append_repeat();
      } else if (dice < 85) {
        work_page();
      } else if (dice < 97) {
        crash_mid_page();
      } else {
        change_owner();
      }
      check_store();
    }
    while (committed_ < log_.size() && !::testing::Test::HasFailure()) work_page();
    check_store();
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  void append_new_records() {
    for (int n = pick(1, 8); n > 0; --n) {
      std::vector<UserId> recipients = users_;
      std::shuffle(recipients.begin(), recipients.end(), rng_);
      recipients.resize(pick(1, kUsers));
      std::vector<std::vector<UserId>> chunks(pick(1, static_cast<int>(recipients.size())));
      for (size_t i = 0; i < recipients.size(); ++i) chunks[i % chunks.size()].push_back(recipients[i]);
      const uint64_t k = records_.size();
      records_.push_back(make_record("r" + std::to_string(k),
                                     make_message(k, recipients[0], context_.clock->now_ms()), chunks));
      log_.push_back(LogItem{next_offset_++, k});
    }
  }

  void append_repeat() {
    if (records_.empty()) return;
    log_.push_back(
        LogItem{next_offset_++, static_cast<size_t>(pick(0, static_cast<int>(records_.size()) - 1))});
  }

  // Begins and writes the next `n` queued items as the worker does; returns their page items.
  std::vector<PageItem> begin_and_write(size_t n, bool stop_writing_early) {
    std::vector<PageItem> page;
    MailboxSeq running = model_.frontier;
    const size_t write_until = stop_writing_early ? static_cast<size_t>(pick(0, static_cast<int>(n))) : n;
    std::set<MailboxSeq> skipped;  // canonical records begun but, crashing, never written
    for (size_t i = 0; i < n && !::testing::Test::HasFailure(); ++i) {
      const LogItem item = log_[committed_ + i];
      const DispatchRecord& r = records_[item.record];
      auto begun = session_->store().begin_dispatch(kShard, epoch_, r.identity, Offset{item.offset});
      EXPECT_TRUE(is_ok(begun));
      if (!begun.ok()) return page;
      const auto [slot, fresh] =
          model_.canonical.try_emplace({epoch_.value, r.identity.id.str()}, item.offset);
      EXPECT_EQ(begun->kind, fresh ? BeginKind::kFresh : BeginKind::kExisting);
      EXPECT_EQ(begun->canonical_offset, Offset{slot->second});
      const MailboxSeq canonical = seq_of(epoch_.value, slot->second);
      const MailboxSeq observed = seq_of(epoch_.value, item.offset);
      const bool covered = canonical <= model_.frontier && canonical.epoch() == model_.frontier.epoch();
      if (covered) {
        EXPECT_FALSE(begun->needs_entries) << r.identity.id.str() << " is below the frontier";
      }
      if (begun->needs_entries) {
        if (i < write_until) {
          write(r, canonical);
        } else {
          skipped.insert(canonical);  // the crash comes before this record's writes
        }
      } else if (!skipped.contains(canonical)) {
        for (const auto& chunk : r.chunks) {
          for (const auto& u : chunk) {
            EXPECT_TRUE(model_.written[u].contains(canonical))
                << r.identity.id.str() << " needs no entries but " << u.str() << " has none at "
                << canonical.to_string();
          }
        }
      }
      page.push_back(PageItem{r.identity.id, uniform_advances(running, observed)});
      if (observed == canonical && canonical > running) running = observed;
    }
    return page;
  }

  // Writes a record's chunks, in random order and sometimes split over several calls.
  void write(const DispatchRecord& r, MailboxSeq canonical) {
    std::vector<ChunkWrite> writes = chunk_writes(r);
    std::shuffle(writes.begin(), writes.end(), rng_);
    for (size_t from = 0; from < writes.size();) {
      const size_t n = static_cast<size_t>(pick(1, static_cast<int>(writes.size() - from)));
      ASSERT_TRUE(is_ok(session_->store().write_chunks(kShard, epoch_, std::span(writes).subspan(from, n))));
      from += n;
    }
    for (const auto& chunk : r.chunks) {
      for (const auto& u : chunk) model_.written[u][canonical] = r.message;
    }
  }

  size_t next_page_size() {
    const size_t pending = log_.size() - committed_;
    const size_t limit = std::min<size_t>(pending, session_->store().finish_page_limit());
    return limit == 0 ? 0 : static_cast<size_t>(pick(1, static_cast<int>(limit)));
  }

  void work_page() {
    const size_t n = next_page_size();
    if (n == 0) return;
    std::vector<PageItem> page = begin_and_write(n, false);
    if (::testing::Test::HasFailure()) return;
    const MailboxSeq expected = page.empty() ? model_.frontier : expected_frontier(page);
    const OpCounts before = session_->store().op_counts();
    auto done = session_->store().finish_dispatch_page(kShard, epoch_, page);
    ASSERT_TRUE(is_ok(done));
    EXPECT_EQ(done->frontier, expected);
    const uint64_t writes = (session_->store().op_counts() - before).frontier_writes;
    EXPECT_EQ(writes, expected != model_.frontier ? 1u : 0u) << "a page writes the frontier at most once";
    if (expected != model_.frontier) model_.advance(expected);
    committed_ += n;
  }

  // The frontier after a page: the observed seq of its last advancing (canonical) item.
  MailboxSeq expected_frontier(const std::vector<PageItem>& page) {
    MailboxSeq running = model_.frontier;
    for (const auto& item : page) {
      const MailboxSeq observed = item.advances[0].observed;
      const auto key = std::make_pair(epoch_.value, item.dispatch_id.str());
      if (observed == seq_of(epoch_.value, model_.canonical.at(key)) && observed > running)
        running = observed;
    }
    return running;
  }

  // Begins and writes part of a page, then the process dies before the frontier write.
  void crash_mid_page() {
    const size_t n = next_page_size();
    if (n > 0) begin_and_write(n, true);
    ASSERT_TRUE(is_ok(session_->restart()));
  }

  // A new owner takes the shard at the next epoch and replays from the last finished position.
  void change_owner() {
    ASSERT_TRUE(is_ok(session_->restart()));
    epoch_.value++;
  }

  void check_store() {
    if (::testing::Test::HasFailure()) return;
    auto frontier = frontier_of(session_->store(), kShard, epoch_);
    ASSERT_TRUE(is_ok(frontier));
    ASSERT_EQ(*frontier, model_.frontier);
    for (const auto& u : users_) {
      auto entries = read_all(session_->store(), u);
      ASSERT_TRUE(is_ok(entries));
      ASSERT_EQ(*entries, model_.visible(u)) << "mailbox of " << u.str();
    }
  }

  std::mt19937_64 rng_;
  BackendContext context_;
  std::vector<UserId> users_;
  std::unique_ptr<StoreSession> session_;
  std::vector<DispatchRecord> records_;
  std::vector<LogItem> log_;
  size_t committed_ = 0;  // the log position after the last finished page
  uint64_t next_offset_ = 1;
  Epoch epoch_{1};
  Model model_;
};

std::optional<uint64_t> env_number(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  if (v == nullptr) return std::nullopt;
  return std::strtoull(v, nullptr, 10);
}

class ContractPropertyTest : public ::testing::TestWithParam<BackendFixture> {};

TEST_P(ContractPropertyTest, RandomRunsAgreeWithTheModel) {
  if (auto why = GetParam().unavailable()) GTEST_SKIP() << *why;
  std::vector<uint64_t> seeds;
  if (auto seed = env_number("QIM_PROPERTY_SEED")) {
    seeds.push_back(*seed);
  } else {
    const uint64_t runs = env_number("QIM_PROPERTY_RUNS").value_or(GetParam().property_runs);
    for (uint64_t s = 1; s <= runs; ++s) seeds.push_back(s);
  }
  for (uint64_t seed : seeds) {
    SCOPED_TRACE("QIM_PROPERTY_SEED=" + std::to_string(seed));
    Simulation(GetParam(), seed).run();
    if (HasFailure()) break;  // one failing seed is enough to report
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ContractPropertyTest, ::testing::ValuesIn(contract_backends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace qim::test
