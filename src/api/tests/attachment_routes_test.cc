// The attachment routes' parsing and refusals (attachment_routes.cc, docs/adr/0165), over the memory object
// store: bodies and query parameters as the frames' parser checks them, the rules' codes as problems, the
// scopes, and ATTACHMENTS_DISABLED without an object store. The flow against SeaweedFS is
// tests/api/attachments_test.py.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "api/api_router.h"
#include "attachments/attachment_service.h"
#include "attachments/memory_object_store.h"

namespace qim::api {
namespace {

namespace json = boost::json;

class AttachmentRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("qim-api-attach-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    options_.keys_file = (dir_ / "api-keys").string();
    std::filesystem::remove(options_.keys_file);
    send_key_ = create_api_key(options_.keys_file, static_cast<Scopes>(Scope::kSend), "s", 1)->key;
    read_key_ = create_api_key(options_.keys_file, static_cast<Scopes>(Scope::kRead), "r", 1)->key;
    deps_.clock = std::make_shared<SystemClock>();
    deps_.auth_secret = "secret";
    store_ = attachments::make_memory_object_store(deps_.clock);
    attachments::AttachmentOptions o;
    o.max_bytes = 1000;
    service_ = std::make_unique<attachments::AttachmentService>(*store_, "secret", o, deps_.clock);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ApiResponse call(const std::string& method, const std::string& target, const std::string& key,
                   const std::string& body = "", bool with_store = true) {
    ApiDeps deps = deps_;
    if (with_store) deps.attachments = service_.get();
    ApiRouter router(options_, deps);
    ApiRequest r;
    r.method = method;
    r.target = target;
    r.authorization = "Bearer " + key;
    r.body = body;
    return router.handle(r);
  }
  static std::string code_of(const ApiResponse& r) {
    EXPECT_EQ(r.content_type, "application/problem+json") << r.body;
    return std::string(json::parse(r.body).as_object().at("code").as_string());
  }
  static std::string detail_of(const ApiResponse& r) {
    return std::string(json::parse(r.body).as_object().at("detail").as_string());
  }

  std::filesystem::path dir_;
  ApiOptions options_;
  ApiDeps deps_;
  std::string send_key_;
  std::string read_key_;
  std::unique_ptr<attachments::MemoryObjectStore> store_;
  std::unique_ptr<attachments::AttachmentService> service_;
};

constexpr std::string_view kUrl = "/v1/conversations/d:alice:bob/messages/7/attachments/a1.x.y";

TEST_F(AttachmentRoutesTest, UploadGrantAnswersAttachOkAndRepeatsByClientUploadId) {
  const std::string body =
      R"({"from":"alice","conversation":"d:alice:bob","name":"r.png","content_type":"image/png","size":5,)"
      R"("client_upload_id":"order-42"})";
  auto r = call("POST", "/v1/attachments", send_key_, body);
  ASSERT_EQ(r.status, 201u) << r.body;
  auto o = json::parse(r.body).as_object();
  EXPECT_EQ(o.at("type").as_string(), "ATTACH_OK");
  EXPECT_EQ(o.at("conversation").as_string(), "d:alice:bob");
  EXPECT_EQ(o.at("method").as_string(), "PUT");
  EXPECT_FALSE(o.contains("ref"));
  EXPECT_EQ(o.at("headers").as_object().at("Content-Type").as_string(), "image/png");
  EXPECT_GT(o.at("expires_at").as_int64(), 0);
  // The same client_upload_id and declaration: the first grant's attachment (decision 161).
  auto again = call("POST", "/v1/attachments", send_key_, body);
  ASSERT_EQ(again.status, 201u) << again.body;
  EXPECT_EQ(json::parse(again.body).as_object().at("attachment"), o.at("attachment"));
}

TEST_F(AttachmentRoutesTest, UploadRequestRefusals) {
  auto bad_json = call("POST", "/v1/attachments", send_key_, "{not json");
  EXPECT_EQ(bad_json.status, 400u);
  EXPECT_EQ(code_of(bad_json), "BAD_FRAME");
  auto missing = call("POST", "/v1/attachments", send_key_,
                      R"({"from":"alice","conversation":"d:alice:bob","content_type":"image/png","size":5})");
  EXPECT_EQ(missing.status, 400u);
  EXPECT_EQ(code_of(missing), "INVALID_ARGUMENT");
  EXPECT_NE(detail_of(missing).find("'name'"), std::string::npos) << missing.body;
  auto unknown =
      call("POST", "/v1/attachments", send_key_,
           R"({"conversation":"d:alice:system","name":"a","content_type":"image/png","size":5,"x":1})");
  EXPECT_EQ(code_of(unknown), "INVALID_ARGUMENT");
  EXPECT_NE(detail_of(unknown).find("'x'"), std::string::npos);
  auto bad_from =
      call("POST", "/v1/attachments", send_key_,
           R"({"from":"a:b","conversation":"d:alice:bob","name":"a","content_type":"image/png","size":5})");
  EXPECT_EQ(code_of(bad_from), "INVALID_ARGUMENT");
  // The rules' codes (attachment_service.h): over QIM_ATTACH_MAX_BYTES (1000 here), a type not allowed.
  auto oversize =
      call("POST", "/v1/attachments", send_key_,
           R"({"from":"alice","conversation":"d:alice:bob","name":"a","content_type":"image/png",)"
           R"("size":1001})");
  EXPECT_EQ(oversize.status, 413u);
  EXPECT_EQ(code_of(oversize), "TOO_LARGE");
  auto type =
      call("POST", "/v1/attachments", send_key_,
           R"({"from":"alice","conversation":"d:alice:bob","name":"a","content_type":"x/y","size":5})");
  EXPECT_EQ(type.status, 415u);
  EXPECT_EQ(code_of(type), "UNSUPPORTED_TYPE");
  // Membership (SEND's rule): carol is not in d:alice:bob; without "from" the system user is not either.
  auto carol =
      call("POST", "/v1/attachments", send_key_,
           R"({"from":"carol","conversation":"d:alice:bob","name":"a","content_type":"image/png","size":5})");
  EXPECT_EQ(carol.status, 403u);
  EXPECT_EQ(code_of(carol), "FORBIDDEN");
  auto system = call("POST", "/v1/attachments", send_key_,
                     R"({"conversation":"d:alice:bob","name":"a","content_type":"image/png","size":5})");
  EXPECT_EQ(code_of(system), "FORBIDDEN");
  // Scope send, as sending a message.
  auto scope =
      call("POST", "/v1/attachments", read_key_,
           R"({"from":"alice","conversation":"d:alice:bob","name":"a","content_type":"image/png","size":5})");
  EXPECT_EQ(scope.status, 403u);
  EXPECT_NE(detail_of(scope).find("'send'"), std::string::npos);
  auto method = call("GET", "/v1/attachments", send_key_);
  EXPECT_EQ(method.status, 405u);
}

TEST_F(AttachmentRoutesTest, DownloadUrlRefusals) {
  auto no_user = call("GET", std::string(kUrl), read_key_);
  EXPECT_EQ(no_user.status, 400u);
  EXPECT_EQ(code_of(no_user), "INVALID_ARGUMENT");
  EXPECT_NE(detail_of(no_user).find("'user'"), std::string::npos);
  auto bad_thumb = call("GET", std::string(kUrl) + "?user=bob&thumbnail=yes", read_key_);
  EXPECT_EQ(code_of(bad_thumb), "INVALID_ARGUMENT");
  auto unknown = call("GET", std::string(kUrl) + "?user=bob&size=1", read_key_);
  EXPECT_EQ(code_of(unknown), "INVALID_ARGUMENT");
  auto bad_id = call("GET", "/v1/conversations/d:alice:bob/messages/seven/attachments/a?user=bob", read_key_);
  EXPECT_EQ(code_of(bad_id), "INVALID_ARGUMENT");
  EXPECT_NE(detail_of(bad_id).find("message_id"), std::string::npos);
  // The frame's answer without a history store, as ATTACHMENT_URL's.
  auto no_history = call("GET", std::string(kUrl) + "?user=bob", read_key_);
  EXPECT_EQ(no_history.status, 503u);
  EXPECT_EQ(code_of(no_history), "UNAVAILABLE");
  // Scope read.
  auto scope = call("GET", std::string(kUrl) + "?user=bob", send_key_);
  EXPECT_EQ(scope.status, 403u);
  EXPECT_NE(detail_of(scope).find("'read'"), std::string::npos);
}

TEST_F(AttachmentRoutesTest, WithoutAnObjectStoreEveryDoorIsAttachmentsDisabled) {
  auto up =
      call("POST", "/v1/attachments", send_key_,
           R"({"from":"alice","conversation":"d:alice:bob","name":"a","content_type":"image/png","size":5})",
           false);
  EXPECT_EQ(up.status, 501u);
  EXPECT_EQ(code_of(up), "ATTACHMENTS_DISABLED");
  auto down = call("GET", std::string(kUrl) + "?user=bob", read_key_, "", false);
  EXPECT_EQ(down.status, 501u);
  EXPECT_EQ(code_of(down), "ATTACHMENTS_DISABLED");
  auto sent =
      call("POST", "/v1/messages", send_key_,
           R"({"from":"alice","to":"bob","body":"see","attachments":[{"attachment":"a1.x.y","name":"a",)"
           R"("content_type":"image/png","size":5}]})",
           false);
  EXPECT_EQ(sent.status, 501u);
  EXPECT_EQ(code_of(sent), "ATTACHMENTS_DISABLED");
}

TEST_F(AttachmentRoutesTest, MessageWithAnAttachmentNotUploadedIsRefusedBeforeTheAppend) {
  // No Outbox in the deps: a SEND that passed its checks would need one, so reaching the refusal shows the
  // attachments are checked before anything is appended (SEND's rule: ATTACHMENT_MISSING).
  auto sent =
      call("POST", "/v1/messages", send_key_,
           R"({"from":"alice","to":"bob","body":"see","attachments":[{"attachment":"a1.x.y","name":"a",)"
           R"("content_type":"image/png","size":5}]})");
  EXPECT_EQ(sent.status, 422u) << sent.body;
  EXPECT_EQ(code_of(sent), "ATTACHMENT_MISSING");
  auto bad =
      call("POST", "/v1/messages", send_key_, R"({"from":"alice","to":"bob","body":"x","attachments":[]})");
  EXPECT_EQ(code_of(bad), "INVALID_ARGUMENT");
}

}  // namespace
}  // namespace qim::api
