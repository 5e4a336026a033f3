// The attachment rules' deletions against a real S3 store (SeaweedFS, started by scripts/test.sh, which
// sets QIM_TEST_S3_*; label s3): the orphan sweep (docs/adr/0114), retention (docs/adr/0151) and a recall's
// deletions, with the store's own last-modified times and a clock the test moves. Each test works under a
// key space of its own in the shared bucket (PrefixedStore), so the sweep sees only the test's objects.
#include <gtest/gtest.h>

#include <cstdlib>

#include "attachments/attachment_id.h"
#include "attachments/attachment_service.h"
#include "attachments/message_body.h"
#include "attachments/s3/s3_object_store.h"
#include "attachments/tests/one_pixel_png.h"
#include "core/clock.h"

namespace qim::attachments {
namespace {

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kDay = 24 * kHourMs;

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// Every key of `inner` under `prefix`: what the rules see is a store of their own.
class PrefixedStore final : public ObjectStore {
 public:
  PrefixedStore(ObjectStore& inner, std::string prefix) : inner_(inner), prefix_(std::move(prefix)) {}
  Result<std::string> presign_put(std::string_view key, uint64_t size, std::string_view content_type,
                                  std::chrono::seconds ttl) override {
    return inner_.presign_put(prefix_ + std::string(key), size, content_type, ttl);
  }
  Result<std::string> presign_get(std::string_view key, std::chrono::seconds ttl) override {
    return inner_.presign_get(prefix_ + std::string(key), ttl);
  }
  Result<std::optional<ObjectInfo>> head(std::string_view key) override {
    return inner_.head(prefix_ + std::string(key));
  }
  Result<std::string> get(std::string_view key, uint64_t max_bytes) override {
    return inner_.get(prefix_ + std::string(key), max_bytes);
  }
  Status put(std::string_view key, std::string_view content_type, std::string_view bytes) override {
    return inner_.put(prefix_ + std::string(key), content_type, bytes);
  }
  Status remove(std::string_view key) override { return inner_.remove(prefix_ + std::string(key)); }
  Result<std::vector<ListedObject>> list(std::string_view prefix, std::string_view start_after,
                                         uint32_t limit) override {
    QIM_ASSIGN_OR_RETURN(auto page,
                         inner_.list(prefix_ + std::string(prefix),
                                     start_after.empty() ? "" : prefix_ + std::string(start_after), limit));
    for (ListedObject& o : page) o.key.erase(0, prefix_.size());
    return page;
  }

 private:
  ObjectStore& inner_;
  std::string prefix_;
};

const ConversationId kConv = ConversationId::parse("d:alice:bob").value();
const UserId kAlice = UserId::parse("alice").value();
constexpr std::string_view kSecret = "s3-rules-secret";
const std::string& kPng = ::qim::test::kOnePixelPng;

class AttachmentRulesS3Test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto endpoint = env("QIM_TEST_S3_ENDPOINT");
    if (!endpoint) GTEST_SKIP() << "QIM_TEST_S3_ENDPOINT is unset: no S3 store to test against";
    S3Config config;
    config.endpoint = config.public_endpoint = *endpoint;
    config.bucket = env("QIM_TEST_S3_BUCKET").value_or("qim-test");
    config.access_key = env("QIM_TEST_S3_ACCESS_KEY").value_or("");
    config.secret_key = env("QIM_TEST_S3_SECRET_KEY").value_or("");
    auto store = open_s3_object_store(config);
    ASSERT_TRUE(store.ok()) << store.error().to_string();
    s3_ = std::move(store).value();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const int64_t now = SystemClock().now_ms();
    store_ = std::make_unique<PrefixedStore>(
        *s3_, std::string("rules/") + info->name() + "-" + std::to_string(now) + "/");
    clock_ = std::make_shared<ManualClock>(now);
  }

  AttachmentService rules(AttachmentOptions o) {
    return AttachmentService(*store_, std::string(kSecret), o, clock_);
  }

  // ATTACH, and the upload written straight into the store (the presigned PUT is the contract tests').
  std::string upload(AttachmentService& s, const std::string& bytes, const std::string& type) {
    auto g = s.grant_upload(kAlice, kConv, UploadRequest{"f", type, bytes.size(), std::nullopt});
    EXPECT_TRUE(std::holds_alternative<UploadGrant>(g));
    const std::string id = std::get<UploadGrant>(g).attachment;
    EXPECT_TRUE(store_->put(key(id), type, bytes).ok());
    return id;
  }
  // SEND's check of `id` (writes the thumbnail of an image and the "referenced" marker); the stored body.
  std::string send(AttachmentService& s, const std::string& id, const std::string& bytes,
                   const std::string& type) {
    auto checked =
        s.check_references(kAlice, kConv, std::vector<AttachmentRef>{{id, "f", type, bytes.size(), {}}});
    EXPECT_TRUE(std::holds_alternative<std::vector<StoredAttachment>>(checked));
    if (!std::holds_alternative<std::vector<StoredAttachment>>(checked)) return {};
    return encode_message_body(MessageBody{"", std::get<0>(checked)});
  }
  static std::string key(const std::string& id) { return *key_of_attachment(kSecret, id, kAlice, kConv); }
  bool exists(const std::string& k) {
    auto h = store_->head(k);
    EXPECT_TRUE(h.ok()) << h.error().to_string();
    return h.ok() && h->has_value();
  }

