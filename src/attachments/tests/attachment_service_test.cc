// The attachment rules over the memory store (issue 41 items 2-5): grants, the checks before a SEND is
// appended, download URLs, deletions and the orphan sweep.
#include "attachments/attachment_service.h"

#include <gtest/gtest.h>

#include "attachments/attachment_id.h"
#include "attachments/memory_object_store.h"

namespace qim::attachments {
namespace {

const ConversationId kConv = ConversationId::parse("d:alice:bob").value();
const ConversationId kOther = ConversationId::parse("d:alice:carol").value();
const UserId kAlice = UserId::parse("alice").value();
const UserId kBob = UserId::parse("bob").value();
// sha256("hello")
constexpr std::string_view kHelloSha = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

class AttachmentServiceTest : public ::testing::Test {
 protected:
  AttachmentServiceTest()
      : clock(std::make_shared<ManualClock>(10 * kDayMs + 1000)), store(make_memory_object_store(clock)) {}
  AttachmentService service(AttachmentOptions o = {}) {
    return AttachmentService(*store, "secret", o, clock);
  }

  // ATTACH, then the client's PUT of `bytes` as declared.
  std::string upload(AttachmentService& s, const UserId& who, const ConversationId& c, std::string bytes,
                     std::string type = "text/plain") {
    auto g = s.grant_upload(who, c, UploadRequest{"f.png", type, bytes.size(), std::nullopt});
    EXPECT_TRUE(std::holds_alternative<UploadGrant>(g));
    auto& grant = std::get<UploadGrant>(g);
    EXPECT_TRUE(store->upload(grant.upload_url, type, bytes).ok());
    return grant.attachment;
  }
  static WireCode code_of(const auto& decided) {
    if (auto* r = std::get_if<Refusal>(&decided)) return r->code;
    return WireCode::kInternal;  // not refused: callers expect a refusal
  }

  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<MemoryObjectStore> store;
};

TEST_F(AttachmentServiceTest, GrantBindsSizeTypeAndAnUnguessableKey) {
  auto s = service();
  auto g = s.grant_upload(kAlice, kConv, UploadRequest{"a.png", "image/png", 5, std::nullopt});
  ASSERT_TRUE(std::holds_alternative<UploadGrant>(g));
  const UploadGrant& grant = std::get<UploadGrant>(g);
  EXPECT_EQ(grant.method, "PUT");
  EXPECT_EQ(grant.expires_at_ms, clock->now_ms() + 300'000);
  auto key = key_of_attachment("secret", grant.attachment, kAlice, kConv);
  ASSERT_TRUE(key);
  EXPECT_EQ(key->size(), 4u + 22u);  // "att/" + 128 random bits in base64url
  EXPECT_FALSE(key_of_attachment("secret", grant.attachment, kBob, kConv));     // another uploader
  EXPECT_FALSE(key_of_attachment("secret", grant.attachment, kAlice, kOther));  // another conversation
  EXPECT_FALSE(key_of_attachment("other", grant.attachment, kAlice, kConv));    // another secret
  auto g2 = s.grant_upload(kAlice, kConv, UploadRequest{"a.png", "image/png", 5, std::nullopt});
  EXPECT_NE(std::get<UploadGrant>(g2).attachment, grant.attachment);
  // The size lie at upload is the store's refusal.
  EXPECT_FALSE(store->upload(grant.upload_url, "image/png", "123456").ok());
}

TEST_F(AttachmentServiceTest, GrantRefusals) {
  AttachmentOptions o;
  o.max_bytes = 100;
  o.daily_bytes = 150;
  auto s = service(o);
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, {"x.exe", "application/x-msdownload", 5, {}})),
            WireCode::kUnsupportedType);
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, {"x.png", "image/png", 101, {}})), WireCode::kTooLarge);
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, {"x.png", "image/png", 0, {}})),
            WireCode::kInvalidArgument);
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, {"", "image/png", 1, {}})), WireCode::kInvalidArgument);
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, {"x.png", "image/png", 1, std::string("abc")})),
            WireCode::kInvalidArgument);
  // The daily budget: 100 + 50 fits, one more byte does not; another user has their own; a new UTC day
  // resets.
  EXPECT_TRUE(
      std::holds_alternative<UploadGrant>(s.grant_upload(kAlice, kConv, {"x.png", "image/png", 100, {}})));
  EXPECT_TRUE(
      std::holds_alternative<UploadGrant>(s.grant_upload(kAlice, kConv, {"x.png", "image/png", 50, {}})));
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, {"x.png", "image/png", 1, {}})), WireCode::kQuotaExceeded);
  EXPECT_TRUE(
      std::holds_alternative<UploadGrant>(s.grant_upload(kBob, kConv, {"x.png", "image/png", 100, {}})));
  clock->advance_ms(kDayMs);
  EXPECT_TRUE(
      std::holds_alternative<UploadGrant>(s.grant_upload(kAlice, kConv, {"x.png", "image/png", 100, {}})));
}

