// What the CQL inbox backend keeps beyond the backend contract suite (src/inbox/tests/): the write
// timestamps and TTLs it writes with, the epoch in the key, zero reads and LWT on the write path, the
// bounded count, and that a cell written by anything else (a wall-clock write) is refused on reading.
// Against QIM_TEST_CQL_HOSTS (skipped when unset); one keyspace per process, dropped at the end.
#include "inbox/cql/cql_inbox_backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "mailbox/scylla/cql_status.h"

namespace qim {
namespace {

std::optional<std::string> cql_hosts() {
  const char* v = std::getenv("QIM_TEST_CQL_HOSTS");  // NOLINT(concurrency-mt-unsafe): read in SetUp only
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

constexpr int64_t kTtlMs = 3 * 86'400'000LL + 500;  // rounded up to 259201 s

// The error code of a failed call, "ok" for a successful one (code() requires a failure).
template <typename R>
std::string code_of(const R& r) {
  return r.ok() ? std::string("ok") : std::string(errc_name(r.code()));
}
std::string name_of(Errc c) {
  return std::string(errc_name(c));
}

MailboxSeq seq(uint32_t epoch, uint64_t offset) {
  return *compose(Epoch{epoch}, Offset{offset});
}

class CqlInboxBackendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!cql_hosts()) return;
    keyspace_ = "inbox_cql_test_" + std::to_string(::getpid());
    auto admin = cql::Session::connect({.hosts = cql::split_hosts(*cql_hosts())});
    if (!admin.ok()) {
      error_ = admin.error().to_string();
      return;
    }
    admin_ = new cql::Session(std::move(admin).value());
    auto b = CqlInboxBackend::open(options());
    if (!b.ok()) {
      error_ = b.error().to_string();
      return;
    }
    backend_ = b->release();
  }
  static void TearDownTestSuite() {
    delete backend_;
    backend_ = nullptr;
    if (admin_) (void)admin_->query("DROP KEYSPACE IF EXISTS " + keyspace_, {}, {.timeout_ms = 60'000});
    delete admin_;
    admin_ = nullptr;
  }
  void SetUp() override {
    if (!cql_hosts()) GTEST_SKIP() << "QIM_TEST_CQL_HOSTS is unset: no CQL cluster to test the inbox against";
    ASSERT_TRUE(error_.empty()) << error_;
  }

  static CqlInboxOptions options() {
    CqlInboxOptions o;
    o.hosts = cql::split_hosts(cql_hosts().value_or(""));
    o.keyspace = keyspace_;
    o.request_timeout_ms = 15'000;
    o.entry_ttl_ms = kTtlMs;
    return o;
  }
  CqlInboxBackend& b() { return *backend_; }
  cql::Rows query(const std::string& text, const cql::Values& values = {}) {
    auto rows = admin_->query(text, values, {.consistency = cql::Consistency::kQuorum});
    EXPECT_TRUE(rows.ok()) << text << ": " << (rows.ok() ? "" : rows.error().to_string());
    return rows.ok() ? std::move(rows).value() : cql::Rows();
  }

  // An entry of `user`'s mailbox in d:alice:bob from `sender`.
  static MailboxEntry entry(const std::string& user, MailboxSeq s, const std::string& sender, uint64_t id,
                            std::string body = "hello") {
    MailboxEntry e;
    e.user = *UserId::parse(user);
    e.seq = s;
    e.message.id = MessageId{id};
    e.message.conversation = conv();
    e.message.sender = *UserId::parse(sender);
    e.message.server_time_ms = 1'800'000'000'000 + static_cast<int64_t>(id);
    e.message.body = std::move(body);
    return e;
  }
  static ConversationId conv() { return *ConversationId::parse("d:alice:bob"); }
  Status write(std::vector<MailboxEntry> entries) {
    return b().entries_written(ShardId{0}, entries.front().seq.epoch(), entries);
  }

  static inline std::string keyspace_, error_;
  static inline cql::Session* admin_ = nullptr;
  static inline CqlInboxBackend* backend_ = nullptr;
};

TEST_F(CqlInboxBackendTest, TheConversationRowIsTheHighestOffsetPerEpochWhateverTheOrderOfWrites) {
  const UserId bob = *UserId::parse("bob1");
  // Offset 30, then a late (replayed, retried or stale) write of offset 10: 30 stays.
  ASSERT_TRUE(write({entry("bob1", seq(1, 30), "alice", 130, "thirty")}).ok());
  ASSERT_TRUE(write({entry("bob1", seq(1, 10), "alice", 110, "ten")}).ok());
  // A later epoch's lower offset is a row of its own (the epoch is in the key, never in the timestamp).
  ASSERT_TRUE(write({entry("bob1", seq(2, 5), "alice", 205, "five")}).ok());
  // The list sees the highest epoch's row (the highest seq), as from an engine that keeps one row.
  auto rows = b().conversation_rows(bob);
  ASSERT_TRUE(rows.ok()) << rows.error().to_string();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().last.seq, seq(2, 5));
  EXPECT_EQ(rows->front().last.preview, "five");
  EXPECT_EQ(rows->front().last.message, MessageId{205});
  EXPECT_TRUE(rows->front().last.counts);

  // Both epochs' rows are kept: epoch 1's at offset 30 despite the later write of 10. The timestamps are
  // the offsets; the epoch's bits never reach them.
  cql::Rows t = query("SELECT epoch, last_offset, WRITETIME(last_offset), TTL(preview), preview FROM " +
                      keyspace_ + ".inbox_user WHERE user_id = 'bob1' AND kind = 1");
  ASSERT_EQ(t.size(), 2u);
  for (const cql::Row r : t) {
    const int64_t expected = *r.get_i32(0) == 1 ? 30 : 5;
    EXPECT_EQ(*r.get_i64(1), expected);
    EXPECT_EQ(*r.get_i64(2), expected);
    if (expected == 30) {
      EXPECT_EQ(r.render(4), "0x746869727479");  // "thirty"
    }
    EXPECT_GT(*r.get_i32(3), 259'101);  // the entries' TTL, rounded up to seconds
    EXPECT_LE(*r.get_i32(3), 259'201);
  }
}

TEST_F(CqlInboxBackendTest, OneCallRaisesEachRowOnceWithoutReadsOrLwt) {
  const OpCounts before = b().counters().snapshot();
  std::vector<MailboxEntry> page;
  for (uint64_t o = 1; o <= 40; ++o)
    page.push_back(entry(o % 2 ? "carol" : "dave", seq(3, 100 + o), "alice", o));
  ASSERT_TRUE(write(page).ok());
  const OpCounts d = b().counters().snapshot() - before;
  EXPECT_EQ(d.inserts, 42u);  // one index row per entry, one position per conversation row
  EXPECT_EQ(d.updates, 2u);   // one conversation row per (user, conversation, epoch)
  EXPECT_EQ(d.reads, 0u);
  EXPECT_EQ(d.lwts, 0u);
  auto carol = b().conversation_rows(*UserId::parse("carol"));
  ASSERT_TRUE(carol.ok());
  ASSERT_EQ(carol->size(), 1u);
  EXPECT_EQ(carol->front().last.seq, seq(3, 139));
  // Index rows carry the entries' TTL, as mailbox_entry does.
  cql::Rows t = query("SELECT TTL(message_id) FROM " + keyspace_ +
                      ".inbox_user WHERE user_id = 'carol' AND kind = 0 AND conversation = 'd:alice:bob'");
  ASSERT_EQ(t.size(), 20u);
  for (const cql::Row r : t) EXPECT_GT(*r.get_i32(0), 259'101);
}

// Decision 0169: what one call writes for a user (its index rows, the conversation row, its position) is
// one mutation of one partition: the engine applies one write per user, not one per table and row. The
// count is the engine's own (system_views.local_write_latency), over the keyspace's every table.
TEST_F(CqlInboxBackendTest, AUsersRowsOfOneCallAreOneWrite) {
  auto local_writes = [&] {
    int64_t n = 0;
    for (const cql::Row r :
         query("SELECT count FROM system_views.local_write_latency WHERE keyspace_name = ?",
               cql::Values().text(keyspace_)))
      n += *r.get_i64(0);
    return n;
  };
  const int64_t before = local_writes();
  // 25 users, one entry each, and one user with 3 entries of one conversation: 3 * 25 + 5 statements,
  // more than two batches of 32, none of a user's split.
  std::vector<MailboxEntry> page;
  for (uint64_t u = 0; u < 25; ++u)
    page.push_back(entry("w" + std::to_string(u), seq(1, 10 + u), "alice", u));
  for (uint64_t o = 0; o < 3; ++o) page.push_back(entry("wz", seq(1, 50 + o), "alice", 50 + o));
  ASSERT_TRUE(write(page).ok());
  EXPECT_EQ(local_writes() - before, 26) << "one write per user of the call";
}

TEST_F(CqlInboxBackendTest, PositionsAreWrittenAtTheirOffsetAndStaleOnesDeletedAtIt) {
  const UserId fay = *UserId::parse("fay");
  const MailboxSeq none = MailboxSeq::from_raw(~uint64_t{0});
  // Two calls raise the row: two positions, the lower one stale. A later epoch's lower offset sorts above.
  ASSERT_TRUE(write({entry("fay", seq(1, 5), "alice", 5)}).ok());
  ASSERT_TRUE(write({entry("fay", seq(1, 8), "alice", 8), entry("fay", seq(1, 9), "alice", 9)}).ok());
  ASSERT_TRUE(write({entry("fay", seq(2, 3), "alice", 23)}).ok());
  auto all = b().activity_desc(fay, MailboxSeq{}, none, 10);
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  EXPECT_EQ(*all,
            (std::vector<ActivityPosition>{{seq(2, 3), conv()}, {seq(1, 9), conv()}, {seq(1, 5), conv()}}))
      << "one position per conversation row raised by a call, newest first";
  auto some = b().activity_desc(fay, seq(1, 5), seq(2, 3), 10);  // both bounds exclusive
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(*some, (std::vector<ActivityPosition>{{seq(1, 9), conv()}}));
  auto rows =
      b().rows_of(fay, std::vector<ConversationId>{conv(), *ConversationId::parse("d:fay:zed"), conv()});
  ASSERT_TRUE(rows.ok()) << rows.error().to_string();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0]->seq, seq(2, 3)) << "the highest epoch's row";
  EXPECT_FALSE((*rows)[1]);
  EXPECT_EQ((*rows)[2]->seq, seq(2, 3));

  // The stale ones are deleted at their own timestamp, the offset they were written with (a position has
  // no regular column to read WRITETIME of; the tombstone shows it): a replay of the same position stays
  // shadowed, a write of that key at the next timestamp (no such write exists: a probe) is not, so the
  // tombstone is the offset, not a wall clock (which would shadow every later offset forever).
  ASSERT_TRUE(
      b().drop_stale_activity(fay, std::vector<ActivityPosition>{{seq(1, 9), conv()}, {seq(1, 5), conv()}})
          .ok());
  all = b().activity_desc(fay, MailboxSeq{}, none, 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (std::vector<ActivityPosition>{{seq(2, 3), conv()}}));
  ASSERT_TRUE(write({entry("fay", seq(1, 5), "alice", 5)}).ok());  // a replay
  all = b().activity_desc(fay, MailboxSeq{}, none, 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 1u) << "the replayed position is shadowed by its tombstone";
  query("INSERT INTO " + keyspace_ +
        ".inbox_user (user_id, kind, conversation, counts, epoch, log_offset, positioned) "
        "VALUES ('fay', 2, '', false, 1, 9, 'd:alice:bob') USING TIMESTAMP 10");
  all = b().activity_desc(fay, MailboxSeq{}, none, 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (std::vector<ActivityPosition>{{seq(2, 3), conv()}, {seq(1, 9), conv()}}))
      << "a write above the tombstone's timestamp (the offset 9) is not shadowed";
}

// A keyspace of inbox schema 2 (decision 0143's tables, as its binary wrote them) is copied into
// inbox_user at open: the list, the index and the count read the same, the TTLs carried over.
TEST_F(CqlInboxBackendTest, AKeyspaceOfTheOlderTablesIsCopiedAtOpen) {
  const UserId gil = *UserId::parse("gil");
  const std::string ks = keyspace_;
  query("CREATE TABLE IF NOT EXISTS " + ks +
        ".inbox_conversation (user_id text, conversation text, epoch int, log_offset bigint, message_id "
        "bigint, sender text, server_time_ms bigint, counts boolean, preview blob, PRIMARY KEY (user_id, "
        "conversation, epoch)) WITH CLUSTERING ORDER BY (conversation ASC, epoch DESC)");
  query("CREATE TABLE IF NOT EXISTS " + ks +
        ".inbox_index (user_id text, conversation text, counts boolean, epoch int, log_offset bigint, "
        "message_id bigint, sender text, server_time_ms bigint, preview blob, PRIMARY KEY ((user_id, "
        "conversation), counts, epoch, log_offset)) WITH CLUSTERING ORDER BY (counts DESC, epoch DESC, "
        "log_offset DESC)");
  // Two epochs: alice's 41 (counts) and gil's own 42 in epoch 1, alice's 7 in epoch 2.
  for (const auto& [epoch, offset, sender, counts] :
       {std::tuple(1, 41, "alice", "true"), std::tuple(1, 42, "gil", "false"),
        std::tuple(2, 7, "alice", "true")})
    query(fmt::format(
        "INSERT INTO {}.inbox_index (user_id, conversation, counts, epoch, log_offset, message_id, "
        "sender, server_time_ms, preview) VALUES ('gil', 'd:alice:bob', {}, {}, {}, {}, '{}', 1, "
        "0x6869) USING TTL 5000",
        ks, counts, epoch, offset, offset, sender));
  for (const auto& [epoch, offset, sender, counts] :
       {std::tuple(1, 42, "gil", "false"), std::tuple(2, 7, "alice", "true")})
    query(fmt::format(
        "INSERT INTO {}.inbox_conversation (user_id, conversation, epoch, log_offset, message_id, "
        "sender, server_time_ms, counts, preview) VALUES ('gil', 'd:alice:bob', {}, {}, {}, '{}', "
        "1, {}, 0x6869) USING TIMESTAMP {} AND TTL 5000",
        ks, epoch, offset, offset, sender, counts, offset));
  query("UPDATE " + ks + ".qim_schema_version SET version = 2 WHERE component = 'inbox'");

  auto reopened = CqlInboxBackend::open(options());
  ASSERT_TRUE(reopened.ok()) << reopened.error().to_string();
  CqlInboxBackend& r = **reopened;
  auto rows = r.conversation_rows(gil);
  ASSERT_TRUE(rows.ok()) << rows.error().to_string();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().last.seq, seq(2, 7));
  EXPECT_EQ(rows->front().last.preview, "hi");
  auto all = r.activity_desc(gil, MailboxSeq{}, MailboxSeq::from_raw(~uint64_t{0}), 10);
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  // Every epoch's row has its position (the lower one is stale, for the first reader to drop).
  EXPECT_EQ(*all, (std::vector<ActivityPosition>{{seq(2, 7), conv()}, {seq(1, 42), conv()}}));
  auto index = r.index_rows_desc(gil, conv(), MailboxSeq{}, seq(3, 0), 10);
  ASSERT_TRUE(index.ok()) << index.error().to_string();
  ASSERT_EQ(index->size(), 3u);
  EXPECT_EQ((*index)[1].seq, seq(1, 42));
  EXPECT_FALSE((*index)[1].counts);
  EXPECT_EQ((*index)[1].sender.str(), "gil");
  auto unread = r.count_unread(gil, conv(), MailboxSeq{}, seq(3, 0), 10);
  ASSERT_TRUE(unread.ok());
  EXPECT_EQ(*unread, 2u) << "alice's two, not gil's own";
  for (const cql::Row t :
       query("SELECT TTL(message_id) FROM " + ks + ".inbox_user WHERE user_id = 'gil' AND kind IN (0, 1)")) {
    EXPECT_LE(*t.get_i32(0), 5000) << "the remaining TTL, not a new one";
  }
  cql::Rows v = query("SELECT version FROM " + ks + ".qim_schema_version WHERE component = 'inbox'");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(*v.row(0).get_i32(0), 3) << "recorded once the rows are copied";
}

TEST_F(CqlInboxBackendTest, CountReadsOnlyCountingRowsAndStopsAtTheCap) {
  const UserId erin = *UserId::parse("erin");
  std::vector<MailboxEntry> page;
  // 50 of erin's own entries, then 7 from alice, then 3 system entries, in one epoch; 2 from alice in the
  // next.
  uint64_t o = 1;
  for (int i = 0; i < 50; ++i, ++o) page.push_back(entry("erin", seq(1, o), "erin", o));
  for (int i = 0; i < 7; ++i, ++o) page.push_back(entry("erin", seq(1, o), "alice", o));
  for (int i = 0; i < 3; ++i, ++o) {
    page.push_back(entry("erin", seq(1, o), "alice", o));
    page.back().message.client_msg_id = "~group-op";
  }
  ASSERT_TRUE(write(page).ok());
  ASSERT_TRUE(write({entry("erin", seq(2, 1), "alice", 1001), entry("erin", seq(2, 2), "alice", 1002)}).ok());

  auto count = [&](MailboxSeq after, MailboxSeq upto, uint32_t cap) {
    auto n = b().count_unread(erin, conv(), after, upto, cap);
    EXPECT_TRUE(n.ok()) << n.error().to_string();
    return n.ok() ? *n : 9999;
  };
  EXPECT_EQ(count(MailboxSeq{}, seq(1, 1000), 1000), 7u);
  EXPECT_EQ(count(MailboxSeq{}, seq(2, 1000), 1000), 9u);  // across epochs
  EXPECT_EQ(count(seq(1, 55), seq(2, 1), 1000), 3u);       // (after, upto]: 56, 57 and 2:1
  EXPECT_EQ(count(MailboxSeq{}, seq(2, 1000), 4), 4u);     // the cap
  EXPECT_EQ(count(seq(2, 2), seq(2, 1000), 1000), 0u);
  EXPECT_EQ(count(seq(2, 2), seq(2, 2), 1000), 0u);  // an empty range reads nothing

  // index_rows_desc merges both slices, newest first, at most `limit`.
  auto rows = b().index_rows_desc(erin, conv(), seq(1, 48), seq(2, 1), 5);
  ASSERT_TRUE(rows.ok()) << rows.error().to_string();
  ASSERT_EQ(rows->size(), 5u);
  EXPECT_EQ((*rows)[0].seq, seq(2, 1));
  EXPECT_EQ((*rows)[1].seq, seq(1, 60));
  EXPECT_FALSE((*rows)[1].counts);  // a system entry
  EXPECT_EQ((*rows)[4].seq, seq(1, 57));
  EXPECT_TRUE((*rows)[4].counts);
  auto own = b().index_rows_desc(erin, conv(), seq(1, 48), seq(1, 50), 10);
  ASSERT_TRUE(own.ok());
  ASSERT_EQ(own->size(), 2u);
  EXPECT_EQ((*own)[0].seq, seq(1, 50));
  EXPECT_FALSE((*own)[0].counts);
  EXPECT_EQ((*own)[0].sender, erin);
}

TEST_F(CqlInboxBackendTest, ReadMarksRiseAcrossEpochsAndNeverFall) {
  const UserId u = *UserId::parse("frank");
  ASSERT_TRUE(b().raise_read_mark(u, conv(), seq(1, 40)).ok());
  ASSERT_TRUE(b().raise_read_mark(u, conv(), seq(1, 20)).ok());
  EXPECT_EQ(*b().read_mark(u, conv()), seq(1, 40));
  ASSERT_TRUE(b().raise_read_mark(u, conv(), seq(2, 3)).ok());   // lower offset, higher epoch: higher seq
  ASSERT_TRUE(b().raise_read_mark(u, conv(), seq(1, 90)).ok());  // a late write of the old epoch
  EXPECT_EQ(*b().read_mark(u, conv()), seq(2, 3));
  auto marks = b().read_marks(u);
  ASSERT_TRUE(marks.ok());
  ASSERT_EQ(marks->size(), 1u);
  EXPECT_EQ(marks->front().seq, seq(2, 3));
  EXPECT_EQ(*b().read_mark(*UserId::parse("nobody"), conv()), MailboxSeq{});
  cql::Rows t = query("SELECT epoch, WRITETIME(read_offset) FROM " + keyspace_ +
                      ".inbox_read_mark WHERE user_id = 'frank'");
  for (const cql::Row r : t) EXPECT_EQ(*r.get_i64(1), *r.get_i32(0) == 1 ? 90 : 3);
}

TEST_F(CqlInboxBackendTest, ReceiptsAreOrderedByTheMessageOffsetAlone) {
  const ConversationId g = *ConversationId::parse("g:team");
  const uint64_t partition = uint64_t{7} << kOffsetBits;  // ids carry their Outbox partition above bit 48
  ASSERT_TRUE(b().raise_receipt(g, *UserId::parse("gina"), MessageId{partition | 50}).ok());
  ASSERT_TRUE(b().raise_receipt(g, *UserId::parse("gina"), MessageId{partition | 20}).ok());
  ASSERT_TRUE(b().raise_receipt(g, *UserId::parse("hank"), MessageId{partition | 30}).ok());
  auto r = b().receipts(g, 10);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  std::map<std::string, uint64_t> got;
  for (auto& m : *r) got[m.user.str()] = m.read_through.value;
  EXPECT_EQ(got, (std::map<std::string, uint64_t>{{"gina", partition | 50}, {"hank", partition | 30}}));
  EXPECT_EQ(b().receipts(g, 1)->size(), 1u);
}

TEST_F(CqlInboxBackendTest, SettingsAreLastWriterByVersion) {
  const UserId u = *UserId::parse("ivan");
  ASSERT_TRUE(b().put_setting(u, "receipts", "off", 1'800'000'000'500).ok());
  ASSERT_TRUE(b().put_setting(u, "receipts", "on", 1'800'000'000'100).ok());  // older version: loses
  ASSERT_TRUE(b().put_setting(u, "presence", "nobody", 1'800'000'000'200).ok());
  auto s = b().settings(u);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(*s, (std::map<std::string, std::string>{{"presence", "nobody"}, {"receipts", "off"}}));
  EXPECT_EQ(code_of(b().put_setting(u, "receipts", "on", int64_t{1} << 48)), name_of(Errc::kInvalidArgument));
  EXPECT_EQ(code_of(b().put_setting(u, "receipts", "on", -1)), name_of(Errc::kInvalidArgument));
}

// A hand-made write at wall-clock time would win over every later offset-timestamped one: reading it is
// CorruptEntry rather than a row frozen for good.
TEST_F(CqlInboxBackendTest, AWallClockWriteReadsAsCorrupt) {
  query(
      "INSERT INTO " + keyspace_ +
      ".inbox_user (user_id, kind, conversation, counts, epoch, log_offset, positioned, last_offset, "
      "message_id, sender, server_time_ms, last_counts, preview) VALUES ('jack', 1, 'd:alice:bob', false, 1, "
      "0, '', 5, 5, 'alice', 5, true, 0x00)");
  EXPECT_EQ(code_of(b().conversation_rows(*UserId::parse("jack"))), name_of(Errc::kCorruptEntry));
  query("INSERT INTO " + keyspace_ +
        ".inbox_read_mark (user_id, conversation, epoch, read_offset) VALUES ('jack', 'd:alice:bob', 1, 5)");
  EXPECT_EQ(code_of(b().read_mark(*UserId::parse("jack"), conv())), name_of(Errc::kCorruptEntry));
  EXPECT_EQ(code_of(b().read_marks(*UserId::parse("jack"))), name_of(Errc::kCorruptEntry));
}

// Issue 38 (decision 0159): read_batch sends a page's summary reads at once and folds each answer as its
// single call does: the same answers, over two epochs, for one wave of requests where the single calls
// cost a round trip each.
TEST_F(CqlInboxBackendTest, ReadBatchAnswersAsTheSingleCallsInOneWave) {
  const UserId lena = *UserId::parse("lena");
  const UserId mike = *UserId::parse("mike");
  const UserId nora = *UserId::parse("nora");
  const ConversationId lm = *ConversationId::parse("d:lena:mike");
  const ConversationId ln = *ConversationId::parse("d:lena:nora");
  auto in = [](const ConversationId& c, MailboxEntry e) {
    e.message.conversation = c;
    return e;
  };
  // lena's mailbox: from mike, her own and a system entry in epoch 1, more from mike in epoch 2; nora in
  // both. mike's mailbox holds his copies.
  MailboxEntry system = in(lm, entry("lena", seq(1, 4), "mike", 14));
  system.message.client_msg_id = "~group-op";
  ASSERT_TRUE(
      write({in(lm, entry("lena", seq(1, 1), "mike", 11)), in(lm, entry("lena", seq(1, 2), "mike", 12)),
             in(lm, entry("lena", seq(1, 3), "lena", 13)), system,
             in(ln, entry("lena", seq(1, 5), "nora", 15)), in(lm, entry("mike", seq(1, 7), "lena", 13))})
          .ok());
  ASSERT_TRUE(
      write({in(lm, entry("lena", seq(2, 1), "mike", 21)), in(ln, entry("lena", seq(2, 2), "nora", 22)),
             in(lm, entry("lena", seq(2, 3), "mike", 23)), in(lm, entry("mike", seq(2, 4), "mike", 21))})
          .ok());
  ASSERT_TRUE(b().put_setting(mike, "receipts", "off", 1'800'000'000'000).ok());
  ASSERT_TRUE(b().raise_receipt(lm, mike, MessageId{12}).ok());
  ASSERT_TRUE(b().raise_receipt(lm, lena, MessageId{23}).ok());

  const MailboxSeq all = MailboxSeq::from_raw(~uint64_t{0});
  BatchReads reads;
  reads.counts = {{lena, lm, MailboxSeq{}, all, 999},       {lena, lm, seq(1, 1), seq(1, 1000), 999},
                  {lena, lm, seq(1, 2), seq(2, 1000), 999}, {lena, lm, MailboxSeq{}, all, 2},
                  {lena, ln, MailboxSeq{}, all, 999},       {lena, ln, seq(2, 2), seq(2, 2), 9},
                  {lena, lm, MailboxSeq{}, all, 0}};
  reads.index = {{lena, lm, MailboxSeq{}, all, 3}, {lena, lm, seq(1, 2), seq(2, 1), 10},
                 {mike, lm, MailboxSeq{}, all, 1}, {mike, lm, MailboxSeq{}, seq(1, 1000), 1},
                 {nora, ln, MailboxSeq{}, all, 1}, {lena, ln, seq(1, 5), seq(1, 5), 1}};
  reads.settings = {mike, nora};
  reads.receipts = {lm, ln};
  reads.receipts_limit = 10;

  for (uint32_t parallelism : {1u, 8u}) {
    const uint64_t before = b().round_trips();
    auto batch = b().read_batch(reads, parallelism);
    const uint64_t cost = b().round_trips() - before;
    ASSERT_TRUE(batch.ok()) << batch.error().to_string();
    EXPECT_EQ(cost, 1u) << "one wave, whatever the parallelism (" << parallelism << ")";

    // The single calls, each its own round trip (but the empty ranges and limits: none).
    const uint64_t singles_before = b().round_trips();
    std::vector<uint32_t> counts;
    for (const CountQuery& q : reads.counts) {
      auto n = b().count_unread(q.user, q.conversation, q.after, q.upto, q.cap);
      ASSERT_TRUE(n.ok()) << n.error().to_string();
      counts.push_back(*n);
    }
    EXPECT_EQ(batch->counts, counts);
    EXPECT_EQ(batch->counts, (std::vector<uint32_t>{4, 1, 2, 2, 2, 0, 0}));
    ASSERT_EQ(batch->index.size(), reads.index.size());
    for (size_t i = 0; i < reads.index.size(); ++i) {
      const IndexQuery& q = reads.index[i];
      auto single = b().index_rows_desc(q.user, q.conversation, q.after, q.upto, q.limit);
      ASSERT_TRUE(single.ok()) << single.error().to_string();
      EXPECT_EQ(batch->index[i], *single) << "index query " << i;
    }
    ASSERT_EQ(batch->index[0].size(), 3u);
    EXPECT_EQ(batch->index[0][0].seq, seq(2, 3));
    EXPECT_EQ(batch->index[0][2].seq, seq(1, 4)) << "the system entry, from the other slice";
    EXPECT_EQ(batch->index[1].size(), 3u);  // 2:1, 1:4, 1:3
    EXPECT_EQ(batch->index[2].front().seq, seq(2, 4));
    EXPECT_EQ(batch->index[3].front().seq, seq(1, 7));
    EXPECT_TRUE(batch->index[4].empty());
    EXPECT_TRUE(batch->index[5].empty());
    ASSERT_EQ(batch->settings.size(), 2u);
    for (size_t i = 0; i < reads.settings.size(); ++i)
      EXPECT_EQ(batch->settings[i], *b().settings(reads.settings[i]));
    EXPECT_EQ(batch->settings[0], (std::map<std::string, std::string>{{"receipts", "off"}}));
    EXPECT_TRUE(batch->settings[1].empty());
    ASSERT_EQ(batch->receipts.size(), 2u);
    for (size_t i = 0; i < reads.receipts.size(); ++i) {
      auto single = b().receipts(reads.receipts[i], reads.receipts_limit);
      ASSERT_TRUE(single.ok());
      EXPECT_EQ(batch->receipts[i].size(), single->size());
      std::map<std::string, uint64_t> got, want;
      for (const ReceiptMark& m : batch->receipts[i]) got[m.user.str()] = m.read_through.value;
      for (const ReceiptMark& m : *single) want[m.user.str()] = m.read_through.value;
      EXPECT_EQ(got, want) << "receipts of " << reads.receipts[i].str();
    }
    EXPECT_EQ(batch->receipts[0].size(), 2u);
    EXPECT_TRUE(batch->receipts[1].empty());
    // 5 counts, 5 index reads, 2 settings and 2 receipts read: 14 round trips one after another.
    EXPECT_EQ(b().round_trips() - singles_before, 14u);
  }
  BatchReads none;
  const uint64_t before = b().round_trips();
  auto empty = b().read_batch(none, 1);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->counts.empty() && empty->index.empty() && empty->settings.empty() &&
              empty->receipts.empty());
  EXPECT_EQ(b().round_trips(), before) << "nothing to read, nothing sent";
}

