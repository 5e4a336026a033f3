// The Redis inbox backend against a real redis-server (QIM_TEST_REDIS=host:port[,host:port]; skipped when
// unset), beside the redis mailbox backend it mirrors. Each test works under a key prefix of its own and
// deletes only that prefix afterwards.
#include "inbox/redis/redis_inbox_backend.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "inbox/open_inbox.h"
#include "inbox/redis/redis_inbox_keys.h"
#include "mailbox/redis/redis_backend.h"
#include "mailbox/redis/redis_connection.h"
#include "mailbox/redis/redis_test_env.h"

namespace qim {
namespace {

constexpr int64_t kStart = 20'000 * kDayMs;

MailboxSeq seq(uint32_t epoch, uint64_t offset) {
  return *compose(Epoch{epoch}, Offset{offset});
}
UserId user(const char* name) {
  return *UserId::parse(name);
}
const ConversationId kAB = *ConversationId::parse("d:alice:bob");
const ConversationId kAC = *ConversationId::parse("d:alice:carol");

MailboxEntry entry(const UserId& owner, const ConversationId& c, MailboxSeq s, const UserId& sender,
                   uint64_t id, std::string client_msg_id = "c") {
  Message m;
  m.id = MessageId{id};
  m.conversation = c;
  m.sender = sender;
  m.sender_device = *DeviceId::parse("d1");
  m.client_msg_id = std::move(client_msg_id);
  m.server_time_ms = kStart;
  m.body = "body " + std::to_string(id);
  return MailboxEntry{owner, s, std::move(m)};
}

class RedisInboxBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoints_ = test_redis_endpoints();
    if (endpoints_.empty()) GTEST_SKIP() << kTestRedisSkipMessage;
    prefix_ = unique_test_prefix(::testing::UnitTest::GetInstance()->current_test_info()->name());
    context_.shards = *ShardMap::create(4);
    context_.clock = clock_;
    context_.retention_ms = 2 * kDayMs;
    backend_ = open();
  }
  void TearDown() override {
    if (!prefix_.empty()) {
      auto cleaned = delete_test_prefix(endpoints_, prefix_);
      EXPECT_TRUE(cleaned.ok()) << cleaned.error().to_string();
    }
  }

  std::unique_ptr<InboxBackend> open() {
    RedisInboxOptions options;
    options.endpoints = endpoints_;
    options.key_prefix = prefix_;
    auto backend = open_redis_inbox_backend(context_, options);
    EXPECT_TRUE(backend.ok()) << backend.error().to_string();
    return backend.ok() ? std::move(backend).value() : nullptr;
  }

  void write(std::vector<MailboxEntry> entries) {
    auto s = backend_->entries_written(ShardId{0}, Epoch{0}, entries);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
  }
  uint32_t unread(const UserId& u, const ConversationId& c, MailboxSeq after = MailboxSeq(),
                  MailboxSeq upto = MailboxSeq::from_raw(~uint64_t{0}), uint32_t cap = 999) {
    auto n = backend_->count_unread(u, c, after, upto, cap);
    EXPECT_TRUE(n.ok()) << n.error().to_string();
    return n.ok() ? *n : 0;
  }
  std::vector<MailboxSeq> index(const UserId& u, const ConversationId& c, MailboxSeq after = MailboxSeq(),
                                MailboxSeq upto = MailboxSeq::from_raw(~uint64_t{0}), uint32_t limit = 1000) {
    auto rows = backend_->index_rows_desc(u, c, after, upto, limit);
    EXPECT_TRUE(rows.ok()) << rows.error().to_string();
    std::vector<MailboxSeq> out;
    if (rows.ok()) {
      for (const auto& r : *rows) out.push_back(r.seq);
    }
    return out;
  }
  std::map<std::string, MailboxSeq> rows(const UserId& u) {
    auto all = backend_->conversation_rows(u);
    EXPECT_TRUE(all.ok()) << all.error().to_string();
    std::map<std::string, MailboxSeq> out;
    if (all.ok()) {
      for (const auto& r : *all) out[r.conversation.str()] = r.last.seq;
    }
    return out;
  }

