// Configuration of the store from the environment: defaults, every bad value a Config error naming the
// variable, the page limit only lowered, and the identity-TTL check of the scylla backend.
#include "mailbox/store_options.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "mailbox/contract_store.h"
#include "mailbox/memory/memory_backend.h"

namespace qim {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(StoreOptions, DefaultsToTheEmbeddedStore) {
  auto o = store_options_from_env(env_of({}));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->backend, "embedded");
  EXPECT_EQ(o->shard_count, 16u);
  EXPECT_FALSE(o->page_max.has_value());
  EXPECT_EQ(o->fence_check_ms, 1000);
  EXPECT_EQ(o->fence_check_pages, 256u);
  EXPECT_EQ(o->cql_batch_rows, 32u);
}

TEST(StoreOptions, CqlBatchRowsIsRead) {
  auto o = store_options_from_env(env_of({{"QIM_CQL_BATCH_ROWS", "1"}}));
  ASSERT_TRUE(o.ok()) << o.error().to_string();
  EXPECT_EQ(o->cql_batch_rows, 1u);
}

TEST(StoreOptions, FenceCheckBoundsAreRead) {
  auto o = store_options_from_env(
      env_of({{"QIM_MAILBOX_FENCE_CHECK_MS", "250"}, {"QIM_MAILBOX_FENCE_CHECK_PAGES", "8"}}));
  ASSERT_TRUE(o.ok()) << o.error().to_string();
  EXPECT_EQ(o->fence_check_ms, 250);
  EXPECT_EQ(o->fence_check_pages, 8u);
}

TEST(StoreOptions, BadValuesAreConfigErrorsNamingTheVariable) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"QIM_MAILBOX_STORE_BACKEND", "cassandra"},
      {"QIM_SHARDS", "0"},
      {"QIM_SHARDS", "12x"},
      {"QIM_MAILBOX_FINISH_PAGE_MAX", "0"},
      {"QIM_MAILBOX_RETENTION_MS", "-5"},
      {"QIM_CQL_KEYSPACE", "bad-name"},
      {"QIM_CQL_RF", "9"},
      {"QIM_CQL_BATCH_ROWS", "0"},
      {"QIM_CQL_BATCH_ROWS", "257"},
      {"QIM_MAILBOX_REDIS_PREFIX", "a b"},
      {"QIM_MAILBOX_FENCE_CHECK_MS", "0"},
      {"QIM_MAILBOX_FENCE_CHECK_MS", "1s"},
      {"QIM_MAILBOX_FENCE_CHECK_PAGES", "0"},
      {"QIM_MAILBOX_FENCE_CHECK_PAGES", "2000000"},
  };
  for (const auto& [var, value] : bad) {
    auto o = store_options_from_env(env_of({{var, value}}));
    ASSERT_FALSE(o.ok()) << var << "=" << value;
    EXPECT_EQ(o.code(), Errc::kConfig);
    EXPECT_NE(o.error().message().find(var), std::string::npos) << o.error().message();
  }
}

TEST(StoreOptions, PageMaxOnlyLowersTheDeclaredLimit) {
  BackendContext context;
  context.clock = std::make_shared<SystemClock>();
  EXPECT_EQ(ContractStore(make_memory_backend(context), context, 8).finish_page_limit(), 8u);
  EXPECT_EQ(ContractStore(make_memory_backend(context), context, 500).finish_page_limit(), 64u);
  EXPECT_EQ(ContractStore(make_memory_backend(context), context, std::nullopt).finish_page_limit(), 64u);
}

TEST(StoreOptions, IdentityTtlMustOutliveOutboxAndDispatchRetention) {
  StoreOptions o;
  EXPECT_TRUE(check_identity_ttl_covers_replays(o).ok());  // defaults: 7 d + 1 d < 31 d
  o.outbox_retention_ms = 30 * kDayMs;
  o.dispatch_retention_ms = 1 * kDayMs;
  auto st = check_identity_ttl_covers_replays(o);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Errc::kConfig);
  EXPECT_NE(st.error().message().find("QIM_OUTBOX_RETENTION_MS"), std::string::npos);
  o.outbox_retention_ms = 29 * kDayMs;
  o.dispatch_retention_ms = kDayMs - 1;
  EXPECT_TRUE(check_identity_ttl_covers_replays(o).ok());
}

TEST(StoreOptions, TheScyllaBackendRefusesToOpenWhenReplaysCouldOutliveIdentities) {
  auto o = store_options_from_env(env_of(
      {{"QIM_MAILBOX_STORE_BACKEND", "scylla"}, {"QIM_OUTBOX_RETENTION_MS", std::to_string(31 * kDayMs)}}));
  ASSERT_TRUE(o.ok());
  auto store = open_mailbox_store(*o);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.code(), Errc::kConfig);
}

}  // namespace
}  // namespace qim
