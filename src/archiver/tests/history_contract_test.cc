// The HistoryStore contract, run on the backend this binary links (history_fixture.h). Every read that
// checks what was written goes through a fresh store instance over the same data.
//
// QIM_HISTORY_SUITE names the suite per binary (EmbeddedHistoryContractTest, ...): ctest knows tests by
// their gtest names, so the three binaries must not share them.
#include <gtest/gtest.h>

#ifndef QIM_HISTORY_SUITE
#error "define QIM_HISTORY_SUITE (the gtest suite name of this backend's binary)"
#endif

#include "archiver/tests/history_fixture.h"

namespace qim::test {
namespace {

// Ids as the archiver makes them, (partition << 48) | offset: above 2^53, so a backend that kept them
// as doubles (a ZSET score) would misorder or merge them.
MessageId id_at(uint64_t offset, uint64_t partition = 3) {
  return MessageId{(partition << 48) | offset};
}

ConversationId conv(const std::string& text) {
  return ConversationId::parse(text).value();
}

Message message(const std::string& conversation, MessageId id, const std::string& body) {
  Message m;
  m.id = id;
  m.conversation = conv(conversation);
  m.sender = UserId::parse("alice").value();
  m.sender_device = DeviceId::parse("phone").value();
  m.client_msg_id = "c" + std::to_string(id.value);
  m.server_time_ms = 1'700'000'000'000 + static_cast<int64_t>(id.value & 0xffff);
  m.body = body;
  return m;
}

std::vector<uint64_t> ids(const HistoryPage& page) {
  std::vector<uint64_t> out;
  for (const auto& m : page.messages) out.push_back(m.id.value);
  return out;
}

class QIM_HISTORY_SUITE : public ::testing::Test {
 protected:
  void SetUp() override {
    const HistoryFixture f = history_fixture();
    if (auto why = f.unavailable()) GTEST_SKIP() << *why;
    auto harness = f.make_harness();
    ASSERT_TRUE(harness.ok()) << harness.error().to_string();
    harness_ = std::move(harness).value();
    reopen();
  }
  // Drops the current store, then opens a fresh one over the same data.
  void reopen() {
    store_.reset();
    auto store = harness_->open();
    ASSERT_TRUE(store.ok()) << store.error().to_string();
    store_ = std::move(store).value();
  }
  Result<HistoryPage> read(const std::string& conversation, std::optional<MessageId> before, uint32_t limit) {
    return store_->read(HistoryQuery{conv(conversation), before, limit});
  }