  std::vector<std::string> endpoints_;
  std::string prefix_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kStart);
  BackendContext context_;
  std::unique_ptr<InboxBackend> backend_;
  const UserId alice_ = user("alice"), bob_ = user("bob"), carol_ = user("carol");
};

TEST_F(RedisInboxBackendTest, IndexRowsCountsAndRows) {
  write({entry(alice_, kAB, seq(0, 1), bob_, 11), entry(alice_, kAB, seq(0, 2), alice_, 12),
         entry(alice_, kAB, seq(0, 3), bob_, 13, "~group-op"), entry(alice_, kAB, seq(0, 4), bob_, 14),
         entry(alice_, kAC, seq(0, 5), carol_, 15)});
  // Only bob's ordinary messages count: not alice's own, not a system entry.
  EXPECT_EQ(unread(alice_, kAB), 2u);
  EXPECT_EQ(unread(alice_, kAB, seq(0, 1)), 1u);
  EXPECT_EQ(unread(alice_, kAB, seq(0, 1), seq(0, 3)), 0u);
  EXPECT_EQ(unread(alice_, kAB, MailboxSeq(), seq(0, 4), 1), 1u);  // the cap
  EXPECT_EQ(index(alice_, kAB), (std::vector{seq(0, 4), seq(0, 3), seq(0, 2), seq(0, 1)}));
  EXPECT_EQ(index(alice_, kAB, seq(0, 1), seq(0, 3)), (std::vector{seq(0, 3), seq(0, 2)}));
  EXPECT_EQ(index(alice_, kAB, MailboxSeq(), seq(0, 4), 2), (std::vector{seq(0, 4), seq(0, 3)}));
  EXPECT_EQ(rows(alice_),
            (std::map<std::string, MailboxSeq>{{kAB.str(), seq(0, 4)}, {kAC.str(), seq(0, 5)}}));

  auto all = backend_->index_rows_desc(alice_, kAB, seq(0, 3), seq(0, 4), 10);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  const InboxEntryRef want{seq(0, 4), MessageId{14}, bob_, kStart, true, "body 14"};
  EXPECT_EQ(all->front(), want);
  auto listed = backend_->conversation_rows(alice_);
  ASSERT_TRUE(listed.ok());
  for (const auto& r : *listed) {
    if (r.conversation == kAB) {
      EXPECT_EQ(r.last, want);
    }
  }
  EXPECT_TRUE(rows(bob_).empty());
  EXPECT_EQ(unread(bob_, kAB), 0u);
}

TEST_F(RedisInboxBackendTest, ReplaysAndLowerSeqsChangeNothing) {
  const std::vector<MailboxEntry> page = {entry(alice_, kAB, seq(1, 5), bob_, 5),
                                          entry(alice_, kAB, seq(1, 6), bob_, 6)};
  write(page);
  write(page);                                      // a replay
  write({entry(alice_, kAB, seq(1, 2), bob_, 2)});  // a late lower entry: indexed, but the row stays
  EXPECT_EQ(rows(alice_), (std::map<std::string, MailboxSeq>{{kAB.str(), seq(1, 6)}}));
  write({page[1]});
  EXPECT_EQ(unread(alice_, kAB), 3u);
  EXPECT_EQ(index(alice_, kAB), (std::vector{seq(1, 6), seq(1, 5), seq(1, 2)}));
  EXPECT_EQ(rows(alice_), (std::map<std::string, MailboxSeq>{{kAB.str(), seq(1, 6)}}));
}

