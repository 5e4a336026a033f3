#include "core/cpu_placement.h"

#include <gtest/gtest.h>

#include <thread>

namespace qim {
namespace {

using Mode = CpuPlacementSetting::Mode;

TEST(CpuPlacement, ParsesCpuListsAndNamesWhatIsWrong) {
  EXPECT_EQ(parse_cpu_list("1").value(), (std::vector<int>{1}));
  EXPECT_EQ(parse_cpu_list("4-6,0,5").value(), (std::vector<int>{0, 4, 5, 6}));
  for (const char* bad : {"", "a", "1-", "-1", "3-1", "1,,2", "1024", " 1"}) {
    auto r = parse_cpu_list(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.code(), Errc::kInvalidArgument) << bad;
  }
  EXPECT_NE(parse_cpu_list("0,x").error().message().find("'x'"), std::string::npos);
  EXPECT_EQ(format_cpu_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
}

TEST(CpuPlacement, ParsesTheSetting) {
  EXPECT_EQ(parse_cpu_placement("auto")->mode, Mode::kAuto);
  EXPECT_EQ(parse_cpu_placement("off")->mode, Mode::kOff);
  auto s = parse_cpu_placement("1-3:0").value();
  EXPECT_EQ(s.mode, Mode::kExplicit);
  EXPECT_EQ(s.pipeline, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(s.gateway, (std::vector<int>{0}));
  EXPECT_TRUE(parse_cpu_placement(":0")->pipeline.empty());
  for (const char* bad : {"", "on", "1", ":", "1:2:3", "a:0"})
    EXPECT_FALSE(parse_cpu_placement(bad).ok()) << bad;
}

TEST(CpuPlacement, AutoPlacesOnlyAProcessWithGatewayAndPipelineOnTwoCpus) {
  const CpuPlacementSetting auto_setting;
  auto two = plan_cpu_placement(auto_setting, {2, 5}, true, true).value();
  EXPECT_EQ(two.pipeline, (std::vector<int>{5}));
  EXPECT_EQ(two.gateway, (std::vector<int>{2}));
  for (const auto& allowed : {std::vector<int>{0}, std::vector<int>{0, 1, 2, 3}}) {
    auto p = plan_cpu_placement(auto_setting, allowed, true, true).value();
    EXPECT_TRUE(p.pipeline.empty() && p.gateway.empty()) << allowed.size() << " CPUs: " << p.why;
  }
  auto role = plan_cpu_placement(auto_setting, {0, 1}, false, true).value();
  EXPECT_TRUE(role.pipeline.empty() && role.gateway.empty());
  CpuPlacementSetting off{Mode::kOff, {}, {}};
  EXPECT_TRUE(plan_cpu_placement(off, {0, 1}, true, true)->pipeline.empty());
}

TEST(CpuPlacement, ExplicitListsMustNameAllowedCpus) {
  auto s = parse_cpu_placement("1:0").value();
  auto p = plan_cpu_placement(s, {0, 1}, true, true).value();
  EXPECT_EQ(p.pipeline, (std::vector<int>{1}));
  EXPECT_EQ(p.gateway, (std::vector<int>{0}));
  // A process without a gateway places its pipeline only.
  EXPECT_TRUE(plan_cpu_placement(s, {0, 1}, false, true)->gateway.empty());
  auto outside = plan_cpu_placement(parse_cpu_placement("7:0").value(), {0, 1}, true, true);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.error().message().find("CPU 7"), std::string::npos) << outside.error().message();
}

TEST(CpuPlacement, APinnedThreadAndTheThreadsItStartsRunOnItsCpus) {
  const std::vector<int> allowed = allowed_cpus().value();
  ASSERT_FALSE(allowed.empty());
  const std::vector<int> one = {allowed.back()};
  std::vector<int> in_thread, in_child;
  std::thread t([&] {
    ASSERT_TRUE(pin_current_thread(one).ok());
    in_thread = allowed_cpus().value();
    std::thread child([&] { in_child = allowed_cpus().value(); });
    child.join();
  });
  t.join();
  EXPECT_EQ(in_thread, one);
  EXPECT_EQ(in_child, one) << "a thread started by a pinned thread inherits its CPUs";
  EXPECT_EQ(allowed_cpus().value(), allowed) << "other threads are not affected";
  EXPECT_TRUE(pin_current_thread({}).ok());
}

}  // namespace
}  // namespace qim