  std::unique_ptr<HistoryHarness> harness_;
  std::unique_ptr<HistoryStore> store_;
};

TEST_F(QIM_HISTORY_SUITE, AppendIsIdempotentThroughAFreshStore) {
  for (uint64_t i = 1; i <= 3; ++i)
    ASSERT_TRUE(store_->append(message("d:alice:bob", id_at(i), "m" + std::to_string(i))).ok());
  reopen();  // a restarted archiver replays message 2 (and writes 4 for the first time)
  ASSERT_TRUE(store_->append(message("d:alice:bob", id_at(2), "m2")).ok());
  const std::vector<Message> again = {message("d:alice:bob", id_at(3), "m3"),
                                      message("d:alice:bob", id_at(4), "m4")};
  ASSERT_TRUE(store_->append_all(again).ok());
  reopen();
  auto page = read("d:alice:bob", std::nullopt, 50);
  ASSERT_TRUE(page.ok()) << page.error().to_string();
  EXPECT_EQ(ids(*page),
            (std::vector<uint64_t>{id_at(4).value, id_at(3).value, id_at(2).value, id_at(1).value}));
  EXPECT_FALSE(page->more);
  ASSERT_EQ(page->messages.size(), 4u);
  EXPECT_EQ(page->messages[2], message("d:alice:bob", id_at(2), "m2"));  // every field read back
}

// A reply keeps its reference (docs/adr/0125) through every backend, next to plain messages without one; an
// edit's rewrite keeps it too.
TEST_F(QIM_HISTORY_SUITE, AReplyKeepsItsReplyTo) {
  Message reply = message("d:alice:bob", id_at(2), "yes");
  reply.reply_to = id_at(1);
  ASSERT_TRUE(store_->append(message("d:alice:bob", id_at(1), "really?")).ok());
  ASSERT_TRUE(store_->append(reply).ok());
  reopen();
  auto page = read("d:alice:bob", std::nullopt, 50);
  ASSERT_TRUE(page.ok()) << page.error().to_string();
  ASSERT_EQ(page->messages.size(), 2u);
  EXPECT_EQ(page->messages[0], reply);
  EXPECT_FALSE(page->messages[1].reply_to);
  reply.body = "yes, edited";
  ASSERT_TRUE(store_->append(reply).ok());
  reopen();
  page = read("d:alice:bob", std::nullopt, 1);
  ASSERT_TRUE(page.ok()) << page.error().to_string();
  ASSERT_EQ(page->messages.size(), 1u);
  EXPECT_EQ(page->messages[0], reply);
}

TEST_F(QIM_HISTORY_SUITE, PagesNewestFirstAcrossSeveralPagesWithBefore) {
  std::vector<Message> batch;
  std::vector<uint64_t> written;
  for (uint64_t i = 0; i < 23; ++i) {
    const MessageId id = id_at(10 + 7 * i);  // gaps: other conversations' offsets of the same partition
    batch.push_back(message("d:alice:bob", id, "body " + std::to_string(i)));
    written.push_back(id.value);
  }
  ASSERT_TRUE(store_->append_all(batch).ok());
  reopen();
  std::vector<uint64_t> seen;
  std::optional<MessageId> before;
  int pages = 0;
  for (bool more = true; more; ++pages) {
    ASSERT_LT(pages, 10) << "paging does not end";
    auto page = read("d:alice:bob", before, 5);
    ASSERT_TRUE(page.ok()) << page.error().to_string();
    ASSERT_FALSE(page->messages.empty());
    EXPECT_LE(page->messages.size(), 5u);
    for (const auto& m : page->messages) seen.push_back(m.id.value);
    before = page->messages.back().id;
    more = page->more;
  }
  EXPECT_EQ(pages, 5);  // 5 + 5 + 5 + 5 + 3
  EXPECT_EQ(seen, std::vector<uint64_t>(written.rbegin(), written.rend()));
  // `before` is exclusive and need not be a stored id.
  auto page = read("d:alice:bob", MessageId{written[5]}, 2).value();
  EXPECT_EQ(ids(page), (std::vector<uint64_t>{written[4], written[3]}));
  EXPECT_TRUE(page.more);
  page = read("d:alice:bob", MessageId{written[2] + 1}, 50).value();
  EXPECT_EQ(ids(page), (std::vector<uint64_t>{written[2], written[1], written[0]}));
  EXPECT_FALSE(page.more);
  page = read("d:alice:bob", MessageId{written[0]}, 50).value();
  EXPECT_TRUE(page.messages.empty());
  EXPECT_FALSE(page.more);
  page = read("d:alice:bob", MessageId{~uint64_t{0}}, 1).value();  // above every id: the newest
  EXPECT_EQ(ids(page), std::vector<uint64_t>{written.back()});
}

TEST_F(QIM_HISTORY_SUITE, ConversationsWithLookAlikeIdsStayApart) {
  const std::vector<std::string> convs = {"d:a:b", "d:a:b.c", "d:a:bc", "d:a.b:c", "d:a:b@x", "d:a:b_"};
  for (size_t i = 0; i < convs.size(); ++i) {
    ASSERT_TRUE(store_->append(message(convs[i], id_at(100 + i), convs[i])).ok()) << convs[i];
    ASSERT_TRUE(store_->append(message(convs[i], id_at(200 + i), convs[i])).ok()) << convs[i];
  }
  reopen();
  for (size_t i = 0; i < convs.size(); ++i) {
    auto page = read(convs[i], std::nullopt, 50);
    ASSERT_TRUE(page.ok()) << page.error().to_string();
    EXPECT_EQ(ids(*page), (std::vector<uint64_t>{id_at(200 + i).value, id_at(100 + i).value})) << convs[i];
    for (const auto& m : page->messages) EXPECT_EQ(m.body, convs[i]);
  }
  auto none = read("d:here:nobody", std::nullopt, 50);
  ASSERT_TRUE(none.ok()) << none.error().to_string();
  EXPECT_TRUE(none->messages.empty());
  EXPECT_FALSE(none->more);
}

TEST_F(QIM_HISTORY_SUITE, LimitIsBounded) {
  std::vector<Message> batch;
  for (uint64_t i = 1; i <= kMaxHistoryReadLimit + 5; ++i)
    batch.push_back(message("d:alice:bob", id_at(i), "x"));
  ASSERT_TRUE(store_->append_all(batch).ok());
  reopen();
  EXPECT_EQ(read("d:alice:bob", std::nullopt, 0).code(), Errc::kInvalidArgument);
  EXPECT_EQ(read("d:alice:bob", std::nullopt, kMaxHistoryReadLimit + 1).code(), Errc::kInvalidArgument);
  EXPECT_EQ(store_->read(HistoryQuery{ConversationId{}, std::nullopt, 10}).code(), Errc::kInvalidArgument);
  auto page = read("d:alice:bob", std::nullopt, kMaxHistoryReadLimit).value();
  ASSERT_EQ(page.messages.size(), kMaxHistoryReadLimit);
  EXPECT_EQ(page.messages.front().id, id_at(kMaxHistoryReadLimit + 5));
  EXPECT_EQ(page.messages.back().id, id_at(6));
  EXPECT_TRUE(page.more);
  page = read("d:alice:bob", std::nullopt, 1).value();
  EXPECT_EQ(ids(page), std::vector<uint64_t>{id_at(kMaxHistoryReadLimit + 5).value});
  EXPECT_TRUE(page.more);
  page = read("d:alice:bob", id_at(6), kMaxHistoryReadLimit).value();
  EXPECT_EQ(page.messages.size(), 5u);
  EXPECT_FALSE(page.more);
}

TEST_F(QIM_HISTORY_SUITE, CountsTwoInsertsPerMessage) {
  const OpCounts start = store_->op_counts();
  EXPECT_EQ(start.inserts, 0u);
  for (uint64_t i = 1; i <= 10; ++i) ASSERT_TRUE(store_->append(message("d:alice:bob", id_at(i), "x")).ok());
  EXPECT_EQ(store_->op_counts().inserts, 20u);
  std::vector<Message> batch;
  for (uint64_t i = 11; i <= 15; ++i) batch.push_back(message("d:alice:carol", id_at(i), "y"));
  ASSERT_TRUE(store_->append_all(batch).ok());
  EXPECT_EQ(store_->op_counts().inserts, 30u);
  EXPECT_EQ(store_->op_counts().updates, 0u);
  EXPECT_EQ(store_->op_counts().lwts, 0u);
  ASSERT_TRUE(read("d:alice:bob", std::nullopt, 50).ok());
  EXPECT_GT(store_->op_counts().reads, 0u);
}

TEST_F(QIM_HISTORY_SUITE, RefusedMessagesWriteNothing) {
  Message big = message("d:alice:bob", id_at(2), std::string(kMaxBodyBytes + 1, 'x'));
  EXPECT_EQ(store_->append(big).code(), Errc::kInvalidArgument);
  Message high = message("d:alice:bob", MessageId{uint64_t{1} << 63}, "x");
  EXPECT_EQ(store_->append(high).code(), Errc::kInvalidArgument);
  Message none = message("d:alice:bob", id_at(3), "x");
  none.conversation = ConversationId{};
  EXPECT_EQ(store_->append(none).code(), Errc::kInvalidArgument);
  const std::vector<Message> mixed = {message("d:alice:bob", id_at(1), "fine"), big};
  EXPECT_EQ(store_->append_all(mixed).code(), Errc::kInvalidArgument);
  EXPECT_EQ(store_->op_counts().inserts, 0u);
  reopen();
  auto page = read("d:alice:bob", std::nullopt, 50);
  ASSERT_TRUE(page.ok()) << page.error().to_string();
  EXPECT_TRUE(page->messages.empty());
}

TEST_F(QIM_HISTORY_SUITE, ARowThatDoesNotDecodeIsCorruptEntryNamingIt) {
  ASSERT_TRUE(store_->append(message("d:alice:bob", id_at(1), "good")).ok());
  ASSERT_TRUE(store_->append(message("d:alice:bob", id_at(3), "good")).ok());
  ASSERT_TRUE(harness_->plant_corrupt(*store_, conv("d:alice:bob"), id_at(2)).ok());
  reopen();
  auto page = read("d:alice:bob", std::nullopt, 50);
  ASSERT_EQ(page.code(), Errc::kCorruptEntry);
  EXPECT_NE(page.error().message().find("d:alice:bob"), std::string::npos) << page.error().message();
  EXPECT_NE(page.error().message().find(std::to_string(id_at(2).value)), std::string::npos)
      << page.error().message();
  // Pages that do not reach the bad row still read, and other conversations are untouched.
  auto newest = read("d:alice:bob", std::nullopt, 1);
  ASSERT_TRUE(newest.ok()) << newest.error().to_string();
  EXPECT_EQ(ids(*newest), std::vector<uint64_t>{id_at(3).value});
  auto older = read("d:alice:bob", id_at(2), 10);
  ASSERT_TRUE(older.ok()) << older.error().to_string();
  EXPECT_EQ(ids(*older), std::vector<uint64_t>{id_at(1).value});
}

// A recall (docs/adr/0090): the archiver writes the message again without its body. Afterwards the
// engine, read with its own commands, holds the body nowhere; so does an edit's earlier body.
TEST_F(QIM_HISTORY_SUITE, ARewriteWithoutTheBodyLeavesNoBodyInTheEngine) {
  const Message kept = message("d:alice:bob", id_at(1), "kept-body-bytes");
  Message recalled = message("d:alice:bob", id_at(2), "recalled-body-bytes");
  Message edited = message("d:alice:bob", id_at(3), "first-body-bytes");
  ASSERT_TRUE(store_->append_all(std::vector<Message>{kept, recalled, edited}).ok());
  auto before = harness_->holds(*store_, conv("d:alice:bob"), "recalled-body-bytes");
  ASSERT_TRUE(before.ok()) << before.error().to_string();
  ASSERT_TRUE(*before);  // the check can see a body
  recalled.body.clear();
  edited.body = "second-body-bytes";
  ASSERT_TRUE(store_->append(recalled).ok());
  ASSERT_TRUE(store_->append(edited).ok());
  reopen();
  for (const char* gone : {"recalled-body-bytes", "first-body-bytes"}) {
    auto held = harness_->holds(*store_, conv("d:alice:bob"), gone);
    ASSERT_TRUE(held.ok()) << held.error().to_string();
    EXPECT_FALSE(*held) << gone;
  }
  EXPECT_TRUE(*harness_->holds(*store_, conv("d:alice:bob"), "kept-body-bytes"));
  auto page = read("d:alice:bob", std::nullopt, 50);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->messages.size(), 3u);
  EXPECT_EQ(page->messages[0].body, "second-body-bytes");
  EXPECT_EQ(page->messages[1].body, "");  // the tombstone keeps its place, sender and time
  EXPECT_EQ(page->messages[1].sender, recalled.sender);
  EXPECT_EQ(page->messages[1].server_time_ms, recalled.server_time_ms);
}

}  // namespace
}  // namespace qim::test
