// Integration test of the CQL client against a real Cassandra/ScyllaDB node.
// Needs QIM_CQL_HOSTS (e.g. "127.0.0.1" or "127.0.0.1:9042,127.0.0.2"); every test is skipped without it.
// Creates its own keyspace (qim_cql_test_<pid>_<time>, SimpleStrategy, RF = nodes up to 3) and drops
// it at the end.

#include "cql_session.h"

#include "batch_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace qim::cql {
namespace {

class CqlSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* env = std::getenv("QIM_CQL_HOSTS");
    if (env == nullptr || *env == '\0') return;
    hosts_ = new std::vector<std::string>(split_hosts(env));
    auto s = Session::connect({.hosts = *hosts_, .local_dc = "", .request_timeout_ms = 15000});
    if (!s) {
      connect_error_ = new std::string(s.error().to_string());
      return;
    }
    session_ = new Session(std::move(*s));
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    keyspace_ =
        new std::string("qim_cql_test_" + std::to_string(::getpid()) + "_" +
                        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now).count()));
    // RF = number of nodes, at most 3: on a three-node ring every write below is replicated.
    int64_t nodes = 1;
    if (auto peers = session_->query("SELECT peer FROM system.peers"); peers) {
      nodes += static_cast<int64_t>(peers->size());
    }
    rf_ = std::min<int64_t>(nodes, 3);
    auto r = session_->query("CREATE KEYSPACE " + *keyspace_ +
                                 " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': " +
                                 std::to_string(rf_) + "}",
                             {}, {.consistency = Consistency::kAll});
    std::printf("keyspace %s, replication factor %lld\n", keyspace_->c_str(), static_cast<long long>(rf_));
    if (!r) connect_error_ = new std::string("create keyspace: " + r.error().to_string());
  }

  static void TearDownTestSuite() {
    if (session_ != nullptr && keyspace_ != nullptr) {
      auto r = session_->query("DROP KEYSPACE IF EXISTS " + *keyspace_);
      if (!r) std::fprintf(stderr, "drop keyspace: %s\n", r.error().to_string().c_str());
    }
    delete session_;
    delete keyspace_;
    delete hosts_;
    delete connect_error_;
    session_ = nullptr;
    keyspace_ = nullptr;
    hosts_ = nullptr;
    connect_error_ = nullptr;
  }

  void SetUp() override {
    if (hosts_ == nullptr) GTEST_SKIP() << "QIM_CQL_HOSTS is not set";
    ASSERT_EQ(connect_error_, nullptr) << *connect_error_;
    ASSERT_NE(session_, nullptr);
  }

  static Session& session() { return *session_; }
  static std::string ks(const std::string& table) { return *keyspace_ + "." + table; }

  static ::testing::AssertionResult ddl(const std::string& cql) {
    auto r = session_->query(cql);
    if (r) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << cql << ": " << r.error().to_string();
  }

  static Prepared prepare(const std::string& cql) {
    auto p = session_->prepare(cql);
    EXPECT_TRUE(p) << cql << ": " << (p ? "" : p.error().to_string());
    return p ? std::move(*p) : Prepared();
  }

  static inline Session* session_ = nullptr;
  static inline std::string* keyspace_ = nullptr;
  static inline std::vector<std::string>* hosts_ = nullptr;
  static inline std::string* connect_error_ = nullptr;
  static inline int64_t rf_ = 1;
};

TEST_F(CqlSessionTest, SystemLocalReleaseVersion) {
  auto rows = session().query("SELECT release_version, cluster_name FROM system.local");
  ASSERT_TRUE(rows) << rows.error().to_string();
  ASSERT_EQ(rows->size(), 1u);
  ASSERT_EQ(rows->column_count(), 2u);
  EXPECT_EQ(rows->column_name(0), "release_version");
  EXPECT_EQ(rows->column_type(0), ColumnType::kText);
  auto version = (*rows)[0].get_text(0);
  ASSERT_TRUE(version);
  EXPECT_FALSE(version->empty());
  std::printf("server release_version: %.*s\n", static_cast<int>(version->size()), version->data());
}

