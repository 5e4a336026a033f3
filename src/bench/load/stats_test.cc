#include "bench/load/stats.h"

#include <gtest/gtest.h>

namespace qim::load {
namespace {

TEST(LoadStats, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  EXPECT_EQ(percentile(v, 50), 50);
  EXPECT_EQ(percentile(v, 99), 99);
  EXPECT_EQ(percentile(v, 100), 100);
  std::vector<double> one{7};
  EXPECT_EQ(percentile(one, 99), 7);
  std::vector<double> none;
  EXPECT_EQ(percentile(none, 50), 0);
}

TEST(LoadStats, SloNeedsEveryMessageAndP99Within250ms) {
  StepResult s;
  s.sent = 10;
  s.delivered = 10;
  s.e2e_p99_ms = 250;
  EXPECT_TRUE(s.slo_pass());
  s.e2e_p99_ms = 250.1;
  EXPECT_FALSE(s.slo_pass());
  s.e2e_p99_ms = 10;
  s.delivered = 9;
  EXPECT_FALSE(s.slo_pass());
  EXPECT_DOUBLE_EQ(s.delivered_pct(), 90.0);
}

TEST(LoadStats, TablesHaveOneRowPerStep) {
  StepResult a, b;
  a.config = "embedded";
  a.offered_rate = 200;
  b.config = "embedded";
  b.offered_rate = 2000;
  std::string md = markdown_table({a, b});
  EXPECT_NE(md.find("| embedded | 200 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| embedded | 2000 |"), std::string::npos);
  std::string c = csv({a, b});
  EXPECT_EQ(std::count(c.begin(), c.end(), '\n'), 3);
}

TEST(LoadStats, CpuPerProcessHasARowPerStepAndACsvColumn) {
  StepResult a;
  a.config = "redis";
  a.offered_rate = 1000;
  a.process_cores = {{"gateway-1", 0.25}, {"mailbox-1", 0.5}};
  const std::string table = process_cpu_table({a});
  EXPECT_NE(table.find("| redis | 1000 | gateway-1 0.25, mailbox-1 0.50 |"), std::string::npos) << table;
  EXPECT_NE(csv({a}).find(",gateway-1=0.250;mailbox-1=0.500,,0.0000,,\n"), std::string::npos) << csv({a});
  StepResult none;
  EXPECT_EQ(process_cpu_table({none}), "");
}

TEST(LoadStats, HistoryInsertsAreAColumnApartFromTheStoresOperations) {
  StepResult a;
  a.config = "scylla";
  a.offered_rate = 200;
  a.inserts_per_msg = 2;
  a.updates_per_msg = 1;
  a.reads_per_msg = 1;
  a.lwts_per_msg = 0;
  a.history_inserts_per_msg = 2;
  const std::string md = markdown_table({a});
  EXPECT_NE(md.find("| 2.00 / 1.00 / 1.00 / 0.00 | 2.00 |"), std::string::npos) << md;
  const std::string c = csv({a});
  EXPECT_NE(c.find(",history_inserts_per_msg,syncs_per_msg,sync_reads_per_msg,engine_per_msg\n"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find(",2.000,0.0000,,\n"), std::string::npos) << c;
}

TEST(LoadStats, EngineCountersParseInOrderAndRefuseWhatIsNotACounter) {
  auto c =
      parse_counters("# cassandra qim_ladder\ntable.mailbox_entries.writes 1200\n\n  lwt.prepare\t7 \r\n");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  ASSERT_EQ(c->size(), 2u);
  EXPECT_EQ((*c)[0], (std::pair<std::string, double>{"table.mailbox_entries.writes", 1200}));
  EXPECT_EQ((*c)[1], (std::pair<std::string, double>{"lwt.prepare", 7}));
  for (const char* bad : {"writes\n", "writes 12x\n", "writes nan\n", "a 1\na 2\n"}) {
    auto r = parse_counters(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code(), Errc::kCorruptEntry);
    EXPECT_NE(r.error().message().find("line"), std::string::npos) << r.error().message();
  }
}

TEST(LoadStats, EngineCountersPerMessageCountFromZeroAndRefuseARestart) {
  auto d = per_message({{"writes", 100}}, {{"writes", 500}, {"lwt", 40}}, 200);
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(*d, (std::vector<std::pair<std::string, double>>{{"writes", 2.0}, {"lwt", 0.2}}));
  auto restarted = per_message({{"writes", 500}}, {{"writes", 10}}, 200);
  ASSERT_FALSE(restarted.ok());
  EXPECT_NE(restarted.error().message().find("went down"), std::string::npos);
  EXPECT_FALSE(per_message({}, {{"writes", 1}}, 0).ok());

  StepResult s;
  s.config = "scylla-p64";
  s.offered_rate = 200;
  s.engine_per_msg = *d;
  EXPECT_NE(engine_ops_table({s}).find("| scylla-p64 | 200 | writes 2.00, lwt 0.20 |"), std::string::npos)
      << engine_ops_table({s});
  EXPECT_NE(csv({s}).find(",writes=2.0000;lwt=0.2000\n"), std::string::npos) << csv({s});
  s.engine_per_msg.clear();
  s.engine_error = "nodetool failed";
  EXPECT_NE(engine_ops_table({s}).find("error: nodetool failed"), std::string::npos);
  EXPECT_EQ(engine_ops_table({StepResult{}}), "");
}

}  // namespace
}  // namespace qim::load
