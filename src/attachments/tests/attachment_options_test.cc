// The attachment settings read from the environment (attachment_options.h; docs/operations.md): the sweep's
// interval and the orphan age's bounds, which the end-to-end sweep test (tests/e2e/attachment_sweep_test.cc)
// sets short.
#include "attachments/attachment_options.h"

#include <gtest/gtest.h>

#include <map>

namespace qim::attachments {
namespace {

Result<AttachmentOptions> from(std::map<std::string, std::string> env) {
  return attachment_options_from_env([env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

TEST(AttachmentOptions, TheSweepIntervalAndTheOrphanAge) {
  auto defaults = from({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->sweep_interval_ms, 3'600'000);
  EXPECT_EQ(defaults->orphan_age_ms, 86'400'000);
  auto short_ones = from({{"QIM_ATTACH_SWEEP_INTERVAL_MS", "250"}, {"QIM_ATTACH_ORPHAN_AGE_MS", "1000"}});
  ASSERT_TRUE(short_ones.ok()) << short_ones.error().to_string();
  EXPECT_EQ(short_ones->sweep_interval_ms, 250);
  EXPECT_EQ(short_ones->orphan_age_ms, 1000);
  for (auto [var, value] : std::map<std::string, std::string>{{"QIM_ATTACH_SWEEP_INTERVAL_MS", "99"},
                                                              {"QIM_ATTACH_ORPHAN_AGE_MS", "999"}}) {
    auto bad = from({{var, value}});
    ASSERT_FALSE(bad.ok()) << var;
    EXPECT_EQ(bad.code(), Errc::kConfig);
    EXPECT_NE(bad.error().message().find(var), std::string::npos) << bad.error().message();
  }
}

}  // namespace
}  // namespace qim::attachments