// Seqs with high epochs are above 2^53, where doubles cannot tell neighbours apart: every comparison (the
// row's maximum, the range bounds, the read mark) must still be exact.
TEST_F(RedisInboxBackendTest, SeqsAbove2To53AreExact) {
  const MailboxSeq a = seq(40000, 1000), b = seq(40000, 1001);
  ASSERT_EQ(static_cast<double>(a.raw()), static_cast<double>(b.raw()));
  write({entry(alice_, kAB, b, bob_, 2), entry(alice_, kAB, a, bob_, 1)});
  EXPECT_EQ(rows(alice_)[kAB.str()], b);
  EXPECT_EQ(unread(alice_, kAB, a), 1u);
  EXPECT_EQ(unread(alice_, kAB, MailboxSeq(), a), 1u);
  EXPECT_EQ(index(alice_, kAB, a, b), std::vector{b});

  ASSERT_TRUE(backend_->raise_read_mark(alice_, kAB, b).ok());
  ASSERT_TRUE(backend_->raise_read_mark(alice_, kAB, a).ok());  // lower by one: ignored
  EXPECT_EQ(*backend_->read_mark(alice_, kAB), b);
}

TEST_F(RedisInboxBackendTest, ReadMarksOnlyRise) {
  EXPECT_EQ(*backend_->read_mark(alice_, kAB), MailboxSeq());
  ASSERT_TRUE(backend_->raise_read_mark(alice_, kAB, seq(0, 9)).ok());
  ASSERT_TRUE(backend_->raise_read_mark(alice_, kAB, seq(0, 3)).ok());
  ASSERT_TRUE(backend_->raise_read_mark(alice_, kAC, seq(1, 1)).ok());
  ASSERT_TRUE(backend_->raise_read_mark(alice_, kAC, seq(1, 2)).ok());
  EXPECT_EQ(*backend_->read_mark(alice_, kAB), seq(0, 9));
  auto marks = backend_->read_marks(alice_);
  ASSERT_TRUE(marks.ok());
  std::map<std::string, MailboxSeq> got;
  for (const auto& m : *marks) got[m.conversation.str()] = m.seq;
  EXPECT_EQ(got, (std::map<std::string, MailboxSeq>{{kAB.str(), seq(0, 9)}, {kAC.str(), seq(1, 2)}}));
  EXPECT_TRUE(backend_->read_marks(bob_)->empty());
}

TEST_F(RedisInboxBackendTest, ReceiptsOnlyRiseAndAreBounded) {
  const MessageId low{(uint64_t{5} << 48) | 7}, high{(uint64_t{5} << 48) | 8};
  ASSERT_TRUE(backend_->raise_receipt(kAB, bob_, high).ok());
  ASSERT_TRUE(backend_->raise_receipt(kAB, bob_, low).ok());
  ASSERT_TRUE(backend_->raise_receipt(kAB, alice_, low).ok());
  auto all = backend_->receipts(kAB, 10);
  ASSERT_TRUE(all.ok());
  std::map<std::string, uint64_t> got;
  for (const auto& r : *all) got[r.user.str()] = r.read_through.value;
  EXPECT_EQ(got, (std::map<std::string, uint64_t>{{"alice", low.value}, {"bob", high.value}}));
  EXPECT_EQ(backend_->receipts(kAB, 1)->size(), 1u);
  EXPECT_TRUE(backend_->receipts(kAC, 10)->empty());
}

TEST_F(RedisInboxBackendTest, SettingsAreLastWriterWinsByVersion) {
  ASSERT_TRUE(backend_->put_setting(alice_, "receipts", "off", 2000).ok());
  ASSERT_TRUE(backend_->put_setting(alice_, "receipts", "on", 1000).ok());  // older: ignored
  ASSERT_TRUE(backend_->put_setting(alice_, "presence", "contacts", 5).ok());
  ASSERT_TRUE(backend_->put_setting(alice_, "presence", "nobody", 6).ok());
  EXPECT_EQ(*backend_->settings(alice_),
            (std::map<std::string, std::string>{{"presence", "nobody"}, {"receipts", "off"}}));
  EXPECT_TRUE(backend_->settings(bob_)->empty());
  EXPECT_EQ(backend_->put_setting(alice_, "receipts", "on", int64_t{1} << 48).code(), Errc::kInvalidArgument);
  EXPECT_EQ(backend_->put_setting(alice_, "receipts", "on", -1).code(), Errc::kInvalidArgument);
  EXPECT_EQ(backend_->put_setting(alice_, "", "on", 1).code(), Errc::kInvalidArgument);
}