TEST_F(AttachmentServiceTest, ReferencesAreCheckedAgainstTheObject) {
  auto s = service();
  const std::string id = upload(s, kAlice, kConv, "hello");
  auto ok = s.check_references(
      kAlice, kConv, std::vector<AttachmentRef>{{id, "f.txt", "text/plain", 5, std::string(kHelloSha)}});
  ASSERT_TRUE(std::holds_alternative<std::vector<StoredAttachment>>(ok));
  EXPECT_EQ(std::get<0>(ok)[0].kind, "file");  // images: thumbnail_test.cc
  // Lies about size, type or hash.
  EXPECT_EQ(code_of(s.check_references(kAlice, kConv,
                                       std::vector<AttachmentRef>{{id, "f.txt", "text/plain", 4, {}}})),
            WireCode::kAttachmentMismatch);
  EXPECT_EQ(code_of(s.check_references(kAlice, kConv,
                                       std::vector<AttachmentRef>{{id, "f.txt", "image/gif", 5, {}}})),
            WireCode::kAttachmentMismatch);
  std::string bad_sha(kHelloSha);
  bad_sha[0] = '3';
  EXPECT_EQ(code_of(s.check_references(kAlice, kConv,
                                       std::vector<AttachmentRef>{{id, "f.txt", "text/plain", 5, bad_sha}})),
            WireCode::kAttachmentMismatch);
  // Someone else's upload, or another conversation's, is missing to them; so is one never uploaded.
  EXPECT_EQ(code_of(s.check_references(kBob, kConv,
                                       std::vector<AttachmentRef>{{id, "f.txt", "text/plain", 5, {}}})),
            WireCode::kAttachmentMissing);
  EXPECT_EQ(code_of(s.check_references(kAlice, kOther,
                                       std::vector<AttachmentRef>{{id, "f.txt", "text/plain", 5, {}}})),
            WireCode::kAttachmentMissing);
  auto never = s.grant_upload(kAlice, kConv, UploadRequest{"f.txt", "text/plain", 5, std::nullopt});
  EXPECT_EQ(code_of(s.check_references(
                kAlice, kConv,
                std::vector<AttachmentRef>{
                    {std::get<UploadGrant>(never).attachment, "f.txt", "text/plain", 5, {}}})),
            WireCode::kAttachmentMissing);
  EXPECT_EQ(code_of(s.check_references(
                kAlice, kConv, std::vector<AttachmentRef>{{"a1.forged.x", "f", "text/plain", 5, {}}})),
            WireCode::kAttachmentMissing);
  // The same id twice.
  EXPECT_EQ(code_of(s.check_references(kAlice, kConv,
                                       std::vector<AttachmentRef>{{id, "f.txt", "text/plain", 5, {}},
                                                                  {id, "f.txt", "text/plain", 5, {}}})),
            WireCode::kInvalidArgument);
}