// The first error fails the batch, the one the single calls meet first in the order of read_batch's
// default (counts, index, settings, receipts): here a setting and a receipt written at wall-clock time
// (CorruptEntry). Every request of the wave is still waited for: one round trip, none left in flight.
TEST_F(CqlInboxBackendTest, ReadBatchFailsWithTheFirstErrorInOneWave) {
  const UserId olga = *UserId::parse("olga");
  const UserId pete = *UserId::parse("pete");
  const ConversationId op = *ConversationId::parse("d:olga:pete");
  query("INSERT INTO " + keyspace_ +
        ".inbox_setting (user_id, name, value, version) VALUES ('olga', 'receipts', 'on', 5)");
  query("INSERT INTO " + keyspace_ +
        ".inbox_receipt (conversation, user_id, read_through) VALUES ('d:olga:pete', 'pete', 7)");
  const MailboxSeq all = MailboxSeq::from_raw(~uint64_t{0});
  BatchReads reads;
  reads.counts = {{olga, op, MailboxSeq{}, all, 9}, {pete, op, MailboxSeq{}, all, 9}};
  reads.index = {{pete, op, MailboxSeq{}, all, 1}};
  reads.settings = {pete, olga};
  reads.receipts = {op};
  reads.receipts_limit = 10;
  auto single = b().settings(olga);
  ASSERT_EQ(code_of(single), name_of(Errc::kCorruptEntry));
  ASSERT_EQ(code_of(b().receipts(op, 10)), name_of(Errc::kCorruptEntry));
  const uint64_t before = b().round_trips();
  auto batch = b().read_batch(reads, 1);
  EXPECT_EQ(b().round_trips() - before, 1u);
  ASSERT_EQ(code_of(batch), name_of(Errc::kCorruptEntry));
  EXPECT_EQ(batch.error().to_string(), single.error().to_string()) << "the setting's error, met first";
  // Without the corrupt cells the same batch answers.
  reads.settings = {pete};
  reads.receipts = {*ConversationId::parse("d:pete:quin")};
  auto fine = b().read_batch(reads, 1);
  ASSERT_TRUE(fine.ok()) << fine.error().to_string();
  EXPECT_EQ(fine->counts, (std::vector<uint32_t>{0, 0}));
}

TEST_F(CqlInboxBackendTest, BadOptionsAreConfigErrors) {
  CqlInboxOptions o = options();
  o.keyspace = "no-dashes";
  EXPECT_EQ(code_of(CqlInboxBackend::open(o)), name_of(Errc::kConfig));
  o = options();
  o.entry_ttl_ms = 0;
  EXPECT_EQ(code_of(CqlInboxBackend::open(o)), name_of(Errc::kConfig));
  o = options();
  o.batch_rows = 0;
  EXPECT_EQ(code_of(CqlInboxBackend::open(o)), name_of(Errc::kConfig));
}

// A second open over the same keyspace (a restart) finds the schema and the rows.
TEST_F(CqlInboxBackendTest, ReopeningFindsTheSchemaAndTheRows) {
  ASSERT_TRUE(write({entry("kate", seq(1, 9), "alice", 9)}).ok());
  auto again = CqlInboxBackend::open(options());
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  auto rows = (*again)->conversation_rows(*UserId::parse("kate"));
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().last.seq, seq(1, 9));
}

}  // namespace
}  // namespace qim
