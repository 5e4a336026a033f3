// ATTACH with a client upload id (docs/adr/0161; docs/protocol.md "Attachments"): a repeat with the same id
// and declaration within the grant's validity answers the first grant and is charged once; the same id with
// another declaration is refused INVALID_ARGUMENT; after the grant expires the id names a new upload. Over
// the memory budget (`qim up`); the budget's claims on Redis: redis/upload_budget_contract_test.cc.
#include <gtest/gtest.h>

#include "attachments/attachment_id.h"
#include "attachments/attachment_service.h"
#include "attachments/memory_object_store.h"

namespace qim::attachments {
namespace {

const ConversationId kConv = ConversationId::parse("d:alice:bob").value();
const ConversationId kOther = ConversationId::parse("d:alice:carol").value();
const UserId kAlice = UserId::parse("alice").value();
const UserId kBob = UserId::parse("bob").value();

class ClientUploadTest : public ::testing::Test {
 protected:
  ClientUploadTest()
      : clock(std::make_shared<ManualClock>(10 * kDayMs + 1000)), store(make_memory_object_store(clock)) {}

  static UploadRequest req(std::string id, uint64_t size = 5, std::string name = "f.txt") {
    return UploadRequest{std::move(name), "text/plain", size, std::nullopt, std::move(id)};
  }
  static const UploadGrant& granted(const Decided<UploadGrant>& d) {
    static const UploadGrant none;
    EXPECT_TRUE(std::holds_alternative<UploadGrant>(d))
        << (std::holds_alternative<Refusal>(d) ? std::get<Refusal>(d).message : "");
    return std::holds_alternative<UploadGrant>(d) ? std::get<UploadGrant>(d) : none;
  }
  static WireCode code_of(const Decided<UploadGrant>& d) {
    if (auto* r = std::get_if<Refusal>(&d)) return r->code;
    return WireCode::kInternal;  // not refused: callers expect a refusal
  }

  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<MemoryObjectStore> store;
};

TEST_F(ClientUploadTest, ARepeatWithinTheGrantsValidityIsTheSameGrantChargedOnce) {
  AttachmentOptions o;
  o.daily_uploads = 2;
  AttachmentService s(*store, "secret", o, clock);
  const UploadGrant first = granted(s.grant_upload(kAlice, kConv, req("up-1")));
  clock->advance_ms(100'000);  // within the 300 s of the grant
  const UploadGrant again = granted(s.grant_upload(kAlice, kConv, req("up-1")));
  EXPECT_EQ(again.attachment, first.attachment);
  EXPECT_EQ(again.expires_at_ms, first.expires_at_ms) << "the repeat expires when the first grant does";
  // The repeat's URL uploads the same object; the first grant's id then passes SEND's check.
  ASSERT_TRUE(store->upload(again.upload_url, "text/plain", "hello").ok());
  auto checked = s.check_references(
      kAlice, kConv, std::vector<AttachmentRef>{{first.attachment, "f.txt", "text/plain", 5, {}}});
  EXPECT_TRUE(std::holds_alternative<std::vector<StoredAttachment>>(checked));
  // Charged once: one more upload fits the limit of 2, a third does not.
  granted(s.grant_upload(kAlice, kConv, req("up-2")));
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, req("up-3"))), WireCode::kQuotaExceeded);
  // A repeat is answered even with the budget used up: it was granted before.
  EXPECT_EQ(granted(s.grant_upload(kAlice, kConv, req("up-1"))).attachment, first.attachment);
}

TEST_F(ClientUploadTest, TheSameIdWithAnotherDeclarationIsRefused) {
  AttachmentService s(*store, "secret", AttachmentOptions{}, clock);
  const UploadGrant first = granted(s.grant_upload(kAlice, kConv, req("up-1")));
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, req("up-1", 6))), WireCode::kInvalidArgument);  // size
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, req("up-1", 5, "g.txt"))), WireCode::kInvalidArgument);
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kOther, req("up-1"))), WireCode::kInvalidArgument);
  UploadRequest typed = req("up-1");
  typed.content_type = "application/pdf";
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, typed)), WireCode::kInvalidArgument);
  UploadRequest hashed = req("up-1");
  hashed.sha256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
  EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, hashed)), WireCode::kInvalidArgument);
  // The refusals changed nothing: the claim still answers its first grant.
  EXPECT_EQ(granted(s.grant_upload(kAlice, kConv, req("up-1"))).attachment, first.attachment);
  // Another user's id of the same name is their own.
  const UploadGrant bobs = granted(s.grant_upload(kBob, kConv, req("up-1", 6)));
  EXPECT_NE(bobs.attachment, first.attachment);
  EXPECT_TRUE(key_of_attachment("secret", bobs.attachment, kBob, kConv));
}

TEST_F(ClientUploadTest, AfterTheGrantExpiresTheIdNamesANewUpload) {
  AttachmentService s(*store, "secret", AttachmentOptions{}, clock);
  const UploadGrant first = granted(s.grant_upload(kAlice, kConv, req("up-1")));
  clock->advance_ms(300'000);  // the grant's expires_at
  const UploadGrant next = granted(s.grant_upload(kAlice, kConv, req("up-1", 9)));
  EXPECT_NE(next.attachment, first.attachment);
  EXPECT_EQ(next.expires_at_ms, clock->now_ms() + 300'000);
}

TEST_F(ClientUploadTest, AMalformedIdIsRefusedAndChargesNothing) {
  AttachmentOptions o;
  o.daily_uploads = 1;
  AttachmentService s(*store, "secret", o, clock);
  for (std::string bad : {std::string(), std::string("a b"), std::string(129, 'x'), std::string("\x01"),
                          std::string("caf\xc3\xa9")})
    EXPECT_EQ(code_of(s.grant_upload(kAlice, kConv, req(bad))), WireCode::kInvalidArgument) << bad;
  granted(
      s.grant_upload(kAlice, kConv, req(std::string(128, 'x'))));  // the longest; the one upload of the day
}

}  // namespace
}  // namespace qim::attachments