TEST_F(CqlSessionTest, ConnectFailureIsTypedError) {
  auto s = Session::connect({.hosts = {"127.0.0.1:1"}, .local_dc = "", .request_timeout_ms = 2000});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, CqlErrc::kConnect) << s.error().to_string();
  EXPECT_FALSE(s.error().message.empty());

  auto empty = Session::connect({});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, CqlErrc::kBadArg);

  Session not_connected;
  auto r = not_connected.query("SELECT now() FROM system.local");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, CqlErrc::kClosed);
}

TEST_F(CqlSessionTest, TypedValuesTimestampAndTtl) {
  ASSERT_TRUE(ddl("CREATE TABLE " + ks("kv") +
                  " (k bigint, c bigint, v text, b blob, l list<bigint>, flag boolean, i int, s smallint,"
                  " n bigint, PRIMARY KEY (k, c))"));
  Prepared insert = prepare("INSERT INTO " + ks("kv") +
                            " (k, c, v, b, l, flag, i, s, n) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                            " USING TIMESTAMP ? AND TTL ?");
  ASSERT_TRUE(insert.valid());
  EXPECT_EQ(insert.param_count(), 11u);

  const int64_t ts = 1'000'000'123;  // the ADR's log-offset timestamps are small numbers too
  const std::vector<int64_t> list = {5, -7, int64_t{1} << 50};
  const std::string bytes("\x00\x01\xff\x7f", 4);
  auto w = session().execute(insert,
                             Values()
                                 .bigint(1)
                                 .bigint(2)
                                 .text("héllo")
                                 .blob(bytes)
                                 .bigint_list(list)
                                 .boolean(true)
                                 .int32(-42)
                                 .smallint(7)
                                 .null()
                                 .bigint(ts)
                                 .int32(3600),
                             {.consistency = Consistency::kQuorum});
  ASSERT_TRUE(w) << w.error().to_string();
  EXPECT_TRUE(w->empty());

  Prepared select = prepare("SELECT v, b, l, flag, i, s, n, WRITETIME(v), TTL(v) FROM " + ks("kv") +
                            " WHERE k = ? AND c = ?");
  auto rows = session().execute(select, Values().bigint(1).bigint(2), {.consistency = Consistency::kOne});
  ASSERT_TRUE(rows) << rows.error().to_string();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->column_type(1), ColumnType::kBlob);
  EXPECT_EQ(rows->column_type(2), ColumnType::kBigintList);
  EXPECT_EQ(rows->column_type(7), ColumnType::kBigint);
  EXPECT_EQ(rows->column_type(8), ColumnType::kInt);
  Row row = (*rows)[0];
  EXPECT_EQ(*row.get_text(0), "héllo");
  auto blob = row.get_blob(1);
  ASSERT_TRUE(blob);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(blob->data()), blob->size()), bytes);
  auto l = row.get_i64_list(2);
  ASSERT_TRUE(l);
  EXPECT_EQ(std::vector<int64_t>(l->begin(), l->end()), list);
  EXPECT_EQ(*row.get_bool(3), true);
  EXPECT_EQ(*row.get_i32(4), -42);
  EXPECT_EQ(*row.get_i64(4), -42);  // widened
  EXPECT_EQ(*row.get_i32(5), 7);
  EXPECT_TRUE(row.is_null(6));
  EXPECT_EQ(row.get_i64(6).code(), CqlErrc::kNull);
  EXPECT_EQ(*row.get_i64(7), ts) << "WRITETIME must be the bound USING TIMESTAMP";
  auto ttl = row.get_i32(8);
  ASSERT_TRUE(ttl);
  EXPECT_GT(*ttl, 3500);
  EXPECT_LE(*ttl, 3600);
  EXPECT_EQ(row.get_text(3).code(), CqlErrc::kBadArg);  // a boolean is not text
  EXPECT_EQ(row.get_i64(99).code(), CqlErrc::kBadArg);  // out of range
  EXPECT_EQ(row.render(1), "0x0001ff7f");
  EXPECT_EQ(row.render(2), "[5, -7, 1125899906842624]");
  EXPECT_EQ(row.render(6), "null");
}

