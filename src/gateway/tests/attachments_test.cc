// The attachment frames through a real gateway (issue 41; docs/protocol.md "Attachments") over the memory
// object store, an in-memory Outbox, the embedded group store and a history filled from the Outbox as the
// archiver would: ATTACH by members only, a SEND's attachments checked before anything is appended,
// ATTACHMENT_URL only to a current member who may see the message, and ATTACHMENTS_DISABLED without a store.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
#include <mutex>

#include "attachments/memory_object_store.h"
#include "attachments/message_body.h"
#include "attachments/tests/one_pixel_png.h"
#include "client/client.h"
#include "core/conversation.h"
#include "gateway/tests/gateway_harness.h"
#include "groups/embedded/rocks_group_store.h"
#include "log/testing/temp_dir.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kSecret = "attachments-test-secret";
constexpr auto kWait = 10s;
const std::string& kPng = ::qim::test::kOnePixelPng;

class MapHistory final : public HistoryStore {
 public:
  Status append(const Message& m) override {
    std::lock_guard lock(mu_);
    by_conv_[m.conversation.str()][m.id.value] = m;
    return {};
  }
  Result<HistoryPage> read(const HistoryQuery& q) override {
    std::lock_guard lock(mu_);
    HistoryPage page;
    auto& msgs = by_conv_[q.conversation.str()];
    for (auto it = msgs.rbegin(); it != msgs.rend(); ++it) {
      if (q.before && it->first >= q.before->value) continue;
      if (page.messages.size() == q.limit) {
        page.more = true;
        break;
      }
      page.messages.push_back(it->second);
    }
    return page;
  }
  OpCounts op_counts() const override { return {}; }

 private:
  std::mutex mu_;
  std::map<std::string, std::map<uint64_t, Message>> by_conv_;
};

std::string field(const std::string& raw, const char* key) {
  simdjson::dom::parser p;
  std::string_view s;
  if (p.parse(raw)[key].get_string().get(s) != simdjson::SUCCESS) return {};
  return std::string(s);
}

UserId u(std::string_view name) {
  return UserId::parse(name).value();
}

class AttachmentsTest : public testing::GatewayHarness {
 protected:
  AttachmentsTest() : GatewayHarness(std::string(kSecret)) {}
  void SetUp() override {
    groups_ = RocksGroupStore::open(dir_.sub("groups")).value();
    objects_ = attachments::make_memory_object_store(clock_);
  }
  void configure(GatewayOptions&, GatewayDeps& d) override {
    d.history = &history_;
    d.groups = groups_.get();
    if (with_store_) d.objects = objects_.get();
    d.attachment_options = attachment_options_;
  }

  // A request by raw JSON (with "ref":"<ref>" added) and its answer (an ERROR too).
  client::ServerFrame ask(client::Client& c, std::string json_without_ref) {
    const std::string ref = "r" + std::to_string(++refs_);
    json_without_ref.insert(1, "\"ref\":\"" + ref + "\",");
    c.send_text(json_without_ref);
    auto answer = c.wait_ref(ref, kWait);
    EXPECT_TRUE(answer.ok()) << answer.error().to_string();
    return answer.ok() ? *answer : client::ServerFrame{};
  }
  // ATTACH of `bytes` as image/png to `conversation`, then the client's PUT: the attachment id.
  std::string attach_and_upload(client::Client& c, const std::string& conversation,
                                const std::string& bytes) {
    auto ok = ask(c, R"({"type":"ATTACH","conversation":")" + conversation +
                         R"(","name":"p.png","content_type":"image/png","size":)" +
                         std::to_string(bytes.size()) + "}");
    EXPECT_EQ(ok.type, "ATTACH_OK") << ok.raw;
    EXPECT_TRUE(objects_->upload(field(ok.raw, "upload_url"), "image/png", bytes).ok());
    return field(ok.raw, "attachment");
  }
  std::string send_json(const std::string& conversation, const std::string& id, size_t size,
                        const std::string& cid) {
    return R"({"type":"SEND","client_msg_id":")" + cid + R"(","conversation":")" + conversation +
           R"(","body":"look","attachments":[{"attachment":")" + id +
           R"(","name":"p.png","content_type":"image/png","size":)" + std::to_string(size) + "}]}";
  }
  // What the archiver would do: every Outbox record into the history.
  void archive() {
    for (const auto& rec : log_.all_records()) {
      auto r = decode_outbox_record(rec.value);
      ASSERT_TRUE(r.ok());
      ASSERT_TRUE(history_.append(to_message(*r, message_id_of(rec.partition, rec.offset))).ok());
    }
  }
  std::string url_json(const std::string& conversation, uint64_t message_id, const std::string& id) {
    return R"({"type":"ATTACHMENT_URL","conversation":")" + conversation + R"(","message_id":")" +
           std::to_string(message_id) + R"(","attachment":")" + id + R"("})";
  }
  void apply(const GroupId& g, const GroupOp& op, const std::string& actor, uint64_t offset) {
    auto state = groups_->load(g);
    ASSERT_TRUE(state.ok());
    GroupState s = state->has_value() ? std::move(**state) : GroupState(g);
    GroupChange change = s.apply(op, u(actor), offset, 10'000);
    ASSERT_TRUE(change.outcome.applied) << change.outcome.reason;
    ASSERT_TRUE(groups_->apply(change).ok());
  }

  bool with_store_ = true;
  attachments::AttachmentOptions attachment_options_;
  int refs_ = 0;
  testing::TempDir dir_;
  std::unique_ptr<RocksGroupStore> groups_;
  std::unique_ptr<attachments::MemoryObjectStore> objects_;
  MapHistory history_;
};