TEST_F(AttachmentServiceTest, DownloadOnlyOfAnAttachmentTheMessageCarries) {
  auto s = service();
  const std::string id = upload(s, kAlice, kConv, "hello");
  auto checked =
      s.check_references(kAlice, kConv, std::vector<AttachmentRef>{{id, "f.txt", "text/plain", 5, {}}});
  const std::string body = encode_message_body(MessageBody{"look", std::get<0>(checked)});
  auto parsed = decode_message_body(body);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->text, "look");
  ASSERT_EQ(parsed->attachments.size(), 1u);
  EXPECT_EQ(parsed->attachments[0].ref.attachment, id);

  auto g = s.grant_download(kAlice, kConv, clock->now_ms(), body, id, false);
  ASSERT_TRUE(std::holds_alternative<DownloadGrant>(g));
  EXPECT_EQ(*store->download(std::get<DownloadGrant>(g).url), "hello");
  // Not in the message, a body without attachments, no thumbnail, a body claiming another's upload.
  EXPECT_EQ(code_of(s.grant_download(kAlice, kConv, clock->now_ms(), body, "a1.x.y", false)),
            WireCode::kUnknownAttachment);
  EXPECT_EQ(code_of(s.grant_download(kAlice, kConv, clock->now_ms(), "plain text", id, false)),
            WireCode::kUnknownAttachment);
  EXPECT_EQ(code_of(s.grant_download(kAlice, kConv, clock->now_ms(), body, id, true)),
            WireCode::kUnknownAttachment);
  EXPECT_EQ(code_of(s.grant_download(kBob, kConv, clock->now_ms(), body, id, false)),
            WireCode::kUnknownAttachment);
  // The URL expires.
  clock->advance_ms(300'000);
  EXPECT_EQ(store->download(std::get<DownloadGrant>(g).url).code(), Errc::kPermissionDenied);
  // Past retention the message's attachments are gone (docs/adr/0151): no URL; with retention 0, one.
  AttachmentOptions o;
  o.retention_ms = 31 * kDayMs;
  auto r = service(o);
  const int64_t sent = clock->now_ms();
  clock->advance_ms(31 * kDayMs);
  EXPECT_TRUE(std::holds_alternative<DownloadGrant>(r.grant_download(kAlice, kConv, sent, body, id, false)));
  clock->advance_ms(1);
  EXPECT_EQ(code_of(r.grant_download(kAlice, kConv, sent, body, id, false)), WireCode::kUnknownAttachment);
  o.retention_ms = 0;
  EXPECT_TRUE(
      std::holds_alternative<DownloadGrant>(service(o).grant_download(kAlice, kConv, sent, body, id, false)));
}

// The daily budget is per user per UTC day in ONE process (docs/adr/0112): a second AttachmentService
// (another gateway) grants the same user a budget of its own. This pins the documented bound (N gateways: N
// times).
TEST_F(AttachmentServiceTest, DailyBudgetIsPerProcess) {
  AttachmentOptions o;
  o.daily_bytes = 10;
  auto one = service(o);
  auto two = service(o);
  auto ask = [&](AttachmentService& s, uint64_t size) {
    return s.grant_upload(kAlice, kConv, UploadRequest{"f.txt", "text/plain", size, std::nullopt});
  };
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(one, 10)));
  EXPECT_EQ(code_of(ask(one, 1)), WireCode::kQuotaExceeded);
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(two, 10)));  // the other process's own budget
  EXPECT_EQ(code_of(ask(two, 1)), WireCode::kQuotaExceeded);
  clock->advance_ms(kDayMs);  // the next UTC day: every budget starts again
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(one, 10)));
}

