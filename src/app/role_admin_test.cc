// The admin server of a role process without a gateway answers what a gateway's does.
#include "app/role_admin.h"

#include <gtest/gtest.h>

#include <atomic>

#include "app/admin_client.h"

namespace qim {
namespace {

TEST(RoleAdmin, ServesHealthMetricsAndRoutesUntilStopped) {
  std::atomic<int> scrapes{0};
  RoleAdmin admin([&scrapes] { return "qim_test_scrapes_total " + std::to_string(++scrapes) + "\n"; },
                  {AdminRoute{"POST", "/admin/knob", [](const std::string& query, const std::string&) {
                                return AdminResponse{200, "knob " + query + "\n"};
                              }}});
  ASSERT_TRUE(admin.start("127.0.0.1", 0).ok());
  ASSERT_GT(admin.port(), 0);
  auto health = admin_request(admin.port(), "GET", "/healthz");
  ASSERT_TRUE(health.ok()) << health.error().to_string();
  EXPECT_EQ(*health, "ok\n");
  EXPECT_EQ(*admin_request(admin.port(), "GET", "/metrics"), "qim_test_scrapes_total 1\n");
  EXPECT_EQ(*admin_request(admin.port(), "GET", "/metrics"), "qim_test_scrapes_total 2\n");
  EXPECT_EQ(*admin_request(admin.port(), "POST", "/admin/knob?x=1"), "knob x=1\n");
  auto wrong = admin_request(admin.port(), "GET", "/admin/knob");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.code(), Errc::kInvalidArgument);  // 405: that route takes POST
  const uint16_t port = admin.port();
  admin.stop();
  EXPECT_EQ(admin_request(port, "GET", "/healthz").code(), Errc::kTransport) << "still serving after stop()";
}

TEST(RoleAdmin, ABadAddressIsAConfigErrorAndAPortInUseAnIoError) {
  RoleAdmin bad([] { return std::string(); }, {});
  EXPECT_EQ(bad.start("not-an-address", 0).code(), Errc::kConfig);
  RoleAdmin first([] { return std::string(); }, {});
  ASSERT_TRUE(first.start("127.0.0.1", 0).ok());
  RoleAdmin second([] { return std::string(); }, {});
  Status taken = second.start("127.0.0.1", first.port());
  EXPECT_EQ(taken.code(), Errc::kIo);
  EXPECT_NE(taken.error().message().find(std::to_string(first.port())), std::string::npos)
      << taken.error().message();
}

}  // namespace
}  // namespace qim
