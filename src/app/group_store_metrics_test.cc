#include "app/group_store_metrics.h"

#include <gtest/gtest.h>

#include "groups/embedded/rocks_group_store.h"
#include "log/testing/temp_dir.h"

namespace qim {
namespace {

TEST(GroupStoreMetricsTest, CountsTheStoresReadsAndIsEmptyWithoutAStore) {
  EXPECT_EQ(group_store_prometheus(nullptr), "");
  testing::TempDir dir;
  auto store = RocksGroupStore::open(dir.sub("groups")).value();
  const GroupId group = GroupId::parse("0123456789abcdef0123456789abcdef").value();
  ASSERT_TRUE(store->load(group).ok());
  ASSERT_TRUE(store->member(group, UserId::parse("alice").value()).ok());
  const std::string text = group_store_prometheus(store.get());
  EXPECT_NE(text.find("# TYPE qim_group_store_ops_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("qim_group_store_ops_total{kind=\"read\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("qim_group_store_ops_total{kind=\"insert\"} 0\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace qim