TEST_F(CqlSessionTest, ClientTimestampLastWriteWins) {
  ASSERT_TRUE(ddl("CREATE TABLE " + ks("frontier") +
                  " (shard int, epoch int, frontier_offset bigint,"
                  " PRIMARY KEY (shard, epoch)) WITH CLUSTERING ORDER BY (epoch DESC)"));
  Prepared write =
      prepare("INSERT INTO " + ks("frontier") + " (shard, epoch, frontier_offset) VALUES (?, ?, ?)");
  Prepared read = prepare("SELECT epoch, frontier_offset, WRITETIME(frontier_offset) FROM " + ks("frontier") +
                          " WHERE shard = ? LIMIT 1");
  // The timestamp comes from ExecOptions (set_timestamp), not from the CQL text.
  for (int64_t offset : {100, 250, 180}) {  // the late, lower write must not move it back
    auto w = session().execute(write, Values().int32(3).int32(1).bigint(offset), {.timestamp_us = offset});
    ASSERT_TRUE(w) << w.error().to_string();
  }
  auto rows = session().execute(read, Values().int32(3));
  ASSERT_TRUE(rows) << rows.error().to_string();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(*(*rows)[0].get_i64(1), 250);
  EXPECT_EQ(*(*rows)[0].get_i64(2), 250);
}

TEST_F(CqlSessionTest, LightweightTransactionApplied) {
  ASSERT_TRUE(ddl("CREATE TABLE " + ks("meta") + " (user bigint PRIMARY KEY, trim bigint, owner text)"));
  Prepared lwt = prepare("INSERT INTO " + ks("meta") + " (user, trim, owner) VALUES (?, ?, ?) IF NOT EXISTS");
  const ExecOptions opts{.consistency = Consistency::kQuorum, .serial_consistency = Consistency::kSerial};
  auto first = session().execute(lwt, Values().bigint(9).bigint(10).text("a"), opts);
  ASSERT_TRUE(first) << first.error().to_string();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ(first->column_name(0), "[applied]");
  EXPECT_EQ(first->column_type(0), ColumnType::kBoolean);
  EXPECT_EQ(first->applied(), std::optional<bool>(true));

  auto second = session().execute(lwt, Values().bigint(9).bigint(20).text("b"), opts);
  ASSERT_TRUE(second) << second.error().to_string();
  EXPECT_EQ(second->applied(), std::optional<bool>(false));
  // A refused LWT returns the current row next to [applied].
  auto owner = second->column_index("owner");
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(*(*second)[0].get_text(*owner), "a");

  Prepared cas = prepare("UPDATE " + ks("meta") + " SET trim = ? WHERE user = ? IF trim = ?");
  auto moved = session().execute(cas, Values().bigint(15).bigint(9).bigint(10), opts);
  ASSERT_TRUE(moved) << moved.error().to_string();
  EXPECT_EQ(moved->applied(), std::optional<bool>(true));

  auto serial_read = session().query("SELECT trim FROM " + ks("meta") + " WHERE user = 9", {},
                                     {.consistency = Consistency::kSerial});
  ASSERT_TRUE(serial_read) << serial_read.error().to_string();
  EXPECT_EQ(*(*serial_read)[0].get_i64(0), 15);
}

