// The TLS contexts refuse bad files with errors naming them; the development pair loads and is kept.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "tls/dev_cert.h"
#include "tls/tls_context.h"

namespace qim::tls {
namespace {

namespace fs = std::filesystem;

class TlsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("qim-tls-test-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(TlsFiles, DevPairLoadsAsServerAndClientContextAndIsKeptAcrossCalls) {
  auto files = ensure_dev_cert((dir_ / "tls").string());
  ASSERT_TRUE(files.ok()) << files.error().to_string();
  EXPECT_EQ(fs::status(files->key).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  auto server = server_context(files->cert, files->key);
  ASSERT_TRUE(server.ok()) << server.error().to_string();
  auto client = client_context(files->cert);
  ASSERT_TRUE(client.ok()) << client.error().to_string();

  std::ifstream first(files->cert);
  const std::string before((std::istreambuf_iterator<char>(first)), {});
  auto again = ensure_dev_cert((dir_ / "tls").string());
  ASSERT_TRUE(again.ok());
  std::ifstream second(again->cert);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(second)), {}), before);
}

TEST_F(TlsFiles, BadFilesAreConfigErrorsNamingTheVariable) {
  auto files = ensure_dev_cert((dir_ / "a").string());
  ASSERT_TRUE(files.ok());
  auto other = ensure_dev_cert((dir_ / "b").string());
  ASSERT_TRUE(other.ok());
  const std::string garbage = write("garbage.pem", "not a certificate\n");

  auto missing = server_context((dir_ / "none.pem").string(), files->key);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), Errc::kConfig);
  EXPECT_NE(missing.error().message().find("QIM_TLS_CERT="), std::string::npos) << missing.error().message();
  EXPECT_NE(missing.error().message().find("no such file"), std::string::npos);

  auto bad_cert = server_context(garbage, files->key);
  ASSERT_FALSE(bad_cert.ok());
  EXPECT_NE(bad_cert.error().message().find("QIM_TLS_CERT='" + garbage + "': not a PEM"), std::string::npos)
      << bad_cert.error().message();

  auto bad_key = server_context(files->cert, garbage);
  ASSERT_FALSE(bad_key.ok());
  EXPECT_NE(bad_key.error().message().find("QIM_TLS_KEY='" + garbage + "': not a PEM"), std::string::npos)
      << bad_key.error().message();

  auto mismatch = server_context(files->cert, other->key);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().code(), Errc::kConfig);
  EXPECT_NE(mismatch.error().message().find("is not the key of the certificate"), std::string::npos)
      << mismatch.error().message();

  auto bad_ca = client_context(garbage);
  ASSERT_FALSE(bad_ca.ok());
  EXPECT_EQ(bad_ca.error().code(), Errc::kConfig);
  EXPECT_NE(bad_ca.error().message().find(garbage), std::string::npos);
}

}  // namespace
}  // namespace qim::tls