TEST_F(AttachmentsTest, WithoutAStoreAttachmentsAreDisabledAndTextStillWorks) {
  with_store_ = false;
  start();
  auto alice = login("alice");
  EXPECT_EQ(
      ask(*alice,
          R"({"type":"ATTACH","conversation":"d:alice:bob","name":"a","content_type":"image/png","size":3})")
          .code,
      "ATTACHMENTS_DISABLED");
  EXPECT_EQ(
      ask(*alice,
          R"({"type":"ATTACHMENT_URL","conversation":"d:alice:bob","message_id":"1","attachment":"a1.x.y"})")
          .code,
      "ATTACHMENTS_DISABLED");
  EXPECT_EQ(ask(*alice, send_json("d:alice:bob", "a1.x.y", 3, "c1")).code, "ATTACHMENTS_DISABLED");
  EXPECT_EQ(log_.total_records(), 0u);
  EXPECT_EQ(
      ask(*alice, R"({"type":"SEND","client_msg_id":"c2","conversation":"d:alice:bob","body":"hi"})").type,
      "SEND_ACK");
}

TEST_F(AttachmentsTest, DirectConversationUploadSendAndDownload) {
  start();
  auto alice = login("alice");
  auto bob = login("bob");
  auto carol = login("carol");
  // Only members may ATTACH; a type outside the list is refused.
  EXPECT_EQ(
      ask(*carol,
          R"({"type":"ATTACH","conversation":"d:alice:bob","name":"a","content_type":"image/png","size":3})")
          .code,
      "FORBIDDEN");
  EXPECT_EQ(
      ask(*alice,
          R"({"type":"ATTACH","conversation":"d:alice:bob","name":"a","content_type":"app/x","size":3})")
          .code,
      "UNSUPPORTED_TYPE");
  const std::string id = attach_and_upload(*alice, "d:alice:bob", kPng);

  // Lies and someone else's id are refused, and nothing is appended.
  EXPECT_EQ(ask(*alice, send_json("d:alice:bob", id, kPng.size() - 1, "c1")).code, "ATTACHMENT_MISMATCH");
  EXPECT_EQ(ask(*bob, send_json("d:alice:bob", id, kPng.size(), "c2")).code, "ATTACHMENT_MISSING");
  EXPECT_EQ(
      ask(*alice,
          R"({"type":"SEND","client_msg_id":"c3","conversation":"d:alice:bob","body":"{\"qim\":\"attachments\",\"text\":\"\",\"attachments\":[]}"})")
          .code,
      "INVALID_ARGUMENT");
  EXPECT_EQ(log_.total_records(), 0u);

  auto ack = ask(*alice, send_json("d:alice:bob", id, kPng.size(), "c4"));
  ASSERT_EQ(ack.type, "SEND_ACK") << ack.raw;
  ASSERT_EQ(log_.total_records(), 1u);
  archive();
  auto stored = attachments::decode_message_body(
      history_.read({ConversationId::parse("d:alice:bob").value(), {}, 1})->messages[0].body);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->text, "look");
  EXPECT_EQ(stored->attachments[0].kind, "image");

  auto url = ask(*bob, url_json("d:alice:bob", ack.message_id, id));
  ASSERT_EQ(url.type, "ATTACHMENT_URL_OK") << url.raw;
  EXPECT_EQ(*objects_->download(field(url.raw, "url")), kPng);
  // A non-member, another message id, another attachment: one code.
  EXPECT_EQ(ask(*carol, url_json("d:alice:bob", ack.message_id, id)).code, "UNKNOWN_ATTACHMENT");
  EXPECT_EQ(ask(*bob, url_json("d:alice:bob", ack.message_id + 1, id)).code, "UNKNOWN_ATTACHMENT");
  EXPECT_EQ(ask(*bob, url_json("d:alice:bob", ack.message_id, "a1.AAAA.BBBB")).code, "UNKNOWN_ATTACHMENT");
  // The download URL expires.
  clock_->advance_ms(300'000);
  EXPECT_FALSE(objects_->download(field(url.raw, "url")).ok());
}

