// The daily upload budget's contract (attachments/upload_budget.h; docs/adr/0158) on memory (`qim up`) and on
// the routing Redis (the distributed deployment; QIM_TEST_ROUTING_REDIS, skipped when unset): idempotent
// charges, the byte and upload limits, the UTC day, two gateways' handles on one budget. Then, on Redis
// only: the hash's expiry, and a Redis that does not answer (the charge fails; ATTACH is refused
// UNAVAILABLE).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "attachments/attachment_service.h"
#include "attachments/memory_object_store.h"
#include "attachments/redis/redis_upload_budget.h"
#include "core/clock.h"
#include "delivery/redis/routing_test_env.h"
#include "mailbox/redis/redis_test_env.h"

namespace qim::attachments {
namespace {

using Outcome = BudgetCharge::Outcome;

const UserId kAlice = UserId::parse("alice").value();
const UserId kBob = UserId::parse("bob").value();
// Noon of a day in 2026: the tests move within it and over its end.
constexpr int64_t kDay = 20'500;
constexpr int64_t kNoon = kDay * kDayMs + kDayMs / 2;

// Forwards to a budget it does not own: a second handle on a memory budget, as a second gateway has one on
// the Redis.
class Handle final : public UploadBudget {
 public:
  explicit Handle(UploadBudget& b) : b_(b) {}
  Result<BudgetCharge> charge(const UserId& user, std::string_view upload, uint64_t bytes, int64_t now_ms,
                              const UploadLimits& limits) override {
    return b_.charge(user, upload, bytes, now_ms, limits);
  }
  Result<BudgetCharge> charge_claimed(const UserId& user, const UploadClaim& claim, std::string_view upload,
                                      uint64_t bytes, int64_t now_ms, const UploadLimits& limits) override {
    return b_.charge_claimed(user, claim, upload, bytes, now_ms, limits);
  }

 private:
  UploadBudget& b_;
};

class UploadBudgetContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "memory") {
      memory_ = make_memory_upload_budget();
      return;
    }
    auto endpoints = qim::testing::test_routing_endpoints();
    if (endpoints.empty()) GTEST_SKIP() << qim::testing::kTestRoutingRedisSkipMessage;
    options_.endpoints = endpoints;
    options_.key_prefix = unique_test_prefix("budget");
  }
  // A new handle on the test's budget: each is another gateway's.
  std::unique_ptr<UploadBudget> handle() {
    if (memory_) return std::make_unique<Handle>(*memory_);
    auto b = RedisUploadBudget::create(options_);
    EXPECT_TRUE(b.ok()) << b.error().to_string();
    return std::move(b).value();
  }
  // Charges and expects an answer (not an error).
  static BudgetCharge charged(UploadBudget& b, const UserId& who, std::string_view upload, uint64_t bytes,
                              UploadLimits limits, int64_t now = kNoon) {
    auto c = b.charge(who, upload, bytes, now, limits);
    EXPECT_TRUE(c.ok()) << c.error().to_string();
    return c.ok() ? *c : BudgetCharge{Outcome::kOverBytes, ~0ull, ~0ull};
  }

  std::unique_ptr<UploadBudget> memory_;
  RoutingOptions options_;
};

TEST_P(UploadBudgetContract, ChargesUpToTheByteLimitPerUser) {
  auto b = handle();
  const UploadLimits limits{100, 10};
  auto c = charged(*b, kAlice, "u1", 60, limits);
  EXPECT_EQ(c.outcome, Outcome::kCharged);
  EXPECT_EQ(c.bytes_used, 60u);
  EXPECT_EQ(c.uploads_used, 1u);
  c = charged(*b, kAlice, "u2", 40, limits);  // exactly the limit fits
  EXPECT_EQ(c.outcome, Outcome::kCharged);
  EXPECT_EQ(c.bytes_used, 100u);
  c = charged(*b, kAlice, "u3", 1, limits);
  EXPECT_EQ(c.outcome, Outcome::kOverBytes);
  EXPECT_FALSE(c.granted());
  EXPECT_EQ(c.bytes_used, 100u) << "a refused charge adds nothing";
  EXPECT_EQ(c.uploads_used, 2u);
  c = charged(*b, kBob, "u3", 100, limits);  // bob's own budget, even for the same upload id
  EXPECT_EQ(c.outcome, Outcome::kCharged);
  EXPECT_EQ(c.bytes_used, 100u);
}

