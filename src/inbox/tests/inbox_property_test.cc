// THE property of issue 38: unread counts and the conversation list are functions of the mailbox. Random
// histories of a shard's life are written through a real ContractStore whose sink is the inbox backend
// (the MailboxNode's path): new records, replays (repeated observations), pages split over several
// write calls, failed inbox writes (whole or half-way) retried, crashes between the entry writes and the
// frontier (a new process over the same data), owner changes (the old epoch's entries above its frontier
// must stay hidden), a stale owner still writing and finishing pages at its old epoch, concurrent READs of
// one user from two devices, time passing with retention sweeps. After every step, for every user and
// conversation: unread(user, c) equals a scan of read_mailbox from zero (the unread rule applied to the
// visible entries above the read mark), and the conversation list's last entries equal the scan's, in
// its order (the activity index, docs/adr/0089, against a full sort of the scan), whole and in pages of
// 1 to 3. While new activity arrives between pages, every page still equals the scan of its moment below
// its `before`, no conversation shows twice, and every one is shown or has moved above the first page.
//
// Seeded; a failure names its seed. QIM_PROPERTY_SEED=<n> replays one history, QIM_PROPERTY_RUNS=<n>
// changes how many each backend runs.
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "inbox/tests/inbox_suite.h"
#include "inbox/unread_rule.h"