TEST_F(CqlSessionTest, BatchWithTimestamp) {
  ASSERT_TRUE(
      ddl("CREATE TABLE " + ks("inbox") + " (user bigint, seq bigint, body text, PRIMARY KEY (user, seq))"));
  Prepared insert = prepare("INSERT INTO " + ks("inbox") + " (user, seq, body) VALUES (?, ?, ?)");
  Batch logged(BatchType::kLogged);
  for (int64_t seq = 1; seq <= 3; ++seq)
    logged.add(insert, Values().bigint(7).bigint(seq).text("m" + std::to_string(seq)));
  auto r = session().batch(logged, {.consistency = Consistency::kQuorum, .timestamp_us = 4242});
  ASSERT_TRUE(r) << r.error().to_string();

  Batch unlogged(BatchType::kUnlogged);
  unlogged.add(insert, Values().bigint(8).bigint(1).text("x"));
  unlogged.add(insert, Values().bigint(8).bigint(2).text("y"));
  auto pending = session().batch_async(unlogged, {.timestamp_us = 777});
  ASSERT_TRUE(pending.get()) << pending.get().error().to_string();

  auto rows = session().query("SELECT user, seq, body, WRITETIME(body) FROM " + ks("inbox"));
  ASSERT_TRUE(rows) << rows.error().to_string();
  ASSERT_EQ(rows->size(), 5u);
  for (Row row : *rows) {
    const int64_t user = *row.get_i64(0);
    EXPECT_EQ(*row.get_i64(3), user == 7 ? 4242 : 777) << "user " << user << " seq " << *row.get_i64(1);
  }

  // A bad statement inside a batch fails the whole batch with a typed error.
  Batch bad(BatchType::kLogged);
  bad.add(insert, Values().bigint(9).text("not a bigint").text("z"));
  auto e = session().batch(bad);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, CqlErrc::kInvalid) << e.error().to_string();
}