TEST_P(UploadBudgetContract, ARetriedChargeOfTheSameUploadIsCountedOnce) {
  auto b = handle();
  const UploadLimits limits{100, 10};
  EXPECT_EQ(charged(*b, kAlice, "u1", 60, limits).outcome, Outcome::kCharged);
  for (int retry = 0; retry < 3; ++retry) {
    auto c = charged(*b, kAlice, "u1", 60, limits);
    EXPECT_EQ(c.outcome, Outcome::kRepeated);
    EXPECT_TRUE(c.granted());
    EXPECT_EQ(c.bytes_used, 60u);
    EXPECT_EQ(c.uploads_used, 1u);
  }
  // A repeat is granted whatever it declares and whatever the limits are now: it was granted before.
  EXPECT_EQ(charged(*b, kAlice, "u1", 99, UploadLimits{1, 1}).outcome, Outcome::kRepeated);
  EXPECT_EQ(charged(*b, kAlice, "u2", 40, limits).outcome, Outcome::kCharged);  // still room for 40
  // A refused charge records nothing: its retry is decided again (here: refused, then, under a larger
  // limit, charged).
  EXPECT_EQ(charged(*b, kAlice, "u3", 10, limits).outcome, Outcome::kOverBytes);
  EXPECT_EQ(charged(*b, kAlice, "u3", 10, limits).outcome, Outcome::kOverBytes);
  auto c = charged(*b, kAlice, "u3", 10, UploadLimits{110, 10});
  EXPECT_EQ(c.outcome, Outcome::kCharged);
  EXPECT_EQ(c.bytes_used, 110u);
  EXPECT_EQ(c.uploads_used, 3u);
}

TEST_P(UploadBudgetContract, TheNumberOfUploadsIsBounded) {
  auto b = handle();
  const UploadLimits limits{1000, 3};
  for (const char* u : {"u1", "u2", "u3"})
    EXPECT_EQ(charged(*b, kAlice, u, 1, limits).outcome, Outcome::kCharged);
  auto c = charged(*b, kAlice, "u4", 1, limits);
  EXPECT_EQ(c.outcome, Outcome::kOverUploads);
  EXPECT_EQ(c.uploads_used, 3u);
  EXPECT_EQ(c.bytes_used, 3u);
  EXPECT_EQ(charged(*b, kAlice, "u2", 1, limits).outcome, Outcome::kRepeated);  // a granted one, again
  EXPECT_EQ(charged(*b, kBob, "u4", 1, limits).outcome, Outcome::kCharged);
}

TEST_P(UploadBudgetContract, ANewUtcDayStartsTheBudgetAgain) {
  auto b = handle();
  const UploadLimits limits{100, 2};
  const int64_t last_ms = (kDay + 1) * kDayMs - 1;  // the day's last millisecond
  EXPECT_EQ(charged(*b, kAlice, "u1", 100, limits, last_ms).outcome, Outcome::kCharged);
  EXPECT_EQ(charged(*b, kAlice, "u2", 1, limits, last_ms).outcome, Outcome::kOverBytes);
  // Midnight UTC: a new day. The same upload id there is a new charge (another day's budget).
  auto c = charged(*b, kAlice, "u1", 100, limits, last_ms + 1);
  EXPECT_EQ(c.outcome, Outcome::kCharged);
  EXPECT_EQ(c.bytes_used, 100u);
  EXPECT_EQ(c.uploads_used, 1u);
  // A gateway whose clock is still before midnight charges the old day, which is still full.
  EXPECT_EQ(charged(*b, kAlice, "u3", 1, limits, last_ms).outcome, Outcome::kOverBytes);
  // The upload limit starts again too.
  EXPECT_EQ(charged(*b, kBob, "u1", 1, limits, last_ms).outcome, Outcome::kCharged);
  EXPECT_EQ(charged(*b, kBob, "u2", 1, limits, last_ms).outcome, Outcome::kCharged);
  EXPECT_EQ(charged(*b, kBob, "u3", 1, limits, last_ms).outcome, Outcome::kOverUploads);
  EXPECT_EQ(charged(*b, kBob, "u3", 1, limits, last_ms + 1).outcome, Outcome::kCharged);
}

