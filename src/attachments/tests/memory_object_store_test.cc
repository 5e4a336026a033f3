#include "attachments/memory_object_store.h"

#include <gtest/gtest.h>

namespace qim::attachments {
namespace {

TEST(MemoryObjectStore, UploadEnforcesSignedSizeTypeAndExpiry) {
  auto clock = std::make_shared<ManualClock>(1'000'000);
  auto store = make_memory_object_store(clock);
  auto url = store->presign_put("att/k", 5, "image/png", std::chrono::seconds(60));
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(store->upload(*url, "image/png", "1234").code(), Errc::kPermissionDenied);    // size
  EXPECT_EQ(store->upload(*url, "image/jpeg", "12345").code(), Errc::kPermissionDenied);  // type
  EXPECT_EQ(store->upload("memory://put/999", "image/png", "12345").code(), Errc::kPermissionDenied);
  ASSERT_TRUE(store->upload(*url, "image/png", "12345").ok());
  auto get = store->presign_get("att/k", std::chrono::seconds(60));
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(store->download(*url).code(), Errc::kPermissionDenied);  // a PUT URL does not GET
  EXPECT_EQ(*store->download(*get), "12345");
  clock->advance_ms(60'000);
  EXPECT_EQ(store->download(*get).code(), Errc::kPermissionDenied);  // expired
  EXPECT_EQ(store->upload(*url, "image/png", "12345").code(), Errc::kPermissionDenied);
}

TEST(MemoryObjectStore, HeadGetListRemove) {
  auto store = make_memory_object_store(std::make_shared<ManualClock>(5));
  ASSERT_TRUE(store->put("att/a", "text/plain", "xy").ok());
  ASSERT_TRUE(store->put("att/b", "text/plain", "z").ok());
  ASSERT_TRUE(store->put("other", "text/plain", "z").ok());
  auto h = store->head("att/a");
  ASSERT_TRUE(h.ok() && h->has_value());
  EXPECT_EQ((*h)->size, 2u);
  EXPECT_FALSE(store->head("att/none")->has_value());
  EXPECT_EQ(store->get("att/a", 1).code(), Errc::kResourceExhausted);
  auto l = store->list("att/", "att/a", 10);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->size(), 1u);
  EXPECT_EQ((*l)[0].key, "att/b");
  EXPECT_TRUE(store->remove("att/a").ok());
  EXPECT_TRUE(store->remove("att/a").ok());  // idempotent
  EXPECT_EQ(store->presign_get("bad key", std::chrono::seconds(1)).code(), Errc::kInvalidArgument);
  EXPECT_EQ(store->presign_get("k", std::chrono::seconds(0)).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace qim::attachments
