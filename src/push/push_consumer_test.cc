#include "push/push_consumer.h"

#include <gtest/gtest.h>

#include <thread>

#include "core/conversation.h"
#include "inbox/memory/memory_inbox.h"
#include "inbox/privacy.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

struct Provider {
  std::mutex mu;
  std::vector<std::pair<PushTarget, PushNotification>> got;
  std::set<std::string> reject;  // tokens the provider calls invalid
  size_t count() {
    std::lock_guard l(mu);
    return got.size();
  }
};

class FakeSender final : public PushSender {
 public:
  explicit FakeSender(Provider& p) : p_(p) {}
  PushResult send(const PushTarget& t, const PushNotification& n) override {
    std::lock_guard l(p_.mu);
    p_.got.emplace_back(t, n);
    if (p_.reject.contains(t.token)) return {PushOutcome::kRejected, "410"};
    return {PushOutcome::kSent, "201"};
  }

 private:
  Provider& p_;
};

// Only devices() matters to the consumer.
class FakeSessions final : public SessionStore {
 public:
  std::mutex mu;
  std::map<std::string, std::vector<DeviceSession>> by_user;
  Result<RevocationMarks> marks(const UserId&) override { return RevocationMarks{}; }
  Status revoke(const UserId&, const std::optional<DeviceId>&, int64_t) override { return {}; }
  Result<RevocationChanges> changes_since(std::optional<uint64_t>) override { return RevocationChanges{}; }
  void connection_opened(const UserId&, const DeviceId&, int64_t) override {}
  void connection_closed(const UserId&, const DeviceId&) override {}
  Result<std::vector<DeviceSession>> devices(const UserId& user) override {
    std::lock_guard l(mu);
    return by_user[user.str()];
  }
};

template <typename Pred>
bool eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return pred();
}

class PushConsumerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outbox_ = testing::open_test_log(dir_.sub("outbox"), 1, "outbox");
    BackendContext ctx;
    ctx.clock = clock_;
    backend_ = make_memory_inbox(ctx);
  }
  void TearDown() override {
    if (consumer_) consumer_->stop();
  }

  void send(const std::string& from, const std::string& to, const std::string& body) {
    OutboxRecord r;
    r.sender = UserId::parse(from).value();
    r.sender_device = DeviceId::parse("d1").value();
    r.conversation = direct_conversation(r.sender, UserId::parse(to).value()).value();
    r.server_time_ms = clock_->now_ms();
    r.body = body;
    ASSERT_TRUE(outbox_->append_sync(0, "", encode_outbox_record(r)).ok());
    ++appended_;
  }
  void register_device(const std::string& user, const std::string& device, const std::string& token) {
    ASSERT_TRUE(PushRegistry(*backend_)
                    .register_device(UserId::parse(user).value(), DeviceId::parse(device).value(),
                                     PushProvider::kFcm, token, clock_->now_ms())
                    .ok());
  }
  void start(uint32_t per_minute = 10) {
    PushConsumerOptions o;
    o.poll_wait = 10ms;
    o.collapse = 2000ms;
    o.per_device_per_minute = per_minute;
    o.start_at_end = false;
    o.clock = clock_;
    PushDeps deps;
    deps.outbox = outbox_.get();
    deps.registry = backend_.get();
    deps.sessions = &sessions_;
    consumer_ = std::make_unique<PushConsumer>(
        deps, [this] { return std::make_unique<FakeSender>(provider_); }, o);
    ASSERT_TRUE(consumer_->start().ok());
  }
  // Every appended record was read, then the windows close.
  void close_windows() {
    ASSERT_TRUE(eventually([&] { return consumer_->metrics().records == appended_; }));
    clock_->advance_ms(2001);
  }
  std::vector<std::string> devices_notified() {
    std::lock_guard l(provider_.mu);
    std::vector<std::string> out;
    for (auto& [t, n] : provider_.got) out.push_back(n.user.str() + "/" + n.device.str());
    return out;
  }

  testing::TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'700'000'000'000);
  std::unique_ptr<EmbeddedLog> outbox_;
  std::unique_ptr<InboxBackend> backend_;
  FakeSessions sessions_;
  Provider provider_;
  std::unique_ptr<PushConsumer> consumer_;
  uint64_t appended_ = 0;
};

