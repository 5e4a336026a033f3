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

// The daily budget is per user per UTC day across the deployment (docs/adr/0158): two AttachmentServices
// (two gateways) over one budget (what the routing Redis is to them) grant no more than one budget together,
// in bytes and in uploads.
TEST_F(AttachmentServiceTest, DailyBudgetHoldsAcrossGatewaysSharingABudget) {
  AttachmentOptions o;
  o.daily_bytes = 10;
  o.daily_uploads = 4;
  auto shared = make_memory_upload_budget();
  AttachmentService one(*store, "secret", o, clock, shared.get());
  AttachmentService two(*store, "secret", o, clock, shared.get());
  auto ask = [&](AttachmentService& s, const UserId& who, uint64_t size) {
    return s.grant_upload(who, kConv, UploadRequest{"f.txt", "text/plain", size, std::nullopt});
  };
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(one, kAlice, 6)));
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(two, kAlice, 4)));
  EXPECT_EQ(code_of(ask(two, kAlice, 1)), WireCode::kQuotaExceeded);  // the other gateway's bytes count
  EXPECT_EQ(code_of(ask(one, kAlice, 1)), WireCode::kQuotaExceeded);
  // The number of uploads too: four of one byte, whichever gateway answers.
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(one, kBob, 1)));
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(two, kBob, 1)));
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(one, kBob, 1)));
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(two, kBob, 1)));
  auto fifth = ask(one, kBob, 1);
  EXPECT_EQ(code_of(fifth), WireCode::kQuotaExceeded);
  if (auto* r = std::get_if<Refusal>(&fifth)) {
    EXPECT_NE(r->message.find("4 uploads"), std::string::npos) << r->message;
  }
  clock->advance_ms(kDayMs);  // the next UTC day: every budget starts again
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(two, kAlice, 10)));
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(one, kBob, 1)));
}

// A budget whose answers go missing, as a Redis that times out does: the first `lost` charges are made on
// the budget underneath but their answer is lost (Timeout), the next `down` charges are not made at all
// (Transport). Counts the calls.
class FlakyBudget final : public UploadBudget {
 public:
  explicit FlakyBudget(UploadBudget& inner) : inner_(inner) {}
  Result<BudgetCharge> charge(const UserId& user, std::string_view upload, uint64_t bytes, int64_t now_ms,
                              const UploadLimits& limits) override {
    ++calls;
    uploads.emplace_back(upload);
    if (lost > 0) {
      --lost;
      (void)inner_.charge(user, upload, bytes, now_ms, limits);
      return Error(Errc::kTimeout, "the answer was lost");
    }
    if (down > 0) {
      --down;
      return Error(Errc::kTransport, "connection refused");
    }
    return inner_.charge(user, upload, bytes, now_ms, limits);
  }
  Result<BudgetCharge> charge_claimed(const UserId& user, const UploadClaim& claim, std::string_view upload,
                                      uint64_t bytes, int64_t now_ms, const UploadLimits& limits) override {
    ++calls;
    uploads.emplace_back(upload);
    if (lost > 0) {
      --lost;
      (void)inner_.charge_claimed(user, claim, upload, bytes, now_ms, limits);
      return Error(Errc::kTimeout, "the answer was lost");
    }
    if (down > 0) {
      --down;
      return Error(Errc::kTransport, "connection refused");
    }
    return inner_.charge_claimed(user, claim, upload, bytes, now_ms, limits);
  }
  int lost = 0, down = 0, calls = 0;
  std::vector<std::string> uploads;

 private:
  UploadBudget& inner_;
};

// A charge whose answer was lost is retried once with the same upload id, and counted once: the grant is
// given and the budget holds exactly its bytes.
TEST_F(AttachmentServiceTest, ALostChargeIsRetriedOnceAndCountedOnce) {
  AttachmentOptions o;
  o.daily_bytes = 10;
  auto inner = make_memory_upload_budget();
  FlakyBudget flaky(*inner);
  AttachmentService s(*store, "secret", o, clock, &flaky);
  flaky.lost = 1;
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(
      s.grant_upload(kAlice, kConv, UploadRequest{"f.txt", "text/plain", 6, std::nullopt})));
  ASSERT_EQ(flaky.calls, 2);
  EXPECT_EQ(flaky.uploads[0], flaky.uploads[1]) << "the retry charges the same upload id";
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(
      s.grant_upload(kAlice, kConv, UploadRequest{"f.txt", "text/plain", 4, std::nullopt})));
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, UploadRequest{"f.txt", "text/plain", 1, std::nullopt})),
            WireCode::kQuotaExceeded);
}

// The same for a claimed ATTACH (client_upload_id, docs/adr/0161): the retry of a charge whose answer was
// lost finds the claim it made and answers its grant, charged once.
TEST_F(AttachmentServiceTest, ALostClaimedChargeIsRetriedOnceAndCountedOnce) {
  AttachmentOptions o;
  o.daily_uploads = 1;
  auto inner = make_memory_upload_budget();
  FlakyBudget flaky(*inner);
  AttachmentService s(*store, "secret", o, clock, &flaky);
  flaky.lost = 1;
  const UploadRequest r{"f.txt", "text/plain", 6, std::nullopt, "up-1"};
  auto first = s.grant_upload(kAlice, kConv, r);
  ASSERT_TRUE(std::holds_alternative<UploadGrant>(first));
  ASSERT_EQ(flaky.calls, 2);
  EXPECT_EQ(flaky.uploads[0], flaky.uploads[1]) << "the retry charges the same upload id";
  auto again = s.grant_upload(kAlice, kConv, r);  // the client's own repeat
  ASSERT_TRUE(std::holds_alternative<UploadGrant>(again));
  EXPECT_EQ(std::get<UploadGrant>(again).attachment, std::get<UploadGrant>(first).attachment);
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, UploadRequest{"f.txt", "text/plain", 1, std::nullopt})),
            WireCode::kQuotaExceeded);
}

// A charge the budget does not answer twice refuses the ATTACH with UNAVAILABLE (no third try) and grants
// nothing; once it answers again, ATTACH works.
TEST_F(AttachmentServiceTest, AChargeNotAnsweredTwiceIsRefusedUnavailable) {
  auto inner = make_memory_upload_budget();
  FlakyBudget flaky(*inner);
  AttachmentService s(*store, "secret", AttachmentOptions{}, clock, &flaky);
  flaky.down = 2;
  auto refused = s.grant_upload(kAlice, kConv, UploadRequest{"f.txt", "text/plain", 5, std::nullopt});
  EXPECT_EQ(code_of(refused), WireCode::kUnavailable);
  EXPECT_EQ(flaky.calls, 2);
  flaky.down = 1;  // one failure: the retry answers
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(
      s.grant_upload(kAlice, kConv, UploadRequest{"f.txt", "text/plain", 5, std::nullopt})));
  EXPECT_EQ(flaky.calls, 4);
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
