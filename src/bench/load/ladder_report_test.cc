#include "bench/load/ladder_report.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "bench/load/stats.h"

namespace qim::load {
namespace {

StepResult step(std::string config, double rate, uint64_t sent, uint64_t delivered, double p99) {
  StepResult s;
  s.config = std::move(config);
  s.offered_rate = rate;
  s.seconds = 10;
  s.sent = sent;
  s.acked = sent;
  s.delivered = delivered;
  s.e2e_p50_ms = p99 / 2;
  s.e2e_p99_ms = p99;
  return s;
}

// The CSV qim-load writes (stats.cc), so the report reads exactly what the ladder produces.
std::string ladder_csv() {
  auto relay200 = step("relay", 200, 2000, 2000, 2);
  auto relay2000 = step("relay", 2000, 20000, 20000, 4);
  auto p64 = step("scylla-p64", 200, 2000, 2000, 50);
  p64.process_cores = {{"mailbox-1", 0.1}, {"cassandra", 0.4}};
  p64.engine_per_msg = {{"writes", 4.1}, {"reads", 1.5}, {"lwt", 0}, {"requests", 1.25}};
  p64.inserts_per_msg = 4;
  p64.updates_per_msg = 0.3;
  p64.reads_per_msg = 1.5;
  p64.lwts_per_msg = 0;
  p64.history_inserts_per_msg = 2;
  p64.mean_page = 4.5;
  auto p64_2000 = step("scylla-p64", 2000, 20000, 15000, 3000);  // saturated: a backlog of 5000
  auto p1 = step("scylla-p1", 200, 2000, 2000, 400);
  p1.process_cores = {{"cassandra", 0.8}};
  auto lwt = step("scylla-lwt", 200, 2000, 1000, 9000);
  lwt.engine_per_msg = {{"writes", 3}, {"reads", 1}, {"lwt", 130}};
  auto lwt20 = step("scylla-lwt", 20, 200, 200, 200);
  auto redis = step("redis", 200, 2000, 2000, 100);
  redis.engine_error = "nodetool failed, twice";
  return csv({relay200, relay2000}) + csv({p64, p64_2000}) + csv({p1}) + csv({lwt20, lwt}) + csv({redis});
}

TEST(LadderReport, ReadsQimLoadCsvOfEveryConfiguration) {
  auto rows = parse_ladder_csv(ladder_csv());
  ASSERT_TRUE(rows.ok()) << rows.error().to_string();
  ASSERT_EQ(rows->size(), 8u);
  const LadderRow& p64 = (*rows)[2];
  EXPECT_EQ(p64.config, "scylla-p64");
  EXPECT_DOUBLE_EQ(p64.engine.at("writes"), 4.1);
  EXPECT_DOUBLE_EQ(*p64.store_engine_cores(), 0.4);
  EXPECT_DOUBLE_EQ(*p64.store_us_per_msg(), 0.4 * 1e6 / 200);
  EXPECT_TRUE(p64.slo);
  EXPECT_EQ((*rows)[3].backlog(), 5000u);
  EXPECT_EQ((*rows)[7].engine_error, "nodetool failed; twice");
}

TEST(LadderReport, ShowsSaturationAndTheSeedsRatios) {
  auto rows = parse_ladder_csv(ladder_csv());
  ASSERT_TRUE(rows.ok());
  const std::string md = ladder_markdown(*rows);
  // Past saturation: delivered % and the backlog are in the row, the SLO fails.
  EXPECT_NE(md.find("| scylla-p64 | 2000 | 1500 | 75.00% | 5000 |"), std::string::npos) << md;
  // Each configuration against the relay: e2e P99 per step, highest rate within the SLO.
  EXPECT_NE(md.find("| 25.0 ms | 50.0 ms | 25.000 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| scylla-p64 | 200 | 0.100 | 200 | 0.100 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| scylla-lwt | 20 | 0.010 | 20 | 0.010 |"), std::string::npos) << md;
  // page 64 / page 1: e2e P99 50/400, store CPU per message 0.4/0.8; scylla / redis 50/100; LWT per record.
  EXPECT_NE(md.find("| 200 | 0.125 | 0.500 | 0.500 | 0.00 / 130.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("highest rate at 100% delivered: 200 ÷ 20 = 10.000"), std::string::npos) << md;
  EXPECT_NE(md.find("error: nodetool failed; twice"), std::string::npos) << md;
  // The engine's counts, and its client requests where counted.
  EXPECT_NE(md.find("| 4.10 / 1.50 / 0.00 (1.25 requests) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 3.00 / 1.00 / 130.00 |"), std::string::npos) << md;
  // Every row has every column (18), whatever it lacks.
  for (size_t at = md.find("| relay"); at < md.find("**Against"); at = md.find('\n', at) + 1) {
    const std::string row = md.substr(at, md.find('\n', at) - at);
    if (row.empty()) continue;
    EXPECT_EQ(std::count(row.begin(), row.end(), '|'), 19) << row;
  }
}

TEST(LadderReport, JudgesIssueTensTargetsOnTheRunAlone) {
  auto embedded2000 = step("embedded", 2000, 20000, 20000, 12);  // P50 6 ms: over the 5 ms bound
  auto embedded8000 = step("embedded", 8000, 80000, 80000, 100);
  embedded8000.server_cores = 0.6;  // 75 µs per message
  auto relay8000 = step("relay", 8000, 80000, 80000, 1);
  auto relay10000 = step("relay", 10000, 100000, 100000, 1);
  // page 1 delivers 1,000 in full but not 2,000: the ratio is taken at 1,000 (100 / 800 ms).
  auto p64_1000 = step("scylla-p64", 1000, 10000, 10000, 100);
  auto p64_2000 = step("scylla-p64", 2000, 20000, 20000, 240);
  auto p1_1000 = step("scylla-p1", 1000, 10000, 10000, 800);
  auto p1_2000 = step("scylla-p1", 2000, 20000, 19000, 9000);
  auto lwt40 = step("scylla-lwt", 40, 400, 400, 2000);
  auto rows = parse_ladder_csv(csv({relay8000, relay10000}) + csv({embedded2000, embedded8000}) +
                               csv({p64_1000, p64_2000}) + csv({p1_1000, p1_2000}) + csv({lwt40}));
  ASSERT_TRUE(rows.ok()) << rows.error().to_string();
  const std::string md = ladder_markdown(*rows);
  const std::string targets = md.substr(md.find("**Issue 10's targets"));
  EXPECT_NE(targets.find("highest rate within the SLO ÷ the relay's (8000 ÷ 10000 msg/s, the relay's last "
                         "step: capped) | 0.800 | >= 0.333 | met |"),
            std::string::npos)
      << targets;
  // A relay past the SLO at its last step is not capped: its ceiling is measured.
  auto relay12000 = step("relay", 12000, 120000, 120000, 400);
  auto uncapped = parse_ladder_csv(csv({relay8000, relay10000, relay12000}) + csv({embedded2000}));
  ASSERT_TRUE(uncapped.ok());
  const std::string measured = ladder_markdown(*uncapped);
  EXPECT_NE(measured.find("the relay's (2000 ÷ 10000 msg/s) | 0.200 | >= 0.333 | not met |"),
            std::string::npos)
      << measured;
  EXPECT_NE(targets.find("e2e P50 at 2,000 msg/s (ms) | 6.0 | <= 5 | not met |"), std::string::npos);
  EXPECT_NE(targets.find("at 8,000 msg/s (µs) | 75 | <= 100 | met |"), std::string::npos);
  EXPECT_NE(targets.find("page 64: highest rate within the SLO (msg/s) | 2000 | >= 2000 | met |"),
            std::string::npos);
  EXPECT_NE(targets.find("delivered in full (1000 msg/s) | 0.125 | <= 0.15 | met |"), std::string::npos);
  EXPECT_NE(targets.find("100% delivered | 50.0 | >= 50 | met |"), std::string::npos);

  // Without the embedded and form A rows those targets are not measured, never met.
  auto partial = parse_ladder_csv(csv({relay8000}) + csv({p64_1000}) + csv({p1_2000}));
  ASSERT_TRUE(partial.ok());
  const std::string none = ladder_markdown(*partial);
  EXPECT_NE(none.find("at 8,000 msg/s (µs) | - | <= 100 | not measured |"), std::string::npos) << none;
  EXPECT_NE(none.find("delivered in full (no such step) | - | <= 0.15 | not measured |"), std::string::npos)
      << none;
  EXPECT_EQ(none.find("| met |"), std::string::npos) << none;
}

TEST(LadderReport, RefusesARowItCannotRead) {
  const std::string header = csv({}).substr(0, csv({}).find('\n') + 1);
  auto r = parse_ladder_csv(header + "relay,lots,1,1,1,1,1,100,1,1,1,1,1,,,,,,,0,0,pass,,,\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("line 2: column 'offered_rate' is not a number"), std::string::npos)
      << r.error().message();
  EXPECT_FALSE(parse_ladder_csv("relay,200\n").ok());                       // no header
  EXPECT_FALSE(parse_ladder_csv("config,offered_rate\nrelay,200\n").ok());  // a header without sent, ...
}

}  // namespace
}  // namespace qim::load