TEST_F(PushConsumerTest, ABurstInAConversationIsOneNotificationWithItsCount) {
  register_device("bob", "phone", "tok-phone");
  start();
  send("alice", "bob", "one");
  send("alice", "bob", "two");
  send("alice", "bob", "three");
  ASSERT_TRUE(eventually([&] { return consumer_->metrics().records == 3; }));
  EXPECT_EQ(provider_.count(), 0u);  // the window is still open
  clock_->advance_ms(2001);
  ASSERT_TRUE(eventually([&] { return provider_.count() == 1; }));
  {
    std::lock_guard l(provider_.mu);
    const auto& [target, n] = provider_.got[0];
    EXPECT_EQ(target.token, "tok-phone");
    EXPECT_EQ(n.user.str(), "bob");
    EXPECT_EQ(n.sender.str(), "alice");
    EXPECT_EQ(n.count, 3u);
    EXPECT_EQ(n.preview, "three");
    EXPECT_EQ(n.message, message_id_of(0, Offset{2}));
  }
  // The next burst is a new notification.
  send("alice", "bob", "four");
  close_windows();
  ASSERT_TRUE(eventually([&] { return provider_.count() == 2; }));
  EXPECT_EQ(consumer_->metrics().sent, 2u);
  EXPECT_EQ(consumer_->metrics().collapsed, 2u);
}

TEST_F(PushConsumerTest, NoneForOwnMessagesOnlineDevicesOrMutedConversations) {
  register_device("alice", "laptop", "tok-alice");
  register_device("bob", "phone", "tok-phone");
  register_device("bob", "tablet", "tok-tablet");
  register_device("carol", "phone", "tok-carol");
  {
    std::lock_guard l(sessions_.mu);
    sessions_.by_user["bob"] = {DeviceSession{"tablet", clock_->now_ms(), 1, 0}};  // the tablet is connected
  }
  const auto carol = UserId::parse("carol").value();
  ASSERT_TRUE(Privacy(*backend_)
                  .mute(carol, direct_conversation(UserId::parse("alice").value(), carol).value(),
                        std::nullopt, clock_->now_ms())
                  .ok());
  start();
  send("alice", "bob", "hi bob");
  send("alice", "carol", "hi carol");
  close_windows();
  ASSERT_TRUE(eventually([&] {
    auto m = consumer_->metrics();
    return m.sent == 1 && m.suppressed_online == 1 && m.suppressed_muted == 1;
  }));
  // Alice (the sender) got nothing on any device; bob's phone alone was woken.
  EXPECT_EQ(devices_notified(), std::vector<std::string>{"bob/phone"});
}

TEST_F(PushConsumerTest, ARejectedTokenOrARevokedSessionUnregistersTheDevice) {
  register_device("bob", "old", "tok-expired");
  register_device("bob", "stolen", "tok-stolen");
  register_device("bob", "phone", "tok-phone");
  provider_.reject.insert("tok-expired");
  {
    std::lock_guard l(sessions_.mu);
    sessions_.by_user["bob"] = {
        DeviceSession{"stolen", 0, 0, clock_->now_ms() + 1}};  // revoked after it registered
  }
  clock_->advance_ms(10);
  start();
  send("alice", "bob", "m1");
  close_windows();
  ASSERT_TRUE(eventually([&] { return consumer_->metrics().unregistered == 2; }));
  auto left = PushRegistry(*backend_).devices(UserId::parse("bob").value()).value();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left.begin()->first.str(), "phone");
  // The revoked device was never sent to.
  for (const auto& d : devices_notified()) EXPECT_NE(d, "bob/stolen");
  // The next burst reaches only the phone.
  send("alice", "bob", "m2");
  close_windows();
  ASSERT_TRUE(eventually([&] { return consumer_->metrics().sent == 2; }));
  EXPECT_EQ(devices_notified().back(), "bob/phone");
}

TEST_F(PushConsumerTest, ADeviceGetsAtMostItsBoundPerMinute) {
  register_device("bob", "phone", "tok-phone");
  start(/*per_minute=*/2);
  for (const char* from : {"alice", "carol", "dave"}) send(from, "bob", "hello");  // three conversations
  close_windows();
  ASSERT_TRUE(eventually([&] {
    auto m = consumer_->metrics();
    return m.sent == 2 && m.suppressed_rate == 1;
  }));
  clock_->advance_ms(60'000);  // a minute later the device may hear again
  send("erin", "bob", "later");
  close_windows();
  ASSERT_TRUE(eventually([&] { return consumer_->metrics().sent == 3; }));
}

TEST_F(PushConsumerTest, StoppingSendsTheOpenWindowsAndCommits) {
  register_device("bob", "phone", "tok-phone");
  start();
  send("alice", "bob", "x");
  ASSERT_TRUE(eventually([&] { return consumer_->metrics().records == 1; }));
  consumer_->stop();
  EXPECT_EQ(provider_.count(), 1u);
  EXPECT_EQ(outbox_->committed(kPushGroup, 0).value(), Offset{1});
}

}  // namespace
}  // namespace qim