// Index rows expire when the mailbox's entries do (the store's clock, entry_ttl_ms); a conversation row
// whose entry expired falls back to the highest live index row, or disappears.
TEST_F(RedisInboxBackendTest, RowsExpireWithTheEntries) {
  const int64_t ttl = context_.entry_ttl_ms();
  write({entry(alice_, kAB, seq(0, 2), bob_, 2), entry(alice_, kAC, seq(0, 3), carol_, 3)});
  clock_->advance_ms(ttl / 2);
  write({entry(alice_, kAB, seq(0, 1), bob_, 1)});  // a replay of an older entry, later: lives longer
  clock_->advance_ms(ttl / 2 - 1);
  EXPECT_EQ(unread(alice_, kAB), 2u);
  clock_->advance_ms(1);  // seq 2 and 3 expire now (expiry = write time + TTL: gone at that instant)
  EXPECT_EQ(unread(alice_, kAB), 1u);
  EXPECT_EQ(index(alice_, kAB), std::vector{seq(0, 1)});
  EXPECT_EQ(rows(alice_), (std::map<std::string, MailboxSeq>{{kAB.str(), seq(0, 1)}}));
  clock_->advance_ms(ttl);
  EXPECT_TRUE(rows(alice_).empty());
  EXPECT_EQ(unread(alice_, kAB), 0u);
  EXPECT_TRUE(index(alice_, kAB).empty());
}

// One script call per instance per entries_written call, no read, one insert per index row.
TEST_F(RedisInboxBackendTest, WritesAreOneScriptPerInstanceAndNoReads) {
  std::vector<MailboxEntry> page;
  std::set<size_t> instances;
  for (int i = 0; i < 40; ++i) {
    const UserId u = *UserId::parse("user" + std::to_string(i));
    instances.insert(context_.shards.shard_of(u).value % endpoints_.size());
    page.push_back(entry(u, kAB, seq(0, static_cast<uint64_t>(i + 1)), bob_, static_cast<uint64_t>(i)));
  }
  const OpCounts before = backend_->counters().snapshot();
  write(page);
  const OpCounts d = backend_->counters().snapshot() - before;
  EXPECT_EQ(d.scripts, instances.size());
  EXPECT_EQ(d.reads, 0u);
  EXPECT_EQ(d.inserts, page.size());
  EXPECT_EQ(d.lwts, 0u);
  EXPECT_EQ(d.updates, 0u);
}

// More than 128 entries for one instance: several calls, still one pipeline (one round trip).
TEST_F(RedisInboxBackendTest, LargePagesAreSplitIntoCallsOf128) {
  std::vector<MailboxEntry> page;
  for (uint64_t i = 1; i <= 300; ++i) page.push_back(entry(alice_, kAB, seq(2, i), bob_, i));
  const OpCounts before = backend_->counters().snapshot();
  write(page);
  const OpCounts d = backend_->counters().snapshot() - before;
  EXPECT_EQ(d.scripts, 3u);
  EXPECT_EQ(d.inserts, 300u);
  EXPECT_EQ(unread(alice_, kAB), 300u);
  EXPECT_EQ(unread(alice_, kAB, seq(2, 100), seq(2, 250), 999), 150u);
  EXPECT_EQ(rows(alice_)[kAB.str()], seq(2, 300));
}