// `IN ?` binds a list<text>: the rows of exactly the named partitions, whatever the names hold.
TEST_F(CqlSessionTest, TextListBindsInMarker) {
  ASSERT_TRUE(
      ddl("CREATE TABLE " + ks("by_name") + " (k int, name text, v bigint, PRIMARY KEY ((k, name)))"));
  Prepared insert = prepare("INSERT INTO " + ks("by_name") + " (k, name, v) VALUES (?, ?, ?)");
  const std::vector<std::string> names = {"a", "b,c", "'quoted'", "\xc3\xa9t\xc3\xa9",
                                          "a longer name past SSO size"};
  for (size_t i = 0; i < names.size(); ++i) {
    auto w = session().execute(insert, Values().int32(1).text(names[i]).bigint(static_cast<int64_t>(i)));
    ASSERT_TRUE(w) << w.error().to_string();
  }
  Prepared read = prepare("SELECT name, v FROM " + ks("by_name") + " WHERE k = ? AND name IN ?");
  const std::vector<std::string> want = {"b,c", "missing", "a longer name past SSO size", "'quoted'"};
  auto rows = session().execute(read, Values().int32(1).text_list(want));
  ASSERT_TRUE(rows) << rows.error().to_string();
  std::set<std::string> got;
  for (Row row : *rows) got.insert(std::string(*row.get_text(0)));
  EXPECT_EQ(got, (std::set<std::string>{"b,c", "a longer name past SSO size", "'quoted'"}));

  // Not UTF-8 inside the list: a typed BAD_ARG before anything is sent.
  auto bad = session().execute(read, Values().int32(1).text_list(std::vector<std::string>{"ok", "\xff"}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, CqlErrc::kBadArg) << bad.error().to_string();
}

// BatchWriter: every row lands, read back through a second session; batches are cut by count and by
// size, an oversized statement goes alone, and each add names the request that carries it.
TEST_F(CqlSessionTest, BatchWriterWritesEveryRowInFewRequests) {
  ASSERT_TRUE(
      ddl("CREATE TABLE " + ks("batched") + " (user text, seq bigint, body blob, PRIMARY KEY (user, seq))"));
  Prepared insert =
      prepare("INSERT INTO " + ks("batched") + " (user, seq, body) VALUES (?, ?, ?) USING TIMESTAMP ?");
  BatchWriter writer(session(), {.consistency = Consistency::kQuorum},
                     {.max_statements = 4, .max_bytes = 4096});
  std::vector<size_t> slot;
  for (int64_t i = 0; i < 10; ++i) {
    // Row 5 is larger than a batch may be: it must go alone.
    const std::string body(i == 5 ? 8192 : 16, static_cast<char>('a' + i));
    slot.push_back(
        writer.add(insert, Values().text("u" + std::to_string(i % 3)).bigint(i).blob(body).bigint(1000 + i)));
  }
  const std::vector<PendingResult> sent = writer.finish();
  // 9 small rows in batches of 4 (4 + 4 + 1) and the large one alone.
  EXPECT_EQ(sent.size(), 4u);
  EXPECT_EQ(writer.requests(), 4u);
  ASSERT_TRUE(wait_all(sent).ok());
  EXPECT_EQ(slot[0], slot[3]);
  EXPECT_NE(slot[3], slot[4]);
  EXPECT_NE(slot[5], slot[4]);
  EXPECT_NE(slot[5], slot[6]);
  for (size_t s : slot) ASSERT_LT(s, sent.size());

  auto other = Session::connect({.hosts = *hosts_, .local_dc = "", .request_timeout_ms = 15000});
  ASSERT_TRUE(other) << other.error().to_string();
  auto rows = other->query("SELECT seq, body, WRITETIME(body) FROM " + ks("batched"), {},
                           {.consistency = Consistency::kQuorum});
  ASSERT_TRUE(rows) << rows.error().to_string();
  ASSERT_EQ(rows->size(), 10u);
  for (Row row : *rows) {
    const int64_t seq = *row.get_i64(0);
    EXPECT_EQ(row.get_blob(1)->size(), seq == 5 ? 8192u : 16u) << seq;
    EXPECT_EQ(*row.get_i64(2), 1000 + seq) << "each statement's own USING TIMESTAMP";
  }

  // A failed row fails the request that carries it, and only that one.
  BatchWriter failing(session(), {}, {.max_statements = 2});
  const size_t good = failing.add(insert, Values().text("v").bigint(1).blob(std::string("x")).bigint(1));
  (void)failing.add(insert, Values().text("v").bigint(2).blob(std::string("y")).bigint(1));
  const size_t bad =
      failing.add(insert, Values().text("v").text("not a bigint").blob(std::string("z")).bigint(1));
  const std::vector<PendingResult> outcome = failing.finish();
  ASSERT_EQ(outcome.size(), 2u);
  EXPECT_TRUE(outcome[good].get()) << outcome[good].get().error().to_string();
  EXPECT_FALSE(outcome[bad].get());
  EXPECT_FALSE(wait_all(outcome).ok());
}

TEST_F(CqlSessionTest, ConcurrentAsyncWritesThenPaging) {
  ASSERT_TRUE(ddl("CREATE TABLE " + ks("mailbox") +
                  " (user bigint, seq bigint, body text, PRIMARY KEY (user, seq))"));
  Prepared insert = prepare("INSERT INTO " + ks("mailbox") + " (user, seq, body) VALUES (?, ?, ?)");
  constexpr int kWrites = 200;
  std::vector<PendingResult> pending;
  pending.reserve(kWrites);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t seq = 0; seq < kWrites; ++seq) {
    pending.push_back(
        session().execute_async(insert, Values().bigint(1).bigint(seq).text("entry " + std::to_string(seq)),
                                {.timestamp_us = 1000 + seq, .idempotent = true}));
  }
  Status all = wait_all(pending);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  ASSERT_TRUE(all) << all.error().to_string();
  for (const auto& p : pending) ASSERT_TRUE(p.ready());
  std::printf("%d concurrent async writes took %lld ms\n", kWrites, static_cast<long long>(ms.count()));

  Prepared scan = prepare("SELECT seq, body FROM " + ks("mailbox") + " WHERE user = ?");

  // Unpaged: everything at once.
  auto all_rows = session().execute(scan, Values().bigint(1));
  ASSERT_TRUE(all_rows) << all_rows.error().to_string();
  EXPECT_EQ(all_rows->size(), static_cast<size_t>(kWrites));
  EXPECT_FALSE(all_rows->has_more_pages());

  // One page at a time, continuing with the paging state.
  std::vector<int64_t> seen;
  ExecOptions page{.page_size = 64};
  int pages = 0;
  for (;;) {
    auto r = session().execute(scan, Values().bigint(1), page);
    ASSERT_TRUE(r) << r.error().to_string();
    ++pages;
    EXPECT_LE(r->size(), 64u);
    for (Row row : *r) seen.push_back(*row.get_i64(0));
    if (!r->has_more_pages()) break;
    page.paging_state = r->paging_state();
    ASSERT_FALSE(page.paging_state.empty());
    ASSERT_LT(pages, 50) << "paging does not terminate";
  }
  EXPECT_GE(pages, 4);
  ASSERT_EQ(seen.size(), static_cast<size_t>(kWrites));
  for (int64_t i = 0; i < kWrites; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i);

  // Up to a limit across pages: exactly max_rows rows, then continue from there.
  auto first = session().execute(scan, Values().bigint(1), {.page_size = 50, .max_rows = 120});
  ASSERT_TRUE(first) << first.error().to_string();
  ASSERT_EQ(first->size(), 120u);
  EXPECT_EQ(*(*first)[119].get_i64(0), 119);
  ASSERT_TRUE(first->has_more_pages());
  auto rest = session().execute(scan, Values().bigint(1),
                                {.page_size = 50, .max_rows = -1, .paging_state = first->paging_state()});
  ASSERT_TRUE(rest) << rest.error().to_string();
  ASSERT_EQ(rest->size(), static_cast<size_t>(kWrites - 120));
  EXPECT_EQ(*(*rest)[0].get_i64(0), 120);
  EXPECT_FALSE(rest->has_more_pages());

  // Every page, unbounded, through an unprepared query.
  auto everything = session().query("SELECT seq FROM " + ks("mailbox") + " WHERE user = 1", {},
                                    {.page_size = 30, .max_rows = -1});
  ASSERT_TRUE(everything) << everything.error().to_string();
  EXPECT_EQ(everything->size(), static_cast<size_t>(kWrites));

  auto count = session().query("SELECT COUNT(*) FROM " + ks("mailbox") + " WHERE user = 1");
  ASSERT_TRUE(count) << count.error().to_string();
  EXPECT_EQ(*(*count)[0].get_i64(0), kWrites);
}