// Two gateways charging one user at once, each on its own handle: together they grant exactly the budget.
TEST_P(UploadBudgetContract, ConcurrentChargesFromTwoGatewaysNeverPassTheLimit) {
  auto one = handle();
  auto two = handle();
  const UploadLimits limits{50, 10'000};
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      UploadBudget& b = t % 2 == 0 ? *one : *two;
      for (int i = 0; i < 30; ++i) {
        // Threads 0 and 1 charge the same ids (one upload charged through both): counted once.
        const std::string id = (t < 2 ? std::string("a") : "b" + std::to_string(t)) + "-" + std::to_string(i);
        auto c = b.charge(kAlice, id, 1, kNoon, limits);
        ASSERT_TRUE(c.ok()) << c.error().to_string();
        if (c->outcome == Outcome::kCharged) granted++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(granted.load(), 50);
  auto c = charged(*one, kAlice, "last", 1, limits);
  EXPECT_EQ(c.outcome, Outcome::kOverBytes);
  EXPECT_EQ(c.bytes_used, 50u);
  EXPECT_EQ(c.uploads_used, 50u);
}

TEST_P(UploadBudgetContract, BadArgumentsChargeNothing) {
  auto b = handle();
  const UploadLimits limits{100, 10};
  EXPECT_EQ(b->charge(kAlice, "", 1, kNoon, limits).code(), Errc::kInvalidArgument);
  EXPECT_EQ(b->charge(kAlice, std::string(kMaxUploadIdBytes + 1, 'x'), 1, kNoon, limits).code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(b->charge(kAlice, "u1", 0, kNoon, limits).code(), Errc::kInvalidArgument);
  auto c = charged(*b, kAlice, std::string(kMaxUploadIdBytes, 'x'), 100, limits);
  EXPECT_EQ(c.outcome, Outcome::kCharged);
  EXPECT_EQ(c.uploads_used, 1u);
}

// A client's claim (charge_claimed, docs/adr/0161): the first charge records it with its attachment; a
// repeat with the same declaration before expires_at answers that attachment and charges nothing, whatever
// the day and the limits; another declaration then is kConflict; after expires_at the id is free again.
TEST_P(UploadBudgetContract, AClaimIsChargedOnceAndAnswersItsFirstGrant) {
  auto b = handle();
  const int64_t expires = kNoon + 300'000;
  auto claimed = [&](const UserId& who, std::string_view client, std::string_view declaration,
                     std::string_view attachment, std::string_view upload, int64_t now = kNoon,
                     int64_t until = 0, UploadLimits l = UploadLimits{100, 2}) {
    auto c = b->charge_claimed(who, UploadClaim{client, declaration, attachment, until ? until : expires},
                               upload, 10, now, l);
    EXPECT_TRUE(c.ok()) << c.error().to_string();
    return c.ok() ? *c : BudgetCharge{Outcome::kOverBytes, ~0ull, ~0ull};
  };
  auto c = claimed(kAlice, "c1", "D1", "A1", "k1");
  EXPECT_EQ(c.outcome, Outcome::kCharged);
  EXPECT_EQ(c.attachment, "A1");
  EXPECT_EQ(c.expires_at_ms, expires);
  // The repeat mints another attachment and key: the claim answers the first, and nothing is charged.
  c = claimed(kAlice, "c1", "D1", "A2", "k2", kNoon + 1000, kNoon + 301'000);
  EXPECT_EQ(c.outcome, Outcome::kRepeated);
  EXPECT_TRUE(c.granted());
  EXPECT_EQ(c.attachment, "A1");
  EXPECT_EQ(c.expires_at_ms, expires);
  EXPECT_EQ(c.uploads_used, 1u);
  EXPECT_EQ(c.bytes_used, 10u);
  // Another declaration under the claim: refused, nothing charged, the claim unchanged.
  c = claimed(kAlice, "c1", "D2", "A3", "k3");
  EXPECT_EQ(c.outcome, Outcome::kConflict);
  EXPECT_FALSE(c.granted());
  EXPECT_EQ(c.uploads_used, 1u);
  EXPECT_EQ(claimed(kAlice, "c1", "D1", "A4", "k4").attachment, "A1");
  // Another user's claim of the same client id is their own.
  c = claimed(kBob, "c1", "D2", "B1", "k1");
  EXPECT_EQ(c.outcome, Outcome::kCharged);
  EXPECT_EQ(c.attachment, "B1");
  // Within its validity a claim answers even when the limits are used up (it was granted before).
  EXPECT_EQ(claimed(kAlice, "c2", "D1", "A5", "k5").outcome, Outcome::kCharged);  // alice's 2nd of 2
  EXPECT_EQ(claimed(kAlice, "c3", "D1", "A6", "k6").outcome, Outcome::kOverUploads);
  EXPECT_EQ(claimed(kAlice, "c1", "D1", "A7", "k7", kNoon, 0, UploadLimits{1, 1}).attachment, "A1");
  // A refused claimed charge recorded no claim: its retry under room is charged, with its own attachment.
  c = claimed(kAlice, "c3", "D1", "A8", "k8", kNoon, 0, UploadLimits{100, 3});
  EXPECT_EQ(c.outcome, Outcome::kCharged);
  EXPECT_EQ(c.attachment, "A8");
  // At expires_at the claim is gone: the id is a new upload (a new charge, a new attachment).
  c = claimed(kAlice, "c1", "D2", "A9", "k9", expires, expires + 300'000, UploadLimits{100, 10});
  EXPECT_EQ(c.outcome, Outcome::kCharged);
  EXPECT_EQ(c.attachment, "A9");
  EXPECT_EQ(c.uploads_used, 4u);
}

// A claim made just before midnight UTC answers its repeat just after it: no charge on the new day.
TEST_P(UploadBudgetContract, AClaimOutlivesMidnightWithinItsValidity) {
  auto b = handle();
  const int64_t before = (kDay + 1) * kDayMs - 1000;
  const UploadClaim first{"c1", "D1", "A1", before + 300'000};
  ASSERT_EQ(b->charge_claimed(kAlice, first, "k1", 10, before, {100, 1})->outcome, Outcome::kCharged);
  const UploadClaim repeat{"c1", "D1", "A2", before + 302'000};
  auto c = b->charge_claimed(kAlice, repeat, "k2", 10, before + 2000, {100, 1});
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->outcome, Outcome::kRepeated);
  EXPECT_EQ(c->attachment, "A1");
  EXPECT_EQ(c->uploads_used, 0u) << "the new day was charged nothing";
  EXPECT_EQ(charged(*b, kAlice, "k3", 10, {100, 1}, before + 2000).outcome, Outcome::kCharged);
}

// Two gateways repeating one claimed ATTACH at once (a client that reconnected to the other one): exactly
// one charge, and every answer names the same attachment.
TEST_P(UploadBudgetContract, ConcurrentRepeatsOfAClaimOnTwoGatewaysChargeOnce) {
  auto one = handle();
  auto two = handle();
  std::atomic<int> charged_count{0};
  std::vector<std::string> answers(40);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      UploadBudget& b = t % 2 == 0 ? *one : *two;
      for (int i = 0; i < 10; ++i) {
        const std::string minted = "A" + std::to_string(t) + "-" + std::to_string(i);
        auto c = b.charge_claimed(kAlice, UploadClaim{"same", "D1", minted, kNoon + 300'000}, "k" + minted, 1,
                                  kNoon, UploadLimits{1000, 1000});
        ASSERT_TRUE(c.ok()) << c.error().to_string();
        if (c->outcome == Outcome::kCharged) charged_count++;
        answers[t * 10 + i] = c->attachment;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(charged_count.load(), 1);
  for (const std::string& a : answers) EXPECT_EQ(a, answers[0]);
  EXPECT_EQ(charged(*one, kAlice, "other", 1, UploadLimits{1000, 1000}).uploads_used, 2u);
}

TEST_P(UploadBudgetContract, BadClaimsChargeNothing) {
  auto b = handle();
  const UploadLimits limits{100, 10};
  for (std::string bad : {std::string(), std::string("a b"), std::string(kMaxClientUploadIdBytes + 1, 'x'),
                          std::string("\x7f")})
    EXPECT_EQ(
        b->charge_claimed(kAlice, UploadClaim{bad, "D1", "A1", kNoon + 1000}, "k1", 1, kNoon, limits).code(),
        Errc::kInvalidArgument)
        << bad;
  EXPECT_EQ(
      b->charge_claimed(kAlice, UploadClaim{"c1", "", "A1", kNoon + 1000}, "k1", 1, kNoon, limits).code(),
      Errc::kInvalidArgument);
  EXPECT_EQ(charged(*b, kAlice, "k1", 1, limits).uploads_used, 1u) << "nothing was charged before";
}

INSTANTIATE_TEST_SUITE_P(Backends, UploadBudgetContract, ::testing::Values("memory", "redis"),
                         [](const auto& info) { return info.param; });

// ---------------------------------------------------------------------------------------------- Redis only

class RedisUploadBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto endpoints = qim::testing::test_routing_endpoints();
    if (endpoints.empty()) GTEST_SKIP() << qim::testing::kTestRoutingRedisSkipMessage;
    options_.endpoints = endpoints;
    options_.key_prefix = unique_test_prefix("budget");
  }
  RoutingOptions options_;
};

// The day's hash expires after its day (plus the grace), measured from the charge.
TEST_F(RedisUploadBudgetTest, TheDaysHashExpiresAfterItsDay) {
  auto budget = RedisUploadBudget::create(options_).value();
  const int64_t one_hour_before_midnight = (kDay + 1) * kDayMs - 3'600'000;
  ASSERT_TRUE(budget->charge(kAlice, "u1", 5, one_hour_before_midnight, {100, 10}).ok());
  auto redis = RoutingRedis::create(options_).value();
  const RedisCommand pttl{"PTTL", budget->key(kAlice, kDay)};
  auto r = redis->run(budget->instance_of(kAlice), {&pttl, 1});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->front().kind, RedisReply::Kind::kInteger);
  const int64_t ttl = r->front().integer;
  EXPECT_LE(ttl, 3'600'000 + kBudgetGraceMs);
  EXPECT_GT(ttl, 3'600'000 + kBudgetGraceMs - 60'000) << "the TTL runs to the end of the day plus the grace";
  const RedisCommand fields{"HGETALL", budget->key(kAlice, kDay)};
  r = redis->run(budget->instance_of(kAlice), {&fields, 1});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->front().elements.size(), 4u) << "\"bytes\" and one field per upload";
}

// A Redis that does not answer: the charge is an error (Transport or Timeout), and the ATTACH over it is
// refused UNAVAILABLE after its one retry; nothing was granted.
TEST_F(RedisUploadBudgetTest, AChargeTheRedisDoesNotAnswerRefusesTheAttachUnavailable) {
  RoutingOptions dead = options_;
  dead.endpoints = {"127.0.0.1:1"};  // nothing listens on port 1
  auto budget = RedisUploadBudget::create(dead).value();
  auto c = budget->charge(kAlice, "u1", 5, kNoon, {100, 10});
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.code() == Errc::kTransport || c.code() == Errc::kTimeout) << c.error().to_string();

  auto clock = std::make_shared<ManualClock>(kNoon);
  auto store = make_memory_object_store(clock);
  AttachmentService service(*store, "secret", AttachmentOptions{}, clock, budget.get());
  auto refused = service.grant_upload(kAlice, ConversationId::parse("d:alice:bob").value(),
                                      UploadRequest{"f.txt", "text/plain", 5, std::nullopt});
  auto* r = std::get_if<Refusal>(&refused);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->code, WireCode::kUnavailable) << r->message;
}

// Two services (two gateways) over the Redis budget, each with its own connections: one budget together.
TEST_F(RedisUploadBudgetTest, TwoGatewaysOverTheRoutingRedisGrantOneBudget) {
  auto clock = std::make_shared<ManualClock>(kNoon);
  auto store = make_memory_object_store(clock);
  AttachmentOptions o;
  o.daily_bytes = 10;
  auto b1 = RedisUploadBudget::create(options_).value();
  auto b2 = RedisUploadBudget::create(options_).value();
  AttachmentService one(*store, "secret", o, clock, b1.get());
  AttachmentService two(*store, "secret", o, clock, b2.get());
  const auto conv = ConversationId::parse("d:alice:bob").value();
  auto ask = [&](AttachmentService& s, uint64_t size) {
    return s.grant_upload(kAlice, conv, UploadRequest{"f.txt", "text/plain", size, std::nullopt});
  };
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(one, 7)));
  EXPECT_TRUE(std::holds_alternative<UploadGrant>(ask(two, 3)));
  auto over = ask(two, 1);
  ASSERT_TRUE(std::holds_alternative<Refusal>(over));
  EXPECT_EQ(std::get<Refusal>(over).code, WireCode::kQuotaExceeded);
  over = ask(one, 1);
  ASSERT_TRUE(std::holds_alternative<Refusal>(over));
  EXPECT_EQ(std::get<Refusal>(over).code, WireCode::kQuotaExceeded);
}

}  // namespace
}  // namespace qim::attachments