TEST_F(AttachmentServiceTest, RecallDeletesTheObjectsIdempotently) {
  auto s = service();
  const std::string id = upload(s, kAlice, kConv, "hello");
  auto checked =
      s.check_references(kAlice, kConv, std::vector<AttachmentRef>{{id, "f.txt", "text/plain", 5, {}}});
  const std::string body = encode_message_body(MessageBody{"", std::get<0>(checked)});
  const std::string other = upload(s, kAlice, kConv, "other");
  ASSERT_TRUE(s.delete_objects_of(kAlice, kConv, body).ok());
  ASSERT_TRUE(s.delete_objects_of(kAlice, kConv, body).ok());
  const std::string key = *key_of_attachment("secret", id, kAlice, kConv);
  EXPECT_FALSE(store->head(key)->has_value());
  EXPECT_FALSE(store->head(referenced_marker_key(key))->has_value());
  EXPECT_TRUE(store->head(*key_of_attachment("secret", other, kAlice, kConv))->has_value());  // untouched
  // A body forged by another sender names nothing of theirs.
  const std::string id2 = upload(s, kAlice, kConv, "hello");
  auto c2 =
      s.check_references(kAlice, kConv, std::vector<AttachmentRef>{{id2, "f.txt", "text/plain", 5, {}}});
  ASSERT_TRUE(s.delete_objects_of(kBob, kConv, encode_message_body(MessageBody{"", std::get<0>(c2)})).ok());
  EXPECT_TRUE(store->head(*key_of_attachment("secret", id2, kAlice, kConv))->has_value());
}

TEST_F(AttachmentServiceTest, OrphanSweepDeletesOldUnreferencedUploadsOnly) {
  auto s = service();
  const std::string sent = upload(s, kAlice, kConv, "hello");
  ASSERT_TRUE(std::holds_alternative<std::vector<StoredAttachment>>(
      s.check_references(kAlice, kConv, std::vector<AttachmentRef>{{sent, "f.txt", "text/plain", 5, {}}})));
  const std::string orphan = upload(s, kAlice, kConv, "lost!");
  clock->advance_ms(kDayMs / 2);
  const std::string young = upload(s, kBob, kConv, "young");
  store->put_at("unrelated/key", "text/plain", "x", 0);
  clock->advance_ms(kDayMs / 2 + 1);  // sent and orphan are a day old, young half a day

  auto report = s.sweep_orphans();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->deleted, 1u);
  auto key = [&](const std::string& id, const UserId& who) {
    return *key_of_attachment("secret", id, who, kConv);
  };
  EXPECT_TRUE(store->head(key(sent, kAlice))->has_value());
  EXPECT_FALSE(store->head(key(orphan, kAlice))->has_value());
  EXPECT_TRUE(store->head(key(young, kBob))->has_value());
  EXPECT_TRUE(store->head("unrelated/key")->has_value());
  // Again: nothing more to delete.
  EXPECT_EQ(s.sweep_orphans()->deleted, 0u);
}

TEST(AttachmentBody, ClientBodiesCannotPassForServerOnes) {
  EXPECT_TRUE(looks_like_attachment_body(encode_message_body(MessageBody{"x", {}})));
  EXPECT_FALSE(looks_like_attachment_body("hello"));
  EXPECT_FALSE(decode_message_body("{\"text\":\"x\"}"));
}

// An EDIT changes a message's caption and keeps its attachments (docs/protocol.md "Editing and recalling").
TEST(AttachmentBody, AnEditKeepsTheAttachmentsAndReplacesTheCaption) {
  StoredAttachment a;
  a.ref.attachment = "a1.r.m";
  a.ref.name = "cat.png";
  a.ref.content_type = "image/png";
  a.ref.size = 70;
  a.kind = "image";
  a.width = a.height = 1;
  a.thumbnail = true;
  const std::string original = encode_message_body(MessageBody{"old", {a}});
  const std::string edited = edited_body(original, "new \"caption\"");
  auto decoded = decode_message_body(edited);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->text, "new \"caption\"");
  ASSERT_EQ(decoded->attachments.size(), 1u);
  EXPECT_EQ(decoded->attachments[0].ref.attachment, "a1.r.m");
  EXPECT_TRUE(decoded->attachments[0].thumbnail);
  EXPECT_EQ(edited,
            encode_message_body(MessageBody{"new \"caption\"", {a}}));  // deterministic: replays agree
  // A text message's edit is the new text as sent.
  EXPECT_EQ(edited_body("hello", "hello, world"), "hello, world");
}

}  // namespace
}  // namespace qim::attachments
