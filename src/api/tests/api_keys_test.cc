#include "api/api_keys.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace qim::api {
namespace {

// A directory of the test's own, removed after it.
class ApiKeyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("qim-api-keys-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string temp_file(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST(ApiKeys, ScopesParseAndFormat) {
  auto s = parse_scopes("send,read");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, static_cast<Scopes>(Scope::kSend) | static_cast<Scopes>(Scope::kRead));
  EXPECT_EQ(format_scopes(*s), "send,read");
  EXPECT_EQ(*parse_scopes("all"), kAllScopes);
  EXPECT_EQ(format_scopes(kAllScopes), "send,groups,read,tokens,users");
  auto bad = parse_scopes("send,admin");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("'admin'"), std::string::npos);
  EXPECT_FALSE(parse_scopes("").ok());
}

TEST(ApiKeys, HashIsSha256Hex) {
  // SHA-256("abc"), FIPS 180-2 appendix B.1.
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(ApiKeys, ConstantTimeCompare) {
  EXPECT_TRUE(equal_constant_time("abcdef", "abcdef"));
  EXPECT_FALSE(equal_constant_time("abcdef", "abcdeg"));
  EXPECT_FALSE(equal_constant_time("abcdef", "abcde"));
  EXPECT_TRUE(equal_constant_time("", ""));
}

TEST(ApiKeys, KeyIdShape) {
  EXPECT_EQ(key_id_of("qim_0123456789ab_secret"), "0123456789ab");
  EXPECT_FALSE(key_id_of("qim_0123456789aB_secret"));
  EXPECT_FALSE(key_id_of("qim_0123456789ab"));
  EXPECT_FALSE(key_id_of("Bearer x"));
}

TEST_F(ApiKeyFiles, FileStoresOnlyTheHash) {
  const std::string path = temp_file("hash-only");
  auto created = create_api_key(path, static_cast<Scopes>(Scope::kSend), "billing", 1000);
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  EXPECT_TRUE(created->key.starts_with("qim_" + created->record.id + "_"));
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find(created->key.substr(17)), std::string::npos) << "the secret must not be stored";
  EXPECT_NE(text.find(sha256_hex(created->key)), std::string::npos);
  auto perms = std::filesystem::status(path).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::others_read, std::filesystem::perms::none);
}

TEST_F(ApiKeyFiles, CreateVerifyRevoke) {
  const std::string path = temp_file("lifecycle");
  auto a = create_api_key(path, static_cast<Scopes>(Scope::kSend), "a", 1000);
  auto b = create_api_key(path, kAllScopes, "b", 2000);
  ASSERT_TRUE(a.ok() && b.ok());
  ApiKeyVerifier verifier(path);
  auto va = verifier.verify(a->key);
  ASSERT_TRUE(va.ok()) << va.error().to_string();
  EXPECT_EQ(va->id, a->record.id);
  EXPECT_EQ(va->scopes, static_cast<Scopes>(Scope::kSend));
  // The right id with a wrong secret, a malformed key: unknown.
  std::string wrong = a->key;
  wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
  auto vw = verifier.verify(wrong);
  ASSERT_FALSE(vw.ok());
  EXPECT_EQ(vw.code(), Errc::kUnauthenticated);
  EXPECT_EQ(vw.error().message(), "unknown API key");
  EXPECT_FALSE(verifier.verify("nonsense").ok());
  // Revoked: the running verifier sees it at its next call (the file changed).
  ASSERT_TRUE(revoke_api_key(path, a->record.id, 3000).ok());
  auto vr = verifier.verify(a->key);
  ASSERT_FALSE(vr.ok());
  EXPECT_EQ(vr.code(), Errc::kUnauthenticated);
  EXPECT_NE(vr.error().message().find("revoked"), std::string::npos);
  EXPECT_TRUE(verifier.verify(b->key).ok());
  auto list = list_api_keys(path);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].revoked_ms, 3000);
  EXPECT_EQ((*list)[1].revoked_ms, 0);
  EXPECT_EQ(revoke_api_key(path, "ffffffffffff", 4000).code(), Errc::kNotFound);
}

TEST_F(ApiKeyFiles, CreateMakesTheDirectory) {
  const std::string path = temp_file("fresh") + "-dir/sub/api-keys";
  auto created = create_api_key(path, kAllScopes, "", 1);
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST_F(ApiKeyFiles, MalformedFileIsAnError) {
  EXPECT_FALSE(parse_key_file("v1\tnot-enough\n").ok());
  EXPECT_TRUE(parse_key_file("# comment\n\n").ok());
  EXPECT_FALSE(create_api_key(temp_file("noscope"), 0, "x", 1).ok());
  EXPECT_FALSE(create_api_key(temp_file("tab"), kAllScopes, "a\tb", 1).ok());
}

}  // namespace
}  // namespace qim::api
