// Adversarial names against the whole client-facing path (issue 8, item 1): a real gateway, an Outbox,
// the real archiver and history store behind HISTORY, and mailboxes filled the way fanout plans them.
// Once user names could hold ':', "d:alice:bob:carol" was both alice<->bob:carol and alice:bob<->carol,
// so a third user read and wrote another pair's history. Names now cannot hold the separator, and a
// conversation id has exactly one reading; every entry point refuses what does not fit, naming why.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <map>
#include <set>

#include "archiver/archiver.h"
#include "archiver/rocks_history_store.h"
#include "auth/base64url.h"
#include "auth/token.h"
#include "client/client.h"
#include "core/sharding.h"
#include "fanout/dispatch_plan.h"
#include "gateway/gateway.h"
#include "gateway/tests/gateway_harness.h"
#include "log/testing/temp_dir.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using namespace std::chrono_literals;
using client::Client;

constexpr std::string_view kSecret = "gateway-names-test-secret";
constexpr auto kWait = 5s;
constexpr uint32_t kPartitions = 4;

// Whether `r` failed with an ERROR frame of `code` whose message contains `part`.
::testing::AssertionResult refused(const Result<client::ServerFrame>& r, std::string_view code,
                                   std::string_view part) {
  if (r.ok()) return ::testing::AssertionFailure() << "accepted: " << r->raw;
  const std::string& m = r.error().message();
  if (m.rfind(std::string(code) + ": ", 0) != 0 || m.find(part) == std::string::npos)
    return ::testing::AssertionFailure() << "expected " << code << " naming \"" << part << "\", got " << m;
  return ::testing::AssertionSuccess();
}

class GatewayNamesTest : public testing::GatewayHarness {
 protected:
  GatewayNamesTest() : GatewayHarness(std::string(kSecret), 16, kPartitions) {}
  void SetUp() override {
    history_ = RocksHistoryStore::open(dir_.sub("history")).value();
    ArchiverOptions ao;
    ao.consumer.poll_wait = 10ms;
    archiver_ = std::make_unique<Archiver>(log_, *history_, ao);
    ASSERT_TRUE(archiver_->start().ok());
    start();
  }
  void configure(GatewayOptions&, GatewayDeps& d) override { d.history = history_.get(); }
  void TearDown() override {
    GatewayHarness::TearDown();
    if (archiver_) archiver_->stop();
  }

  // A token for any user and device text, signed with the gateway's secret the way mint_token signs:
  // what an old minter, a minting bug or a leaked secret could present, names the minter refuses included.
  std::string signed_token(std::string_view user, std::string_view device = "d1") {
    const std::string payload = "qim1|" + std::string(user) + "|" + std::string(device) + "|" +
                                std::to_string(clock_->now_ms() + 3'600'000);
    const std::string head = base64url_encode(payload);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    HMAC(EVP_sha256(), kSecret.data(), static_cast<int>(kSecret.size()),
         reinterpret_cast<const unsigned char*>(head.data()), head.size(), mac, &len);
    return head + "." + base64url_encode(std::string(reinterpret_cast<const char*>(mac), len));
  }

  std::unique_ptr<Client> login(std::string_view user) {
    auto c = connect();
    auto ok = c->auth(signed_token(user));
    EXPECT_TRUE(ok.ok()) << user << ": " << ok.error().to_string();
    return c;
  }

  // Everything appended so far reaches history (the archiver) and the mailboxes (planned as fanout plans
  // them, written as a MailboxNode writes them).
  void pipeline() {
    ASSERT_TRUE(archiver_->drain(kWait).ok());
    for (const auto& rec : log_.all_records()) {
      if (!delivered_.insert({rec.partition, rec.offset.value}).second) continue;
      auto outbox = decode_outbox_record(rec.value);
      ASSERT_TRUE(outbox.ok()) << outbox.error().to_string();
      auto plan = plan_dispatches(*outbox, rec.partition, rec.offset, shards_, 16);
      ASSERT_TRUE(plan.ok()) << plan.error().to_string();
      for (const ShardDispatch& d : *plan) {
        auto begun = store_->begin_dispatch(d.shard, Epoch{1}, d.record.identity,
                                            Offset{next_offset_[d.shard.value]++});
        ASSERT_TRUE(begun.ok()) << begun.error().to_string();
        std::vector<ChunkWrite> writes;
        for (uint32_t i = 0; i < d.record.chunks.size(); ++i)
          writes.push_back(ChunkWrite{d.record.identity.id, i, &d.record.message, d.record.chunks[i]});
        ASSERT_TRUE(store_->write_chunks(d.shard, Epoch{1}, writes).ok());
        auto marks = *store_->lane_watermarks(d.shard, Epoch{1});
        auto done = store_->finish_dispatch(d.shard, Epoch{1}, d.record.identity.id,
                                            uniform_advances(marks[0], begun->seq));
        ASSERT_TRUE(done.ok()) << done.error().to_string();
      }
    }
  }