// Two devices READ at once, in any order: the mark ends at the highest, never lower.
TEST_F(RedisInboxBackendTest, ConcurrentReadsKeepTheHighestMark) {
  std::vector<std::thread> devices;
  for (int d = 0; d < 4; ++d) {
    devices.emplace_back([&, d] {
      std::mt19937 rng(static_cast<unsigned>(d));
      for (int i = 0; i < 50; ++i) {
        const auto s = backend_->raise_read_mark(alice_, kAB, seq(3, 1 + rng() % 1000));
        EXPECT_TRUE(s.ok()) << s.error().to_string();
      }
      EXPECT_TRUE(backend_->raise_read_mark(alice_, kAB, seq(3, 1000 + static_cast<uint64_t>(d))).ok());
    });
  }
  for (auto& t : devices) t.join();
  EXPECT_EQ(*backend_->read_mark(alice_, kAB), seq(3, 1003));
}

// A user's inbox keys are on the instance of the user's shard, as the user's mailbox entries.
TEST_F(RedisInboxBackendTest, UserKeysLiveOnTheMailboxInstanceOfTheUser) {
  if (endpoints_.size() < 2) GTEST_SKIP() << "needs two instances in QIM_TEST_REDIS";
  auto mailbox = open_redis_backend_with_prefix(context_, endpoints_, prefix_);
  ASSERT_TRUE(mailbox.ok()) << mailbox.error().to_string();
  const std::vector<MailboxEntry> page = {entry(alice_, kAB, seq(0, 1), bob_, 1)};
  ASSERT_TRUE((*mailbox)->write_entries(ShardId{0}, Epoch{0}, page).ok());
  write(page);
  const RedisInboxKeys keys(prefix_);
  for (const auto& text : endpoints_) {
    auto conn = RedisConnection::open(*RedisEndpoint::parse(text), RedisTimeouts{});
    ASSERT_TRUE(conn.ok());
    const int64_t mailbox_here = (*conn)->run({"EXISTS", prefix_ + "mb:alice"})->integer;
    EXPECT_EQ((*conn)->run({"EXISTS", keys.rows(alice_)})->integer, mailbox_here) << text;
    EXPECT_EQ((*conn)->run({"EXISTS", keys.index(alice_, kAB)})->integer, mailbox_here) << text;
  }
}