TEST_F(CqlSessionTest, ErrorsAreTypedWithMessages) {
  auto bad = session().prepare("SELEKT * FROM nowhere");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, CqlErrc::kInvalid) << bad.error().to_string();
  EXPECT_FALSE(bad.error().message.empty());
  std::printf("syntax error message: %s\n", bad.error().to_string().c_str());

  auto missing = session().query("SELECT * FROM " + ks("no_such_table"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, CqlErrc::kInvalid) << missing.error().to_string();
  EXPECT_NE(missing.error().message.find("no_such_table"), std::string::npos) << missing.error().message;

  auto async_bad = session().query_async("CREATE TABLE broken (");
  ASSERT_FALSE(async_bad.get());
  EXPECT_EQ(async_bad.get().error().code, CqlErrc::kInvalid);

  ASSERT_TRUE(ddl("CREATE TABLE " + ks("typed") + " (k bigint PRIMARY KEY, v int)"));
  Prepared insert = prepare("INSERT INTO " + ks("typed") + " (k, v) VALUES (?, ?)");
  auto wrong_type = session().execute(insert, Values().bigint(1).text("nope"));
  ASSERT_FALSE(wrong_type);
  EXPECT_EQ(wrong_type.error().code, CqlErrc::kInvalid) << wrong_type.error().to_string();
  auto too_few = session().execute(insert, Values().bigint(1));
  ASSERT_FALSE(too_few);
  EXPECT_EQ(too_few.error().code, CqlErrc::kInvalid) << too_few.error().to_string();
  auto bad_utf8 = session().execute(insert, Values().bigint(1).text("\xff\xfe"));
  ASSERT_FALSE(bad_utf8);
  EXPECT_EQ(bad_utf8.error().code, CqlErrc::kBadArg) << bad_utf8.error().to_string();
  // Rejected before starting: the PendingResult is completed at once with the reason.
  auto rejected = session().execute_async(insert, Values().bigint(1).text("\xff"));
  ASSERT_TRUE(rejected.ready());
  EXPECT_EQ(rejected.get().code(), CqlErrc::kBadArg);
  auto paging_on_batch = session().batch(Batch().add(insert, Values().bigint(1).int32(1)), {.page_size = 10});
  EXPECT_EQ(paging_on_batch.code(), CqlErrc::kBadArg);

  // wait_all reports the first failure but still waits for everything.
  std::vector<PendingResult> mixed;
  mixed.push_back(session().execute_async(insert, Values().bigint(2).int32(2)));
  mixed.push_back(session().execute_async(insert, Values().bigint(3).text("bad")));
  mixed.push_back(session().execute_async(insert, Values().bigint(4).int32(4)));
  Status st = wait_all(mixed);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, CqlErrc::kInvalid);
  EXPECT_TRUE(mixed[0].ready() && mixed[1].ready() && mixed[2].ready());
  EXPECT_TRUE(mixed[0].get());
  EXPECT_TRUE(mixed[2].get());
}