  // The bodies of a user's whole mailbox, as that user's SYNC returns them.
  std::multiset<std::string> mailbox(Client& c) {
    std::multiset<std::string> out;
    auto page = c.sync(0, 500);
    EXPECT_TRUE(page.ok()) << page.error().to_string();
    if (!page.ok()) return out;
    EXPECT_FALSE(page->more);
    for (const auto& e : page->entries) out.insert(e.body);
    return out;
  }

  ::qim::testing::TempDir dir_;
  ShardMap shards_ = *ShardMap::create(16);
  std::unique_ptr<RocksHistoryStore> history_;
  std::unique_ptr<Archiver> archiver_;
  std::set<std::pair<uint32_t, uint64_t>> delivered_;
  std::map<uint32_t, uint64_t> next_offset_;
};

// A validly signed token is still refused when its user or device could not be a name.
TEST_F(GatewayNamesTest, AuthRefusesASignedTokenWhoseNameHoldsTheSeparator) {
  for (auto [user, device] : {std::pair{"bob:carol", "d1"}, {"acme:alice", "d1"}, {"alice", "ph:one"}}) {
    auto c = connect();
    auto r = c->auth(signed_token(user, device));
    EXPECT_TRUE(refused(r, "UNAUTHENTICATED", "token malformed: ")) << user << "/" << device;
    EXPECT_TRUE(refused(r, "UNAUTHENTICATED", "':'")) << user << "/" << device;
    EXPECT_EQ(c->wait_type("never", kWait).code(), Errc::kTransport);
    EXPECT_EQ(c->close_code(), 1008);
  }
  EXPECT_TRUE(login("alice")->send("bob", "fine", "the door still opens").ok());
}

// The reproduction: alice sends to "bob:carol"; carol asks HISTORY of "d:alice:bob:carol" (what
// `qimctl history --with alice:bob` asks). Neither the SEND nor the read may happen.
TEST_F(GatewayNamesTest, AThirdUserCannotReadAPairsHistoryThroughAnAmbiguousId) {
  auto alice = login("alice");
  auto carol = login("carol");
  ASSERT_TRUE(alice->send("bob", "c0", "to bob").ok());  // a real message in a real conversation
  EXPECT_TRUE(refused(alice->send("bob:carol", "c1", "for bob:carol only"), "INVALID_ARGUMENT", "'to'"));
  EXPECT_TRUE(refused(alice->send("bob:carol", "c2", "again"), "INVALID_ARGUMENT", "':'"));
  pipeline();
  EXPECT_EQ(log_.total_records(), 1u) << "a SEND to an impossible name was stored";

  auto read = carol->history("d:alice:bob:carol", std::nullopt, 50);
  EXPECT_TRUE(refused(read, "INVALID_ARGUMENT", "'conversation'"));
  EXPECT_TRUE(refused(read, "INVALID_ARGUMENT", "d:alice:bob:carol"));
  // The real conversation stays its members' only.
  EXPECT_TRUE(refused(carol->history("d:alice:bob", std::nullopt, 50), "FORBIDDEN", "not a member"));
  auto own = alice->history("d:alice:bob", std::nullopt, 50);
  ASSERT_TRUE(own.ok()) << own.error().to_string();
  ASSERT_EQ(own->entries.size(), 1u);
  EXPECT_EQ(own->entries[0].body, "to bob");
}