// Random histories beside the redis mailbox backend: replays, lower late entries, several epochs, time
// passing beyond the TTL. After each step, every count and index read equals a scan of read_entries.
TEST_F(RedisInboxBackendTest, CountsEqualAScanOfTheMailbox) {
  auto mailbox_or = open_redis_backend_with_prefix(context_, endpoints_, prefix_);
  ASSERT_TRUE(mailbox_or.ok()) << mailbox_or.error().to_string();
  StoreBackend& mailbox = **mailbox_or;
  std::mt19937 rng(38);
  const std::vector<UserId> users = {alice_, bob_, carol_};
  const std::vector<ConversationId> convs = {kAB, kAC, *ConversationId::parse("d:bob:carol")};
  std::vector<MailboxEntry> written;
  uint64_t offset = 1;
  uint32_t epoch = 0;
  for (int step = 0; step < 60; ++step) {
    std::vector<MailboxEntry> page;
    const int kind = static_cast<int>(rng() % 10);
    if (kind == 0 && !written.empty()) {
      for (int i = 0; i < 3; ++i) page.push_back(written[rng() % written.size()]);  // replays
    } else {
      if (kind == 1) epoch += 1 + rng() % 3000;  // a new owner (epochs far above 2^53 / 2^48)
      for (int i = 0; i < 1 + static_cast<int>(rng() % 4); ++i) {
        const UserId& owner = users[rng() % users.size()];
        const UserId& sender = users[rng() % users.size()];
        const uint64_t at = offset++;
        page.push_back(entry(owner, convs[rng() % convs.size()], seq(epoch, at), sender, at,
                             rng() % 5 == 0 ? "~op" : "c"));
      }
      written.insert(written.end(), page.begin(), page.end());
    }
    ASSERT_TRUE(mailbox.write_entries(ShardId{0}, Epoch{epoch}, page).ok());
    write(page);
    if (rng() % 6 == 0) clock_->advance_ms(static_cast<int64_t>(rng() % 3) * kDayMs / 2);

    // Counts first: each read path must drop expired rows on its own.
    for (const auto& u : users) {
      auto scan = mailbox.read_entries(u, MailboxSeq(), MailboxSeq::from_raw(~uint64_t{0}), 100000);
      ASSERT_TRUE(scan.ok());
      std::map<std::string, MailboxSeq> last;
      for (const auto& c : convs) {
        std::vector<MailboxSeq> want_index;
        uint32_t want_unread = 0;
        // From zero (what expired must not count) or from the middle (a read mark).
        const MailboxSeq after =
            scan->empty() || step % 2 == 0 ? MailboxSeq() : (*scan)[scan->size() / 2].seq;
        for (auto it = scan->rbegin(); it != scan->rend(); ++it) {
          if (it->message.conversation != c) continue;
          want_index.push_back(it->seq);
          if (!last.contains(c.str())) last[c.str()] = it->seq;
          if (it->seq > after && it->message.sender != u && !it->message.client_msg_id.starts_with("~")) {
            ++want_unread;
          }
        }
        EXPECT_EQ(unread(u, c, after), want_unread)
            << "step " << step << " user " << u.str() << " " << c.str();
        EXPECT_EQ(index(u, c), want_index) << "step " << step << " user " << u.str() << " " << c.str();
      }
      EXPECT_EQ(rows(u), last) << "step " << step << " user " << u.str();
    }
  }
}