TEST_F(CqlSessionTest, ThreadsShareOneSessionAndStatement) {
  ASSERT_TRUE(ddl("CREATE TABLE " + ks("shared") + " (t int, i int, v bigint, PRIMARY KEY (t, i))"));
  Prepared insert = prepare("INSERT INTO " + ks("shared") + " (t, i, v) VALUES (?, ?, ?)");
  Prepared read = prepare("SELECT v FROM " + ks("shared") + " WHERE t = ? AND i = ?");
  constexpr int kThreads = 4, kPerThread = 50;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        // Blocking calls from several threads at once, mixed with async ones.
        auto w = session().execute(insert, Values().int32(t).int32(i).bigint(int64_t{t} * 1000 + i));
        auto a = session().execute_async(read, Values().int32(t).int32(i));
        const auto& r = a.get();
        if (!w || !r || r->size() != 1 || *(*r)[0].get_i64(0) != int64_t{t} * 1000 + i) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(CqlSessionTest, CloseCompletesInFlightAsyncCalls) {
  auto other = Session::connect({.hosts = *hosts_, .local_dc = "", .request_timeout_ms = 15000});
  ASSERT_TRUE(other) << other.error().to_string();
  ASSERT_TRUE(ddl("CREATE TABLE " + ks("closing") + " (k bigint PRIMARY KEY, v bigint)"));
  auto insert = other->prepare("INSERT INTO " + ks("closing") + " (k, v) VALUES (?, ?)");
  ASSERT_TRUE(insert) << insert.error().to_string();
  std::vector<PendingResult> pending;
  for (int64_t k = 0; k < 100; ++k)
    pending.push_back(other->execute_async(*insert, Values().bigint(k).bigint(k)));
  ASSERT_TRUE(pending[0].get()) << pending[0].get().error().to_string();  // at least one lands
  other->close();
  // Every callback ran before close() returned: each result is there, OK or CLOSED.
  int ok = 0, closed = 0;
  for (const auto& p : pending) {
    ASSERT_TRUE(p.ready());
    if (p.get()) {
      ++ok;
    } else {
      EXPECT_EQ(p.get().error().code, CqlErrc::kClosed) << p.get().error().to_string();
      ++closed;
    }
  }
  std::printf("close with 100 writes in flight: %d completed, %d cancelled\n", ok, closed);
  auto after = other->query("SELECT now() FROM system.local");
  EXPECT_EQ(after.code(), CqlErrc::kClosed);
}

}  // namespace
}  // namespace qim::cql
