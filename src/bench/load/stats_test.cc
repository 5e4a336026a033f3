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
  EXPECT_NE(csv({a}).find(",gateway-1=0.250;mailbox-1=0.500,\n"), std::string::npos) << csv({a});
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
  EXPECT_NE(c.find(",history_inserts_per_msg\n"), std::string::npos) << c;
  EXPECT_NE(c.find(",2.000\n"), std::string::npos) << c;
}

}  // namespace
}  // namespace qim::load
