#pragma once
// The set-up the gateway tests share: a gateway on ephemeral ports over an in-memory Outbox (log_) and the
// memory mailbox store, a manual clock, and clients that connect and log in over real WebSockets.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "client/client.h"
#include "core/clock.h"
#include "gateway/gateway.h"
#include "gateway/tests/fake_log.h"
#include "mailbox/contract_store.h"

namespace qim::testing {

// What a test gateway starts with: ephemeral client and admin ports, `secret`, SENDs to `outbox`, SYNC
// reads from `mailbox`.
struct GatewaySetup {
  GatewayOptions options;
  GatewayDeps deps;
};
GatewaySetup gateway_setup(std::string secret, Log& outbox, MailboxStore& mailbox,
                           std::shared_ptr<const Clock> clock, uint32_t shard_count);

// A client connected to `gateway` (a failed expectation if it cannot connect).
std::unique_ptr<client::Client> connect_client(
    const Gateway& gateway, std::chrono::milliseconds timeout = client::ClientOptions{}.timeout);

class GatewayHarness : public ::testing::Test {
 protected:
  explicit GatewayHarness(std::string secret, uint32_t shard_count = 16, uint32_t log_partitions = 4)
      : secret_(std::move(secret)), shard_count_(shard_count), log_(log_partitions) {}
  void TearDown() override {
    if (gateway_) gateway_->stop();
    gateway_.reset();  // before the dependencies a derived fixture owns
  }

  // Opens the memory mailbox store (once) and (re)starts the gateway over it: configure(), then `tweak`,
  // may change the options; configure() also adds dependencies (a history, admin routes).
  void start(const std::function<void(GatewayOptions&)>& tweak = {});
  virtual void configure(GatewayOptions&, GatewayDeps&) {}

  std::unique_ptr<client::Client> connect() { return connect_client(*gateway_); }
  // A token for `user` on `device`, minted with the gateway's secret, valid `ttl` ms from now.
  std::string token(std::string_view user, std::string_view device = "d1", int64_t ttl = 3'600'000);
  // A connected client that passed AUTH as `user` on `device`.
  std::unique_ptr<client::Client> login(std::string_view user, std::string_view device = "d1");

  const std::string secret_;
  const uint32_t shard_count_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'800'000'000'000);
  FakeLog log_;
  std::unique_ptr<MailboxStore> store_;
  std::unique_ptr<Gateway> gateway_;
};

}  // namespace qim::testing