// acme could once both read and write the history of acme:alice and acme:bob via "d:acme:alice:acme:bob"
// (acme <-> alice:acme:bob fits the same text).
TEST_F(GatewayNamesTest, NoUserCanWriteOrReadAnotherPairsHistoryThroughAnAmbiguousId) {
  const std::string id = "d:acme:alice:acme:bob";
  auto victim = connect();
  auto in = victim->auth(signed_token("acme:alice"));
  EXPECT_TRUE(refused(in, "UNAUTHENTICATED", "token malformed"));
  if (in.ok()) (void)victim->send("acme:bob", "v1", "between acme:alice and acme:bob");  // if let in
  pipeline();

  auto acme = login("acme");
  EXPECT_TRUE(refused(acme->history(id, std::nullopt, 50), "INVALID_ARGUMENT", "'conversation'"));
  EXPECT_TRUE(refused(acme->send_to_conversation(id, "w1", "planted"), "INVALID_ARGUMENT", "'conversation'"));
  pipeline();
  EXPECT_EQ(log_.total_records(), 0u) << "a SEND with an impossible name was stored";
  // What the history store holds under that text: nothing, for anyone.
  auto stored = history_->read(HistoryQuery{ConversationId::unchecked(id), std::nullopt, 50});
  ASSERT_TRUE(stored.ok()) << stored.error().to_string();
  EXPECT_TRUE(stored->messages.empty());
}

// Conversation ids that are not the one spelling of a pair are refused on SEND and HISTORY with a
// message that says what is wrong, before anything is stored or read.
TEST_F(GatewayNamesTest, MalformedConversationIdsAreRefusedNamingTheProblem) {
  auto alice = login("alice");
  struct Case {
    const char* id;
    const char* why;
  };
  for (const Case& c : std::initializer_list<Case>{{"d:bob:alice", "order"},
                                                   {"d:alice:bob:carol", "2 members"},
                                                   {"d:alice", "2 members"},
                                                   {"d:alice:", "user id"},
                                                   {"x:team", "kind"},
                                                   {"g:a:b", "group id"},
                                                   {"alice", "kind"}}) {
    EXPECT_TRUE(refused(alice->send_to_conversation(c.id, "x", "x"), "INVALID_ARGUMENT", c.why)) << c.id;
    EXPECT_TRUE(refused(alice->history(c.id, std::nullopt, 10), "INVALID_ARGUMENT", c.why)) << c.id;
  }
  EXPECT_EQ(log_.total_records(), 0u);
  ASSERT_TRUE(alice->send_to_conversation("d:alice:bob", "ok", "the canonical id works").ok());
}

// SYNC reads the authenticated user's own mailbox, whatever the names: users whose names are prefixes,
// suffixes or near-spellings of each other each see exactly the messages addressed to them, and a name
// that could blur two mailboxes ("a:b") does not get in at all.
TEST_F(GatewayNamesTest, SyncReadsOnlyTheOwnMailboxWhateverTheNames) {
  const std::vector<std::string> names = {"a", "a.b", "a@x", "a-b", "a_b", "A", "ab", "b"};
  std::map<std::string, std::unique_ptr<Client>> users;
  for (const auto& n : names) users[n] = login(n);
  auto sender = login("z");
  for (const auto& n : names) ASSERT_TRUE(sender->send(n, "to-" + n, "for " + n).ok()) << n;
  // Each user also writes to the next one, so every mailbox holds a received and a sent message.
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& to = names[(i + 1) % names.size()];
    ASSERT_TRUE(users[names[i]]->send(to, "from-" + names[i], names[i] + " to " + to).ok());
  }
  pipeline();
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& me = names[i];
    const std::string& next = names[(i + 1) % names.size()];
    const std::string& prev = names[(i + names.size() - 1) % names.size()];
    EXPECT_EQ(mailbox(*users[me]),
              (std::multiset<std::string>{"for " + me, me + " to " + next, prev + " to " + me}))
        << me;
  }
  auto blur = connect();
  EXPECT_TRUE(refused(blur->auth(signed_token("a:b")), "UNAUTHENTICATED", "token malformed"));
  EXPECT_TRUE(refused(sender->send("a:b", "blur", "for a:b"), "INVALID_ARGUMENT", "':'"));
}

}  // namespace
}  // namespace qim