TEST_F(AttachmentsTest, GroupDownloadOnlyForCurrentMembersWhoMaySeeTheMessage) {
  start();
  const GroupId g = GroupId::parse("team").value();
  const std::string conv = "g:team";
  // Offsets of the group's Outbox partition: the create at 0; the message will be at the FakeLog's next
  // offset of that partition (0 too: the create was applied to the store only), so later ops use 100+.
  apply(g, GroupOp{GroupOpKind::kCreate, {u("bob"), u("dave")}, "team", GroupRole::kMember}, "alice", 0);
  auto alice = login("alice");
  auto bob = login("bob");
  auto carol = login("carol");
  auto dave = login("dave");
  EXPECT_EQ(ask(*carol,
                R"({"type":"ATTACH","conversation":"g:team","name":"a","content_type":"image/png","size":3})")
                .code,
            "NOT_A_MEMBER");
  const std::string id = attach_and_upload(*alice, conv, kPng);
  auto ack = ask(*alice, send_json(conv, id, kPng.size(), "g1"));
  ASSERT_EQ(ack.type, "SEND_ACK") << ack.raw;
  archive();
  apply(g, GroupOp{GroupOpKind::kAdd, {u("carol")}, "", GroupRole::kMember}, "alice", 100);    // later member
  apply(g, GroupOp{GroupOpKind::kRemove, {u("dave")}, "", GroupRole::kMember}, "alice", 101);  // removed now

  auto ok = ask(*bob, url_json(conv, ack.message_id, id));
  ASSERT_EQ(ok.type, "ATTACHMENT_URL_OK") << ok.raw;
  EXPECT_EQ(*objects_->download(field(ok.raw, "url")), kPng);
  EXPECT_EQ(ask(*carol, url_json(conv, ack.message_id, id)).code, "UNKNOWN_ATTACHMENT");
  EXPECT_EQ(ask(*dave, url_json(conv, ack.message_id, id)).code, "UNKNOWN_ATTACHMENT");
}

// ATTACH with a client_upload_id (docs/adr/0161): a client that repeats the frame (its ATTACH_OK was lost,
// it reconnected) gets the same attachment id and is charged once against its daily budget; the same id
// with another declaration is refused INVALID_ARGUMENT; the repeat's URL uploads the object the id names.
TEST_F(AttachmentsTest, ARepeatedAttachWithAClientUploadIdIsChargedOnce) {
  attachment_options_.daily_uploads = 2;
  start();
  auto attach = [](const std::string& client_id, size_t size) {
    return R"({"type":"ATTACH","conversation":"d:alice:bob","name":"p.png","content_type":"image/png","size":)" +
           std::to_string(size) + R"(,"client_upload_id":")" + client_id + R"("})";
  };
  auto alice = login("alice");
  auto first = ask(*alice, attach("up-1", kPng.size()));
  ASSERT_EQ(first.type, "ATTACH_OK") << first.raw;
  alice.reset();  // the client goes away and comes back: a new connection repeats the frame
  auto again_conn = login("alice");
  auto again = ask(*again_conn, attach("up-1", kPng.size()));
  ASSERT_EQ(again.type, "ATTACH_OK") << again.raw;
  EXPECT_EQ(field(again.raw, "attachment"), field(first.raw, "attachment"));
  EXPECT_EQ(ask(*again_conn, attach("up-1", kPng.size() + 1)).code, "INVALID_ARGUMENT");
  EXPECT_EQ(ask(*again_conn, attach("bad id", kPng.size())).code, "INVALID_ARGUMENT");
  // Charged once: the limit of 2 leaves room for exactly one more upload.
  EXPECT_EQ(ask(*again_conn, attach("up-2", kPng.size())).type, "ATTACH_OK");
  EXPECT_EQ(ask(*again_conn, attach("up-3", kPng.size())).code, "QUOTA_EXCEEDED");
  // The repeat's URL writes the object of the one id, which a SEND then references.
  ASSERT_TRUE(objects_->upload(field(again.raw, "upload_url"), "image/png", kPng).ok());
  auto ack = ask(*again_conn, send_json("d:alice:bob", field(first.raw, "attachment"), kPng.size(), "c1"));
  EXPECT_EQ(ack.type, "SEND_ACK") << ack.raw;
}

}  // namespace
}  // namespace qim
