#include "gateway/tests/gateway_harness.h"

#include "auth/token.h"
#include "mailbox/store_options.h"

namespace qim::testing {

GatewaySetup gateway_setup(std::string secret, Log& outbox, MailboxStore& mailbox,
                           std::shared_ptr<const Clock> clock, uint32_t shard_count) {
  GatewaySetup s;
  s.options.port = 0;
  s.options.admin_port = 0;
  s.options.auth_secret = std::move(secret);
  s.deps.outbox = &outbox;
  s.deps.mailbox = &mailbox;
  s.deps.clock = std::move(clock);
  s.deps.shard_count = shard_count;
  return s;
}

std::unique_ptr<client::Client> connect_client(const Gateway& gateway, std::chrono::milliseconds timeout) {
  client::ClientOptions o;
  o.port = gateway.port();
  o.timeout = timeout;
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
  auto [o, d] = gateway_setup(secret_, log_, *store_, clock_, shard_count_);
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
