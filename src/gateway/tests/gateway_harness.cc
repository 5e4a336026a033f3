#include "gateway/tests/gateway_harness.h"

#include "auth/token.h"
#include "mailbox/store_options.h"

namespace qim::testing {

std::unique_ptr<client::Client> connect_client(const Gateway& gateway) {
  client::ClientOptions o;
  o.port = gateway.port();
  auto c = client::Client::connect(o);
  EXPECT_TRUE(c.ok()) << c.error().to_string();
  return std::move(c).value();
}

void GatewayHarness::start(const std::function<void(GatewayOptions&)>& tweak) {
  if (gateway_) gateway_->stop();
  if (!store_) {
    StoreOptions so;
    so.backend = "memory";
    so.clock = clock_;
    so.shard_count = shard_count_;
    store_ = std::move(open_mailbox_store(so)).value();
  }
  GatewayOptions o;
  o.port = 0;
  o.admin_port = 0;
  o.auth_secret = secret_;
  GatewayDeps d;
  d.outbox = &log_;
  d.mailbox = store_.get();
  d.clock = clock_;
  d.shard_count = shard_count_;
  configure(o, d);
  if (tweak) tweak(o);
  gateway_ = make_gateway(o, d);
  auto st = gateway_->start();
  ASSERT_TRUE(st.ok()) << st.error().to_string();
}

std::string GatewayHarness::token(std::string_view user, std::string_view device, int64_t ttl) {
  return *mint_token(secret_, *UserId::parse(user), *DeviceId::parse(device), ttl, *clock_);
}

std::unique_ptr<client::Client> GatewayHarness::login(std::string_view user, std::string_view device) {
  auto c = connect();
  auto ok = c->auth(token(user, device));
  EXPECT_TRUE(ok.ok()) << user << ": " << ok.error().to_string();
  return c;
}

}  // namespace qim::testing
