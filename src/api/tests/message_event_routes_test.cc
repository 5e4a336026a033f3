// The edit and recall routes' parsing and refusals (message_event_routes.cc, docs/adr/0167), over an
// embedded Outbox and the memory message state store, without fanout: the bodies and the path as the EDIT
// and RECALL frames' parser checks them, the scopes, UNAVAILABLE without a message state store, the
// lifecycle rules' codes as problems (nothing appended), and the record an accepted event appends (the
// Idempotency-Key as its client_msg_id). The flow with fanout deciding is tests/api/api_test.py.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "api/api_router.h"
#include "lifecycle/message_state_store.h"
#include "log/testing/test_log.h"
#include "outbox/outbox_record.h"

namespace qim::api {
namespace {

namespace json = boost::json;

class MessageEventRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("qim-api-events-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "log");
    options_.keys_file = (dir_ / "api-keys").string();
    send_key_ = create_api_key(options_.keys_file, static_cast<Scopes>(Scope::kSend), "s", 1)->key;
    read_key_ = create_api_key(options_.keys_file, static_cast<Scopes>(Scope::kRead), "r", 1)->key;
    log_ = qim::testing::open_test_log((dir_ / "log").string(), 2);
    messages_ = make_memory_message_state_store();
    deps_.clock = std::make_shared<SystemClock>();
    deps_.auth_secret = "secret";
    deps_.outbox = log_.get();
    deps_.dedup = &dedup_;
    deps_.messages = messages_.get();
    deps_.group_apply_wait_ms = 20;  // no fanout here: an accepted event is never decided
  }
  void TearDown() override {
    log_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ApiResponse call(const std::string& method, const std::string& target, const std::string& key,
                   const std::string& body, const std::string& idempotency_key = "") {
    ApiRouter router(options_, deps_);
    ApiRequest r;
    r.method = method;
    r.target = target;
    r.authorization = "Bearer " + key;
    r.body = body;
    r.has_idempotency_key = !idempotency_key.empty();
    r.idempotency_key = idempotency_key;
    return router.handle(r);
  }
  static std::string code_of(const ApiResponse& r) {
    EXPECT_EQ(r.content_type, "application/problem+json") << r.body;
    return std::string(json::parse(r.body).as_object().at("code").as_string());
  }
  static std::string detail_of(const ApiResponse& r) {
    return std::string(json::parse(r.body).as_object().at("detail").as_string());
  }
  // A SEND of `sender` in `conversation` appended to the Outbox, as the gateway appends it; its message id.
  MessageId send(const std::string& conversation, const std::string& sender) {
    auto c = ConversationId::parse(conversation).value();
    OutboxRecord rec{c,
                     UserId::parse(sender).value(),
                     DeviceId::unchecked("d1"),
                     "c-" + sender,
                     deps_.clock->now_ms(),
                     "hello"};
    const uint32_t partition = outbox_partition_of(c, log_->partition_count());
    auto offset = log_->append_sync(partition, c.str(), encode_outbox_record(rec));
    EXPECT_TRUE(offset.ok());
    return message_id_of(partition, *offset);
  }
  static std::string path(const std::string& conversation, MessageId id, const std::string& verb) {
    return "/v1/conversations/" + conversation + "/messages/" + std::to_string(id.value) + "/" + verb;
  }
  // Every record of the Outbox (both partitions).
  std::vector<OutboxRecord> records() {
    std::vector<OutboxRecord> out;
    for (uint32_t p = 0; p < log_->partition_count(); ++p) {
      auto recs = log_->read(p, Offset{0}, 100, std::chrono::milliseconds(0));
      EXPECT_TRUE(recs.ok());
      for (const auto& r : *recs) out.push_back(decode_outbox_record(r.value).value());
    }
    return out;
  }

  std::filesystem::path dir_;
  ApiOptions options_;
  ApiDeps deps_;
  MemorySendDedup dedup_{1000, 60'000};
  std::unique_ptr<EmbeddedLog> log_;
  std::unique_ptr<MessageStateStore> messages_;
  std::string send_key_;
  std::string read_key_;
};

TEST_F(MessageEventRoutesTest, ScopeMethodAndShape) {
  const MessageId m = send("d:alice:bob", "alice");
  auto scope = call("POST", path("d:alice:bob", m, "edit"), read_key_, R"({"from":"alice","body":"x"})");
  EXPECT_EQ(scope.status, 403u);
  EXPECT_EQ(code_of(scope), "FORBIDDEN");
  EXPECT_NE(detail_of(scope).find("'send'"), std::string::npos) << scope.body;
  auto method = call("GET", path("d:alice:bob", m, "recall"), send_key_, "");
  EXPECT_EQ(method.status, 405u);
  auto other = call("POST", path("d:alice:bob", m, "delete"), send_key_, "{}");
  EXPECT_EQ(other.status, 404u);
  EXPECT_EQ(code_of(other), "NOT_FOUND");
}

TEST_F(MessageEventRoutesTest, BodiesAndPathsAreTheFramesFields) {
  const MessageId m = send("d:alice:bob", "alice");
  const std::string edit = path("d:alice:bob", m, "edit");
  auto not_json = call("POST", edit, send_key_, "{nope");
  EXPECT_EQ(not_json.status, 400u);
  EXPECT_EQ(code_of(not_json), "BAD_FRAME");
  auto unknown = call("POST", edit, send_key_, R"({"from":"alice","body":"x","x":1})");
  EXPECT_EQ(code_of(unknown), "INVALID_ARGUMENT");
  EXPECT_NE(detail_of(unknown).find("'x'"), std::string::npos);
  auto no_body = call("POST", edit, send_key_, R"({"from":"alice"})");
  EXPECT_EQ(code_of(no_body), "INVALID_ARGUMENT");
  EXPECT_NE(detail_of(no_body).find("'body'"), std::string::npos) << no_body.body;
  auto empty = call("POST", edit, send_key_, R"({"from":"alice","body":""})");
  EXPECT_EQ(code_of(empty), "INVALID_ARGUMENT");
  auto bad_from = call("POST", edit, send_key_, R"({"from":"a:b","body":"x"})");
  EXPECT_EQ(code_of(bad_from), "INVALID_ARGUMENT");
  EXPECT_NE(detail_of(bad_from).find("'from'"), std::string::npos);
  auto from_type = call("POST", edit, send_key_, R"({"from":7,"body":"x"})");
  EXPECT_EQ(code_of(from_type), "INVALID_ARGUMENT");
  // A recall has no body.
  auto recall_body =
      call("POST", path("d:alice:bob", m, "recall"), send_key_, R"({"from":"alice","body":"x"})");
  EXPECT_EQ(code_of(recall_body), "INVALID_ARGUMENT");
  EXPECT_NE(detail_of(recall_body).find("'body'"), std::string::npos);
  auto bad_id =
      call("POST", "/v1/conversations/d:alice:bob/messages/abc/recall", send_key_, R"({"from":"alice"})");
  EXPECT_EQ(code_of(bad_id), "INVALID_ARGUMENT");
  EXPECT_NE(detail_of(bad_id).find("message_id"), std::string::npos) << bad_id.body;
  auto bad_conversation = call("POST", path("x:y", m, "recall"), send_key_, R"({"from":"alice"})");
  EXPECT_EQ(code_of(bad_conversation), "INVALID_ARGUMENT");
  auto bad_key = call("POST", edit, send_key_, R"({"from":"alice","body":"x"})", "~e");
  EXPECT_EQ(code_of(bad_key), "INVALID_ARGUMENT");
  EXPECT_NE(detail_of(bad_key).find("Idempotency-Key"), std::string::npos) << bad_key.body;
  EXPECT_EQ(records().size(), 1u);  // nothing appended
}

TEST_F(MessageEventRoutesTest, WithoutMessageStateStoreUnavailable) {
  deps_.messages = nullptr;
  const MessageId m = send("d:alice:bob", "alice");
  auto edit = call("POST", path("d:alice:bob", m, "edit"), send_key_, R"({"from":"alice","body":"x"})");
  EXPECT_EQ(edit.status, 503u);
  EXPECT_EQ(code_of(edit), "UNAVAILABLE");
  auto recall = call("POST", path("d:alice:bob", m, "recall"), send_key_, R"({"from":"alice"})");
  EXPECT_EQ(recall.status, 503u);
  EXPECT_EQ(code_of(recall), "UNAVAILABLE");
}

TEST_F(MessageEventRoutesTest, TheLifecycleRulesCodesAsProblems) {
  const MessageId m = send("d:alice:bob", "alice");
  auto unknown =
      call("POST", path("d:alice:bob", MessageId{m.value + 5}, "recall"), send_key_, R"({"from":"alice"})");
  EXPECT_EQ(unknown.status, 404u);
  EXPECT_EQ(code_of(unknown), "UNKNOWN_MESSAGE");
  // Bob is a member but not the sender: NOT_ALLOWED, for an edit and for a recall of a direct message.
  auto edit = call("POST", path("d:alice:bob", m, "edit"), send_key_, R"({"from":"bob","body":"x"})");
  EXPECT_EQ(edit.status, 403u);
  EXPECT_EQ(code_of(edit), "NOT_ALLOWED");
  auto recall = call("POST", path("d:alice:bob", m, "recall"), send_key_, R"({"from":"bob"})");
  EXPECT_EQ(recall.status, 403u);
  EXPECT_EQ(code_of(recall), "NOT_ALLOWED");
  // Carol is no member of the conversation: FORBIDDEN, as for the frame.
  auto outsider = call("POST", path("d:alice:bob", m, "recall"), send_key_, R"({"from":"carol"})");
  EXPECT_EQ(outsider.status, 403u);
  EXPECT_EQ(code_of(outsider), "FORBIDDEN");
  // The system user (no `from`) is no moderator (docs/adr/0167): alice's message in its own conversation
  // with her is hers to recall, not the system's.
  const MessageId to_system = send("d:alice:system", "alice");
  auto system = call("POST", path("d:alice:system", to_system, "recall"), send_key_, "{}");
  EXPECT_EQ(system.status, 403u);
  EXPECT_EQ(code_of(system), "NOT_ALLOWED");
  // Of another conversation: UNKNOWN_MESSAGE (nothing revealed).
  auto elsewhere = call("POST", path("d:alice:system", m, "recall"), send_key_, R"({"from":"alice"})");
  EXPECT_EQ(elsewhere.status, 404u);
  EXPECT_EQ(code_of(elsewhere), "UNKNOWN_MESSAGE");
  EXPECT_EQ(records().size(), 2u);  // nothing appended
}

TEST_F(MessageEventRoutesTest, WindowPassedAndRecalled) {
  const MessageId m = send("d:alice:bob", "alice");
  deps_.lifecycle.edit_window_ms = 0;  // edits off
  auto edit = call("POST", path("d:alice:bob", m, "edit"), send_key_, R"({"from":"alice","body":"x"})");
  EXPECT_EQ(edit.status, 409u);
  EXPECT_EQ(code_of(edit), "WINDOW_PASSED");
  // A recall fanout applied (the state it writes): no edit, no second recall.
  auto c = ConversationId::parse("d:alice:bob").value();
  MessageState state{
      m, c, UserId::parse("alice").value(), DeviceId::unchecked("d1"), "c-alice", deps_.clock->now_ms(), {}};
  state.events[1000] =
      EventOutcome{MessageEventKind::kRecall, true, EventRefusal::kNone, UserId::parse("alice").value(),
                   deps_.clock->now_ms(),     ""};
  ASSERT_TRUE(messages_->put(state, outbox_partition_of(c, 2), 1000).ok());
  deps_.lifecycle.edit_window_ms = kDefaultEditWindowMs;
  auto again = call("POST", path("d:alice:bob", m, "recall"), send_key_, R"({"from":"alice"})");
  EXPECT_EQ(again.status, 409u);
  EXPECT_EQ(code_of(again), "MESSAGE_RECALLED");
  auto edit_recalled =
      call("POST", path("d:alice:bob", m, "edit"), send_key_, R"({"from":"alice","body":"x"})");
  EXPECT_EQ(code_of(edit_recalled), "MESSAGE_RECALLED");
  EXPECT_EQ(records().size(), 1u);
}

TEST_F(MessageEventRoutesTest, AnAcceptedEditAppendsTheFramesRecord) {
  const MessageId m = send("d:alice:bob", "alice");
  // No fanout decides it here: appended, then UNAVAILABLE ("not decided yet"), as the frame answers.
  auto edit =
      call("POST", path("d:alice:bob", m, "edit"), send_key_, R"({"from":"alice","body":"fixed"})", "fix-1");
  EXPECT_EQ(edit.status, 503u);
  EXPECT_EQ(code_of(edit), "UNAVAILABLE");
  EXPECT_NE(detail_of(edit).find("not decided"), std::string::npos) << edit.body;
  auto recs = records();
  ASSERT_EQ(recs.size(), 2u);
  const OutboxRecord& e = recs.back();
  ASSERT_TRUE(e.event.has_value());
  EXPECT_EQ(e.event->kind, MessageEventKind::kEdit);
  EXPECT_EQ(e.event->target, m);
  EXPECT_EQ(e.sender.str(), "alice");
  EXPECT_EQ(e.client_msg_id, "fix-1");  // the Idempotency-Key
  EXPECT_EQ(e.body, "fixed");
  // Without a key each request is its own event (a fresh client_msg_id); the same key again is the same
  // event, not appended twice.
  auto again =
      call("POST", path("d:alice:bob", m, "edit"), send_key_, R"({"from":"alice","body":"fixed"})", "fix-1");
  EXPECT_EQ(records().size(), 2u) << again.body;
  auto other =
      call("POST", path("d:alice:bob", m, "edit"), send_key_, R"({"from":"alice","body":"other"})", "fix-1");
  EXPECT_EQ(other.status, 409u);
  EXPECT_EQ(code_of(other), "INVALID_ARGUMENT");
  auto recall = call("POST", path("d:alice:bob", m, "recall"), send_key_, R"({"from":"alice"})");
  EXPECT_EQ(code_of(recall), "UNAVAILABLE");
  recs = records();
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs.back().event->kind, MessageEventKind::kRecall);
  EXPECT_TRUE(recs.back().client_msg_id.starts_with("api-")) << recs.back().client_msg_id;
}

TEST_F(MessageEventRoutesTest, ReactionsAreTheReactFramesDoor) {
  const MessageId m = send("d:alice:bob", "alice");
  const std::string reactions = path("d:alice:bob", m, "reactions");
  auto method = call("PUT", reactions, send_key_, R"({"from":"bob","reaction":":tada:"})");
  EXPECT_EQ(method.status, 405u);
  auto scope = call("POST", reactions, read_key_, R"({"from":"bob","reaction":":tada:"})");
  EXPECT_EQ(code_of(scope), "FORBIDDEN");
  auto missing = call("POST", reactions, send_key_, R"({"from":"bob"})");
  EXPECT_EQ(code_of(missing), "INVALID_ARGUMENT");
  EXPECT_NE(detail_of(missing).find("'emoji'"), std::string::npos) << missing.body;
  auto body = call("POST", reactions, send_key_, R"({"from":"bob","reaction":":tada:","body":"x"})");
  EXPECT_EQ(code_of(body), "INVALID_ARGUMENT");
  // decide_event's rules before the append: not an emoji, and an UNREACT of a reaction not held.
  auto bad = call("POST", reactions, send_key_, R"({"from":"bob","reaction":"nope"})");
  EXPECT_EQ(bad.status, 400u);
  EXPECT_EQ(code_of(bad), "BAD_REACTION");
  auto unchanged = call("DELETE", reactions, send_key_, R"({"from":"bob","reaction":":tada:"})");
  EXPECT_EQ(unchanged.status, 409u);
  EXPECT_EQ(code_of(unchanged), "REACTION_UNCHANGED");
  auto outsider = call("POST", reactions, send_key_, R"({"from":"carol","reaction":":tada:"})");
  EXPECT_EQ(code_of(outsider), "FORBIDDEN");
  EXPECT_EQ(records().size(), 1u);  // nothing appended
  auto react = call("POST", reactions, send_key_, R"({"from":"bob","reaction":":tada:"})", "r-1");
  EXPECT_EQ(code_of(react), "UNAVAILABLE");  // appended; no fanout here
  auto recs = records();
  ASSERT_EQ(recs.size(), 2u);
  ASSERT_TRUE(recs.back().event.has_value());
  EXPECT_EQ(recs.back().event->kind, MessageEventKind::kReact);
  EXPECT_EQ(recs.back().body, ":tada:");
  EXPECT_EQ(recs.back().client_msg_id, "r-1");
}

}  // namespace
}  // namespace qim::api