  std::unique_ptr<ObjectStore> s3_;
  std::unique_ptr<PrefixedStore> store_;
  std::shared_ptr<ManualClock> clock_;
};

// The orphan sweep deletes an upload no SEND referenced once it is older than a day, and nothing else: not
// a younger one, not a sent one (nor its thumbnail or marker), not a key outside the attachments.
TEST_F(AttachmentRulesS3Test, OrphanSweepDeletesOnlyUnreferencedUploadsOlderThanADay) {
  AttachmentOptions o;
  o.retention_ms = 0;  // retention is the next test's
  auto s = rules(o);
  const std::string sent = upload(s, kPng, "image/png");
  ASSERT_FALSE(send(s, sent, kPng, "image/png").empty());
  const std::string orphan = upload(s, "never sent", "text/plain");
  ASSERT_TRUE(store_->put("other/key", "text/plain", "x").ok());

  clock_->advance_ms(kDay - kHourMs);  // everything is 23 h old: nothing is an orphan yet
  auto early = s.sweep_orphans();
  ASSERT_TRUE(early.ok()) << early.error().to_string();
  EXPECT_EQ(early->deleted, 0u);
  EXPECT_TRUE(exists(key(orphan)));

  clock_->advance_ms(2 * kHourMs);  // 25 h
  auto report = s.sweep_orphans();
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  EXPECT_EQ(report->deleted, 1u);
  EXPECT_EQ(report->expired, 0u);
  EXPECT_EQ(report->listed, 4u);  // sent, its marker, its thumbnail, the orphan
  EXPECT_FALSE(exists(key(orphan)));
  EXPECT_TRUE(exists(key(sent)));
  EXPECT_TRUE(exists(referenced_marker_key(key(sent))));
  EXPECT_TRUE(exists(thumbnail_key(key(sent))));
  EXPECT_TRUE(exists("other/key"));
  auto again = s.sweep_orphans();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->deleted, 0u);
}

// Retention: a sent attachment's object, thumbnail and marker are deleted once the marker is older than
// QIM_ATTACH_RETENTION_MS (its message has left every mailbox); not before; never with retention 0.
TEST_F(AttachmentRulesS3Test, RetentionDeletesSentAttachmentsWithTheirThumbnails) {
  AttachmentOptions o;
  o.retention_ms = 31 * kDay;
  auto s = rules(o);
  const std::string image = upload(s, kPng, "image/png");
  ASSERT_FALSE(send(s, image, kPng, "image/png").empty());
  const std::string file = upload(s, "a file", "text/plain");
  ASSERT_FALSE(send(s, file, "a file", "text/plain").empty());
  ASSERT_TRUE(exists(thumbnail_key(key(image))));

  clock_->advance_ms(31 * kDay - kHourMs);
  auto early = s.sweep_orphans();
  ASSERT_TRUE(early.ok()) << early.error().to_string();
  EXPECT_EQ(early->expired, 0u);
  EXPECT_EQ(early->deleted, 0u);
  EXPECT_TRUE(exists(key(image)));
  // Kept forever with retention 0, however old.
  AttachmentOptions keep = o;
  keep.retention_ms = 0;
  clock_->advance_ms(2 * kHourMs);
  EXPECT_EQ(rules(keep).sweep_orphans()->expired, 0u);
  EXPECT_TRUE(exists(key(file)));

  auto report = s.sweep_orphans();
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  EXPECT_EQ(report->expired, 2u);
  EXPECT_EQ(report->deleted, 0u);
  for (const std::string& id : {image, file}) {
    EXPECT_FALSE(exists(key(id)));
    EXPECT_FALSE(exists(referenced_marker_key(key(id))));
    EXPECT_FALSE(exists(thumbnail_key(key(id))));
  }
  auto page = store_->list("", "", 100);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->empty()) << page->front().key;
}

// A recall deletes the message's objects, thumbnail and marker on the real store, idempotently.
TEST_F(AttachmentRulesS3Test, RecallDeletesTheObjectsIdempotently) {
  auto s = rules(AttachmentOptions{});
  const std::string image = upload(s, kPng, "image/png");
  const std::string body = send(s, image, kPng, "image/png");
  ASSERT_TRUE(exists(thumbnail_key(key(image))));
  ASSERT_TRUE(s.delete_objects_of(kAlice, kConv, body).ok());
  ASSERT_TRUE(s.delete_objects_of(kAlice, kConv, body).ok());
  EXPECT_FALSE(exists(key(image)));
  EXPECT_FALSE(exists(thumbnail_key(key(image))));
  EXPECT_FALSE(exists(referenced_marker_key(key(image))));
}

}  // namespace
}  // namespace qim::attachments