namespace qim::test {
namespace {

constexpr int kSteps = 70;
constexpr int kUsers = 5;

struct LogItem {
  uint64_t offset;
  size_t record;
};

struct ConversationSpec {
  ConversationId id;
  std::vector<UserId> members;
};

class History {
 public:
  History(const InboxFixture& fixture, uint64_t seed) : rng_(seed), fixture_(fixture) {
    clock_ = std::make_shared<ManualClock>(20'000 * kDayMs);
    context_.shards = *ShardMap::create(2);
    context_.clock = clock_;
    context_.retention_ms = 2 * kDayMs;
    for (int i = 0; i < kUsers; ++i) users_.push_back(user_in_shard(context_.shards, kInboxShard, i));
    for (int a = 0; a < kUsers; ++a) {
      for (int b = a + 1; b < kUsers; ++b) {
        conversations_.push_back({*direct_conversation(users_[a], users_[b]), {users_[a], users_[b]}});
      }
    }
    conversations_.push_back(
        {Conversation::group(*GroupId::parse("team"))->id(), {users_[0], users_[1], users_[2], users_[3]}});
    conversations_.push_back(
        {Conversation::group(*GroupId::parse("ops"))->id(), {users_[1], users_[2], users_[4]}});
    session_ = std::make_unique<InboxSession>(fixture, context_);
  }

  void run() {
    ASSERT_TRUE(is_ok(session_->start()));
    // users_[4] never sends receipts: it must never appear as a reader.
    ASSERT_TRUE(is_ok(session_->backend().put_setting(users_[4], "receipts", "off", 1)));
    for (int step = 0; step < kSteps && !::testing::Test::HasFailure(); ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      const int dice = pick(0, 99);
      if (dice < 28) {
        append_new_records();
      } else if (dice < 36) {
        append_repeat();
      } else if (dice < 64) {
        work_page();
      } else if (dice < 72) {
        crash_mid_page();
      } else if (dice < 76) {
        change_owner();
      } else if (dice < 82) {
        stale_owner_page();
      } else if (dice < 88) {
        concurrent_reads();
      } else if (dice < 94) {
        page_while_writing();
      } else {
        time_passes();
      }
      check();
    }
    while (committed_ < log_.size() && !::testing::Test::HasFailure()) work_page();
    check();
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  void append_new_records() {
    for (int n = pick(1, 6); n > 0; --n) {
      const ConversationSpec& c = conversations_[pick(0, static_cast<int>(conversations_.size()) - 1)];
      const UserId& sender = c.members[pick(0, static_cast<int>(c.members.size()) - 1)];
      const bool system = c.members.size() > 2 && pick(0, 9) == 0;
      const uint64_t id = records_.size() + 1;
      Message m = inbox_message(id, c.id, sender, clock_->now_ms(), system);
      std::vector<UserId> recipients = c.members;
      std::shuffle(recipients.begin(), recipients.end(), rng_);
      std::vector<std::vector<UserId>> chunks(pick(1, 2));
      for (size_t i = 0; i < recipients.size(); ++i) chunks[i % chunks.size()].push_back(recipients[i]);
      std::erase_if(chunks, [](const auto& ch) { return ch.empty(); });
      records_.push_back(make_record("r" + std::to_string(id), m, chunks));
      log_.push_back(LogItem{next_offset_++, records_.size() - 1});
    }
  }

  void append_repeat() {
    if (records_.empty()) return;
    log_.push_back(
        LogItem{next_offset_++, static_cast<size_t>(pick(0, static_cast<int>(records_.size()) - 1))});
  }

  size_t next_page_size(size_t from) {
    const size_t pending = log_.size() - from;
    const size_t limit = std::min<size_t>(pending, session_->store().finish_page_limit());
    return limit == 0 ? 0 : static_cast<size_t>(pick(1, static_cast<int>(limit)));
  }

  // Begins items [from, from + n) at `epoch` on `store`, writes what it asks (in random splits, stopping
  // early when `write_all` is false); returns the page to finish, or the first error.
  Result<std::vector<PageItem>> begin_and_write(MailboxStore& store, Epoch epoch, size_t from, size_t n,
                                                bool write_all) {
    QIM_ASSIGN_OR_RETURN(auto frontier, frontier_of(store, kInboxShard, epoch));
    MailboxSeq running = frontier;
    std::vector<PageItem> page;
    std::vector<ChunkWrite> writes;
    for (size_t i = 0; i < n; ++i) {
      const LogItem item = log_[from + i];
      const DispatchRecord& r = records_[item.record];
      QIM_ASSIGN_OR_RETURN(BeginOutcome begun,
                           store.begin_dispatch(kInboxShard, epoch, r.identity, Offset{item.offset}));
      if (begun.needs_entries) {
        auto w = chunk_writes(r);
        writes.insert(writes.end(), w.begin(), w.end());
      }
      const MailboxSeq observed = *compose(epoch, Offset{item.offset});
      page.push_back(PageItem{r.identity.id, uniform_advances(running, observed)});
      if (begun.canonical && begun.seq > running) running = observed;
    }
    std::shuffle(writes.begin(), writes.end(), rng_);
    const size_t until =
        write_all ? writes.size() : static_cast<size_t>(pick(0, static_cast<int>(writes.size())));
    for (size_t at = 0; at < until;) {
      const size_t k = static_cast<size_t>(pick(1, static_cast<int>(until - at)));
      QIM_RETURN_IF_ERROR(store.write_chunks(kInboxShard, epoch, std::span(writes).subspan(at, k)));
      at += k;
    }
    return page;
  }

  void work_page() {
    const size_t n = next_page_size(committed_);
    if (n == 0) return;
    const bool inject = pick(0, 9) == 0;
    if (inject) session_->sink().fail_next(1, pick(0, 1) == 1);
    auto page = begin_and_write(session_->store(), epoch_, committed_, n, true);
    if (!page.ok()) {
      ASSERT_TRUE(inject) << page.error().to_string();
      session_->sink().fail_next(0, false);
      // The worker retries the page later in this process, or a crash makes a new process replay it.
      if (pick(0, 1) == 0) {
        ASSERT_TRUE(is_ok(session_->restart()));
      }
      return;
    }
    session_->sink().fail_next(0, false);
    auto done = session_->store().finish_dispatch_page(kInboxShard, epoch_, *page);
    if (!done.ok() && done.code() == Errc::kWatermarkGap) {
      // A stale owner moved its old epoch's frontier after this owner cached it: the store dropped the
      // cache, and the worker begins the page again chaining on the stored frontier.
      page = begin_and_write(session_->store(), epoch_, committed_, n, true);
      ASSERT_TRUE(is_ok(page));
      done = session_->store().finish_dispatch_page(kInboxShard, epoch_, *page);
    }
    ASSERT_TRUE(is_ok(done));
    committed_ += n;
  }

  void crash_mid_page() {
    const size_t n = next_page_size(committed_);
    if (n > 0) (void)begin_and_write(session_->store(), epoch_, committed_, n, false);
    ASSERT_TRUE(is_ok(session_->restart()));
  }

  // A new owner takes the shard at the next epoch and replays from the last finished position. Where the
  // engine admits a second process, the old owner lives on for a while (stale_owner_page).
  void change_owner() {
    if (epoch_.value >= 6) return;
    stale_.reset();
    if (!fixture_.mailbox.limits.single_opener && pick(0, 1) == 0) {
      // The stale owner's process: its fence check never falls due (the manual clock), so it goes on
      // until it reads the new epoch's frontier.
      auto other = session_->open_another(FenceCheck{int64_t{1} << 40, 1u << 30});
      ASSERT_TRUE(is_ok(other));
      stale_ = std::move(*other);
      stale_epoch_ = epoch_;
      stale_committed_ = committed_;
    }
    ASSERT_TRUE(is_ok(session_->restart()));
    epoch_.value++;
  }

  // The stale owner begins, writes and finishes a page at its old epoch; once it learns of the new epoch
  // every call fails (EpochAhead) and it writes nothing more.
  void stale_owner_page() {
    if (!stale_) return;
    const size_t n = next_page_size(stale_committed_);
    if (n == 0) return;
    auto page = begin_and_write(*stale_->store, stale_epoch_, stale_committed_, n, pick(0, 2) > 0);
    if (!page.ok()) return;
    auto done = stale_->store->finish_dispatch_page(kInboxShard, stale_epoch_, *page);
    if (done.ok()) stale_committed_ += n;
  }

  // One user reads a conversation on two devices at once (two Inbox objects, two threads), each up to a
  // random seq: an entry of the scan, one above everything visible, or zero.
  void concurrent_reads() {
    const UserId& u = users_[pick(0, kUsers - 1)];
    auto scan = read_all(session_->store(), u);
    ASSERT_TRUE(is_ok(scan));
    if (scan->empty()) return;
    const ConversationId c = (*scan)[pick(0, static_cast<int>(scan->size()) - 1)].message.conversation;
    MailboxSeq last;
    for (const auto& e : *scan) {
      if (e.message.conversation == c) last = e.seq;
    }
    auto seq_pick = [&] {
      const int d = pick(0, 9);
      if (d == 0) return MailboxSeq::from_raw(~uint64_t{0} >> 1);
      return (*scan)[pick(0, static_cast<int>(scan->size()) - 1)].seq;
    };
    auto before = session_->backend().read_mark(u, c);
    ASSERT_TRUE(is_ok(before));
    const MailboxSeq s1 = seq_pick(), s2 = seq_pick();
    Inbox phone(session_->store(), session_->backend());
    Inbox laptop(session_->store(), session_->backend());
    Result<ReadOutcome> r1 = Error(Errc::kInvariant, "not run"), r2 = Error(Errc::kInvariant, "not run");
    std::thread t1([&] { r1 = phone.mark_read(u, c, s1); });
    std::thread t2([&] { r2 = laptop.mark_read(u, c, s2); });
    t1.join();
    t2.join();
    ASSERT_TRUE(is_ok(r1));
    ASSERT_TRUE(is_ok(r2));
    auto after = session_->backend().read_mark(u, c);
    ASSERT_TRUE(is_ok(after));
    const MailboxSeq want = std::max({*before, std::min(s1, last), std::min(s2, last)});
    EXPECT_EQ(*after, want) << "the mark is the highest of the clamped READs, never lower than before";
  }

  using ListView = std::vector<std::pair<MailboxSeq, ConversationId>>;

  // The scan's conversation list of `u`: each conversation's last visible entry, newest first.
  Result<ListView> scan_list(const UserId& u) {
    QIM_ASSIGN_OR_RETURN(auto scan, read_all(session_->store(), u));
    std::map<ConversationId, MailboxSeq> last;
    for (const MailboxEntry& e : scan) last[e.message.conversation] = e.seq;
    ListView out;
    for (const auto& [c, seq] : last) out.emplace_back(seq, c);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    return out;
  }

  // Pages through one user's list while new records are written and dispatched between pages.
  void page_while_writing() {
    const UserId& u = users_[pick(0, kUsers - 1)];
    const uint32_t limit = static_cast<uint32_t>(pick(1, 3));
    auto start = scan_list(u);
    ASSERT_TRUE(is_ok(start));
    const MailboxSeq top = start->empty() ? MailboxSeq() : start->front().first;
    std::set<ConversationId> shown;
    std::optional<MailboxSeq> before;
    for (int guard = 0; guard < 100; ++guard) {
      auto now = scan_list(u);
      ASSERT_TRUE(is_ok(now));
      ListView want;
      for (const auto& item : *now) {
        if (!before || item.first < *before) want.push_back(item);
      }
      const bool more = want.size() > limit;
      if (more) want.resize(limit);
      auto p = session_->inbox().conversations(u, before, limit);
      ASSERT_TRUE(is_ok(p));
      ListView got;
      for (const auto& s : p->items) {
        got.emplace_back(s.last.seq, s.conversation);
        EXPECT_TRUE(shown.insert(s.conversation).second) << s.conversation.str() << " shown twice";
      }
      ASSERT_EQ(got, want) << "a page against the scan of its moment, below "
                           << (before ? before->to_string() : "-");
      ASSERT_EQ(p->next_before.has_value(), more);
      if (!p->next_before) break;
      before = p->next_before;
      // New activity between two pages.
      if (pick(0, 1) == 0) append_new_records();
      work_page();
      if (::testing::Test::HasFailure()) return;
    }
    auto end = scan_list(u);
    ASSERT_TRUE(is_ok(end));
    for (const auto& [seq, c] : *end) {
      EXPECT_TRUE(shown.contains(c) || seq > top)
          << c.str() << " at " << seq.to_string() << " skipped by the pages";
    }
  }

  void time_passes() {
    clock_->advance_ms(pick(1, 36) * kDayMs / 24);  // 1 to 36 hours
    for (const UserId& u : users_) {
      auto swept = session_->store().sweep_retention(u);
      ASSERT_TRUE(is_ok(swept));
    }
  }

  void check() {
    if (::testing::Test::HasFailure()) return;
    Inbox& inbox = session_->inbox();
    InboxBackend& backend = session_->backend();
    for (const UserId& u : users_) {
      SCOPED_TRACE("user " + u.str());
      auto scan = read_all(session_->store(), u);
      ASSERT_TRUE(is_ok(scan));
      std::map<ConversationId, MailboxEntry> last;
      for (const MailboxEntry& e : *scan) last[e.message.conversation] = e;  // ascending: the last wins
      uint32_t unread_conversations = 0;
      std::map<ConversationId, uint32_t> expected_unread;
      for (const ConversationSpec& spec : conversations_) {
        const ConversationId& c = spec.id;
        auto mark = backend.read_mark(u, c);
        ASSERT_TRUE(is_ok(mark));
        uint32_t expected = 0;
        for (const MailboxEntry& e : *scan) {
          if (e.message.conversation == c && e.seq > *mark && counts_as_unread(e)) ++expected;
        }
        expected_unread[c] = expected;
        if (expected > 0) ++unread_conversations;
        auto got = inbox.unread(u, c);
        ASSERT_TRUE(is_ok(got));
        ASSERT_EQ(got->first, expected) << "unread of " << c.str() << " above " << mark->to_string();
        auto one = inbox.conversation(u, c);
        if (auto l = last.find(c); l != last.end()) {
          ASSERT_TRUE(is_ok(one));
          EXPECT_EQ(one->last.seq, l->second.seq) << c.str();
          EXPECT_EQ(one->last.message, l->second.message.id) << c.str();
          EXPECT_EQ(one->unread, expected);
        } else {
          EXPECT_TRUE(fails_with(one, Errc::kNotFound)) << c.str();
        }
      }
      // The whole list in one page, then in pages of 1 to 3: both the scan's last entries, newest first.
      std::vector<std::pair<MailboxSeq, ConversationId>> want;
      for (const auto& [c, e] : last) want.emplace_back(e.seq, c);
      std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      // The whole page from an Inbox summarising 8 conversations at once (as over a network engine).
      Inbox parallel(session_->store(), backend, InboxOptions{.page_parallelism = 8});
      auto page = parallel.conversations(u, std::nullopt, 200);
      ASSERT_TRUE(is_ok(page));
      EXPECT_EQ(page->unread_conversations, unread_conversations);
      std::vector<std::pair<MailboxSeq, ConversationId>> got;
      for (const auto& s : page->items) {
        got.emplace_back(s.last.seq, s.conversation);
        EXPECT_EQ(s.last.message, last[s.conversation].message.id);
        EXPECT_EQ(s.unread, expected_unread[s.conversation]) << s.conversation.str();
      }
      ASSERT_EQ(got, want) << "the conversation list against the scan";
      std::vector<std::pair<MailboxSeq, ConversationId>> paged;
      std::optional<MailboxSeq> before;
      const uint32_t limit = static_cast<uint32_t>(pick(1, 3));
      for (int guard = 0; guard < 100; ++guard) {
        auto p = inbox.conversations(u, before, limit);
        ASSERT_TRUE(is_ok(p));
        for (const auto& s : p->items) paged.emplace_back(s.last.seq, s.conversation);
        if (!p->next_before) break;
        before = p->next_before;
      }
      ASSERT_EQ(paged, want) << "paging by `before`, " << limit << " a page";
    }
    // Receipts: only members, never the user whose receipts are off.
    for (const ConversationSpec& spec : conversations_) {
      auto receipts = backend.receipts(spec.id, 100);
      ASSERT_TRUE(is_ok(receipts));
      for (const ReceiptMark& r : *receipts) {
        EXPECT_NE(r.user, users_[4]) << "receipts off";
        EXPECT_TRUE(std::find(spec.members.begin(), spec.members.end(), r.user) != spec.members.end())
            << r.user.str() << " is not a member of " << spec.id.str();
      }
    }
  }

  std::mt19937_64 rng_;
  const InboxFixture& fixture_;
  std::shared_ptr<ManualClock> clock_;
  BackendContext context_;
  std::vector<UserId> users_;
  std::vector<ConversationSpec> conversations_;
  std::unique_ptr<InboxSession> session_;
  std::unique_ptr<InboxProcess> stale_;
  Epoch stale_epoch_{1};
  size_t stale_committed_ = 0;
  std::deque<DispatchRecord> records_;
  std::vector<LogItem> log_;
  size_t committed_ = 0;
  uint64_t next_offset_ = 1;
  Epoch epoch_{1};
};

std::optional<uint64_t> env_number(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  if (v == nullptr) return std::nullopt;
  return std::strtoull(v, nullptr, 10);
}

class InboxPropertyTest : public ::testing::TestWithParam<InboxFixture> {};

TEST_P(InboxPropertyTest, CountsAndListEqualAScanOfTheMailbox) {
  if (auto why = GetParam().unavailable()) GTEST_SKIP() << *why;
  if (auto why = GetParam().mailbox.unavailable()) GTEST_SKIP() << *why;
  std::vector<uint64_t> seeds;
  if (auto seed = env_number("QIM_PROPERTY_SEED")) {
    seeds.push_back(*seed);
  } else {
    const uint64_t runs = env_number("QIM_PROPERTY_RUNS").value_or(GetParam().property_runs);
    for (uint64_t s = 1; s <= runs; ++s) seeds.push_back(s);
  }
  for (uint64_t seed : seeds) {
    SCOPED_TRACE("QIM_PROPERTY_SEED=" + std::to_string(seed));
    History(GetParam(), seed).run();
    if (HasFailure()) {
      std::printf("inbox property test (%s) failed with QIM_PROPERTY_SEED=%llu\n", GetParam().name.c_str(),
                  static_cast<unsigned long long>(seed));
      break;
    }
  }
  std::printf("inbox property test (%s): %zu seeded histories (seeds %llu..%llu)\n", GetParam().name.c_str(),
              seeds.size(), static_cast<unsigned long long>(seeds.front()),
              static_cast<unsigned long long>(seeds.back()));
}

INSTANTIATE_TEST_SUITE_P(Backends, InboxPropertyTest, ::testing::ValuesIn(inbox_backends()), fixture_name);

}  // namespace
}  // namespace qim::test