// open_inbox's redis branch: the mailbox store's instances and prefix (QIM_MAILBOX_REDIS,
// QIM_MAILBOX_REDIS_PREFIX), the same keys this backend opened directly sees.
// read_batch (docs/adr/0153) answers what the single calls answer, in at most two round trips per
// instance; a receipts hash longer than one HSCAN page is still read whole (up to the limit).
TEST_F(RedisInboxBackendTest, ReadBatchAnswersAsTheSingleCallsInFewRoundTrips) {
  const ConversationId group = *ConversationId::parse("g:big");
  write({entry(alice_, kAB, seq(0, 1), bob_, 11), entry(alice_, kAB, seq(0, 2), bob_, 12),
         entry(alice_, kAB, seq(0, 3), alice_, 13), entry(alice_, kAC, seq(0, 4), carol_, 14),
         entry(bob_, kAB, seq(0, 5), alice_, 15)});
  ASSERT_TRUE(backend_->put_setting(bob_, "receipts", "off", 1).ok());
  ASSERT_TRUE(backend_->raise_receipt(kAB, bob_, MessageId{12}).ok());
  for (int i = 0; i < 300; ++i) {  // several HSCAN pages
    ASSERT_TRUE(
        backend_->raise_receipt(group, UserId::unchecked("u" + std::to_string(i)), MessageId{9}).ok());
  }
  const MailboxSeq all = MailboxSeq::from_raw(~uint64_t{0});
  BatchReads reads;
  reads.counts = {{alice_, kAB, MailboxSeq(), all, 999},
                  {alice_, kAB, seq(0, 1), all, 999},
                  {alice_, kAB, MailboxSeq(), all, 1},
                  {alice_, kAC, MailboxSeq(), all, 0},
                  {alice_, kAC, seq(0, 4), seq(0, 4), 9}};
  reads.index = {{alice_, kAB, MailboxSeq(), all, 2},
                 {bob_, kAB, MailboxSeq(), all, 1},
                 {carol_, kAC, MailboxSeq(), all, 1}};
  reads.settings = {bob_, carol_};
  reads.receipts = {kAB, group, kAC};
  reads.receipts_limit = 250;
  const uint64_t before = backend_->round_trips();
  auto batch = backend_->read_batch(reads, 1);
  const uint64_t cost = backend_->round_trips() - before;
  ASSERT_TRUE(batch.ok()) << batch.error().to_string();
  ASSERT_EQ(batch->counts.size(), reads.counts.size());
  for (size_t i = 0; i < reads.counts.size(); ++i) {
    const CountQuery& q = reads.counts[i];
    EXPECT_EQ(batch->counts[i], unread(q.user, q.conversation, q.after, q.upto, q.cap)) << i;
  }
  EXPECT_EQ(batch->counts, (std::vector<uint32_t>{2, 1, 1, 0, 0}));
  ASSERT_EQ(batch->index.size(), reads.index.size());
  for (size_t i = 0; i < reads.index.size(); ++i) {
    const IndexQuery& q = reads.index[i];
    auto single = backend_->index_rows_desc(q.user, q.conversation, q.after, q.upto, q.limit);
    ASSERT_TRUE(single.ok());
    EXPECT_EQ(batch->index[i], *single) << i;
  }
  EXPECT_EQ(batch->index[0].size(), 2u);
  EXPECT_TRUE(batch->index[2].empty());
  ASSERT_EQ(batch->settings.size(), 2u);
  EXPECT_EQ(batch->settings[0].at("receipts"), "off");
  EXPECT_TRUE(batch->settings[1].empty());
  ASSERT_EQ(batch->receipts.size(), 3u);
  ASSERT_EQ(batch->receipts[0].size(), 1u);
  EXPECT_EQ(batch->receipts[0][0].user, bob_);
  EXPECT_EQ(batch->receipts[0][0].read_through, MessageId{12});
  EXPECT_EQ(batch->receipts[1].size(), 250u) << "the group's hash past its first HSCAN page";
  EXPECT_TRUE(batch->receipts[2].empty());
  // Two pipelines per instance at most, and the group's receipts finished page by page (a few more).
  EXPECT_LE(cost, 2 * endpoints_.size() + 5);
  // Without the long hash: two pipelines per instance at most.
  reads.receipts = {kAB, kAC};
  const uint64_t again = backend_->round_trips();
  ASSERT_TRUE(backend_->read_batch(reads, 1).ok());
  EXPECT_LE(backend_->round_trips() - again, 2 * endpoints_.size());
}

TEST_F(RedisInboxBackendTest, OpenInboxOpensTheRedisInboxOfTheRedisStore) {
  StoreOptions store;
  store.backend = "redis";
  store.redis_endpoints = endpoints_;
  store.redis_key_prefix = prefix_;
  store.shard_count = 4;
  store.clock = clock_;
  store.retention_ms = context_.retention_ms;
  auto opened = open_inbox(store, "");
  ASSERT_TRUE(opened.ok()) << opened.error().to_string();
  EXPECT_EQ((*opened)->name(), "redis");
  const std::vector<MailboxEntry> page = {entry(alice_, kAB, seq(0, 1), bob_, 1)};
  ASSERT_TRUE((*opened)->entries_written(ShardId{0}, Epoch{0}, page).ok());
  EXPECT_EQ(unread(alice_, kAB), 1u);
}

TEST_F(RedisInboxBackendTest, BadEndpointsAreRefused) {
  RedisInboxOptions options;
  options.key_prefix = prefix_;
  EXPECT_EQ(open_redis_inbox_backend(context_, options).code(), Errc::kConfig);
  options.endpoints = {"no-port"};
  EXPECT_EQ(open_redis_inbox_backend(context_, options).code(), Errc::kConfig);
  options.endpoints = {"127.0.0.1:42018"};  // nothing listens there (this slice's port range)
  options.connect_timeout = std::chrono::milliseconds(200);
  EXPECT_EQ(open_redis_inbox_backend(context_, options).code(), Errc::kTransport);
}

}  // namespace
}  // namespace qim
