#include "attachments/s3/s3_options.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

namespace qim::attachments {
namespace {

S3EnvLookup env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::map<std::string, std::string> full() {
  return {{"QIM_S3_ENDPOINT", "http://127.0.0.1:41333/"},
          {"QIM_S3_BUCKET", "qim-attachments"},
          {"QIM_S3_ACCESS_KEY", "ak"},
          {"QIM_S3_SECRET_KEY", "sk"}};
}

TEST(S3Options, NoEndpointMeansNoObjectStore) {
  auto c = s3_config_from_env(env({{"QIM_S3_BUCKET", "b"}}));
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_FALSE(c->has_value());
}

TEST(S3Options, ReadsEveryVariableWithDefaults) {
  auto c = s3_config_from_env(env(full()));
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  ASSERT_TRUE(c->has_value());
  const S3Config& s = **c;
  EXPECT_EQ(s.endpoint, "http://127.0.0.1:41333");
  EXPECT_EQ(s.public_endpoint, "http://127.0.0.1:41333");
  EXPECT_EQ(s.region, "us-east-1");
  EXPECT_EQ(s.bucket, "qim-attachments");
  EXPECT_EQ(s.access_key, "ak");
  EXPECT_EQ(s.secret_key, "sk");
  EXPECT_TRUE(s.path_style);

  auto vars = full();
  vars["QIM_S3_PUBLIC_ENDPOINT"] = "https://files.example.com";
  vars["QIM_S3_REGION"] = "auto";
  vars["QIM_S3_PATH_STYLE"] = "false";
  auto d = s3_config_from_env(env(vars));
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ((*d)->public_endpoint, "https://files.example.com");
  EXPECT_EQ((*d)->region, "auto");
  EXPECT_FALSE((*d)->path_style);
}

TEST(S3Options, ErrorsNameTheVariable) {
  struct Case {
    std::string variable, value;
  };
  for (const auto& [variable, value] : std::vector<Case>{{"QIM_S3_ENDPOINT", "ftp://x"},
                                                         {"QIM_S3_ENDPOINT", "http://"},
                                                         {"QIM_S3_PUBLIC_ENDPOINT", "files.example.com"},
                                                         {"QIM_S3_BUCKET", "Bad_Bucket"},
                                                         {"QIM_S3_BUCKET", ""},
                                                         {"QIM_S3_ACCESS_KEY", ""},
                                                         {"QIM_S3_SECRET_KEY", ""},
                                                         {"QIM_S3_PATH_STYLE", "maybe"}}) {
    auto vars = full();
    vars[variable] = value;
    auto c = s3_config_from_env(env(vars));
    ASSERT_FALSE(c.ok()) << variable << "=" << value;
    EXPECT_EQ(c.code(), Errc::kConfig);
    EXPECT_NE(c.error().message().find(variable), std::string::npos) << c.error().message();
  }
}

TEST(S3Options, SecretFromFileAndNotBoth) {
  const std::string path = ::testing::TempDir() + "/qim-s3-secret";
  {
    std::ofstream out(path);
    out << "from-file\nignored\n";
  }
  auto vars = full();
  vars.erase("QIM_S3_SECRET_KEY");
  vars["QIM_S3_SECRET_KEY_FILE"] = path;
  auto c = s3_config_from_env(env(vars));
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ((*c)->secret_key, "from-file");

  vars["QIM_S3_SECRET_KEY"] = "direct";
  auto both = s3_config_from_env(env(vars));
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message().find("QIM_S3_SECRET_KEY"), std::string::npos);

  vars.erase("QIM_S3_SECRET_KEY");
  vars["QIM_S3_SECRET_KEY_FILE"] = path + ".missing";
  auto missing = s3_config_from_env(env(vars));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("QIM_S3_SECRET_KEY_FILE"), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace qim::attachments
