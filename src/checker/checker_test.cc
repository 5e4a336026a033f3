#include "checker/checker.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace qim::checker {
namespace {

// A small run: alice sends three messages to bob; both mailboxes read at the end.
class CheckerTest : public ::testing::Test {
 protected:
  static constexpr const char* kConv = "d:alice:bob";

  static client::Entry entry(uint64_t seq, uint64_t id, std::string cmid, std::string conv = kConv,
                             std::string sender = "alice") {
    client::Entry e;
    e.seq = seq;
    e.message_id = id;
    e.conversation = std::move(conv);
    e.sender = std::move(sender);
    e.client_msg_id = std::move(cmid);
    return e;
  }

  void SetUp() override {
    path_ =
        (std::filesystem::temp_directory_path() / ("qim-history-" + std::to_string(::getpid()) + ".jsonl"))
            .string();
    rec_ = std::make_unique<HistoryRecorder>(path_);
    for (int i = 1; i <= 3; ++i) {
      const std::string cmid = "m" + std::to_string(i);
      rec_->invoke("alice/phone", "alice", kConv, cmid, "hello");
      rec_->ok("alice/phone", "alice", cmid, 100 + i);
    }
    mailbox_ = {entry(11, 101, "m1"), entry(12, 102, "m2"), entry(13, 103, "m3")};
  }
  void TearDown() override { std::remove(path_.c_str()); }

  CheckReport check() { return check_history(rec_->events()); }
  static bool has(const CheckReport& r, const std::string& rule) {
    for (const auto& v : r.violations)
      if (v.rule == rule) return true;
    return false;
  }

  std::string path_;
  std::unique_ptr<HistoryRecorder> rec_;
  std::vector<client::Entry> mailbox_;
};

TEST_F(CheckerTest, AWholeRunPasses) {
  rec_->final_mailbox("alice", mailbox_);
  rec_->final_mailbox("bob", mailbox_);
  auto r = check();
  EXPECT_TRUE(r.ok()) << r.to_string();
  EXPECT_EQ(r.stats.acknowledged, 3u);
  EXPECT_EQ(r.stats.mailboxes, 2u);
}

TEST_F(CheckerTest, AnAcknowledgedMessageMissingFromARecipientIsLost) {
  rec_->final_mailbox("alice", mailbox_);
  mailbox_.erase(mailbox_.begin() + 1);
  rec_->final_mailbox("bob", mailbox_);
  auto r = check();
  ASSERT_TRUE(has(r, "lost")) << r.to_string();
  EXPECT_NE(r.violations[0].message.find("bob"), std::string::npos);
  // The excerpt shows the SEND's own events (its invoke and ok).
  EXPECT_GE(r.violations[0].excerpt.size(), 2u);
  EXPECT_NE(r.violations[0].excerpt[0].find("\"m2\""), std::string::npos);
}

TEST_F(CheckerTest, OutOfOutboxOrderIsCaught) {
  std::swap(mailbox_[0].message_id, mailbox_[1].message_id);
  std::swap(mailbox_[0].client_msg_id, mailbox_[1].client_msg_id);
  rec_->final_mailbox("bob", mailbox_);
  EXPECT_TRUE(has(check(), "order"));
}

TEST_F(CheckerTest, ASecondCopyIsHiddenWithinTheWindowAndCaughtBeyondIt) {
  auto twice = mailbox_;
  twice.push_back(entry(14, 101, "m1"));  // split brain: the same message at a second seq
  rec_->final_mailbox("bob", twice);
  auto r = check();
  EXPECT_TRUE(r.ok()) << r.to_string();
  EXPECT_EQ(r.stats.duplicates_hidden, 1u);
  CheckOptions narrow;
  narrow.dedup_window = 2;
  EXPECT_TRUE(has(check_history(rec_->events(), narrow), "shown-twice"));
}

TEST_F(CheckerTest, AClientShownAMessageTwiceIsCaught) {
  rec_->shown("bob/phone", "bob", {mailbox_[0], mailbox_[1]});
  rec_->shown("bob/phone", "bob", {entry(15, 101, "m1")});
  EXPECT_TRUE(has(check(), "shown-twice"));
}

TEST_F(CheckerTest, AnEntryInANonMembersMailboxIsALeak) {
  rec_->final_mailbox("carol", {mailbox_[0]});
  EXPECT_TRUE(has(check(), "leak"));
  // Groups: judged by their members event.
  rec_->members("g:team", {"alice", "bob"});
  rec_->final_mailbox("dave", {entry(20, 200, "g1", "g:team")});
  auto r = check();
  size_t leaks = 0;
  for (const auto& v : r.violations) leaks += v.rule == "leak";
  EXPECT_EQ(leaks, 2u) << r.to_string();
}

TEST_F(CheckerTest, AnUnknownSendStoredTwiceBreaksOneId) {
  rec_->invoke("alice/phone", "alice", kConv, "u1", "again");
  rec_->unknown("alice/phone", "alice", "u1", "timeout");
  auto once = mailbox_;
  once.push_back(entry(14, 104, "u1"));
  rec_->final_mailbox("bob", once);
  auto r = check();
  EXPECT_TRUE(r.ok()) << r.to_string();
  EXPECT_EQ(r.stats.unknown_stored, 1u);
  auto twice = once;
  twice.push_back(entry(15, 105, "u1"));
  rec_->final_mailbox("alice", twice);
  EXPECT_TRUE(has(check(), "one-id"));
}

// docs/protocol.md, "A SEND stored twice still shows once" (decision 21): a first attempt answered
// UNAVAILABLE after the broker stored it, then a retry with the same key appended again and acknowledged
// with the second record's id, which fanout drops as a repeat. The mailboxes hold the key once, under the
// first record's id: the message is there (the client matches it by its key), not lost.
TEST_F(CheckerTest, ARetryAcknowledgedUnderTheSecondRecordsIdAfterAnUnknownAttemptIsNotLost) {
  rec_->invoke("alice/phone", "alice", kConv, "u1", "again");
  rec_->unknown("alice/phone", "alice", "u1", "UNAVAILABLE: the broker may have stored it");
  rec_->invoke("alice/retry", "alice", kConv, "u1", "again");
  rec_->ok("alice/retry", "alice", "u1", 105);
  auto boxes = mailbox_;
  boxes.push_back(entry(14, 104, "u1"));  // the first record; 105 was dropped as its repeat
  rec_->final_mailbox("alice", boxes);
  rec_->final_mailbox("bob", boxes);
  auto r = check();
  EXPECT_TRUE(r.ok()) << r.to_string();
  EXPECT_EQ(r.stats.acked_as_first_record, 1u);
}

// Without an attempt of unknown outcome before it, an acknowledged id missing from a mailbox is lost, even
// if another message carries the key.
TEST_F(CheckerTest, AnAcknowledgedIdMissingWithoutAnUnknownAttemptIsLostEvenIfTheKeyIsStored) {
  rec_->invoke("alice/phone", "alice", kConv, "u1", "again");
  rec_->ok("alice/phone", "alice", "u1", 105);
  auto boxes = mailbox_;
  boxes.push_back(entry(14, 104, "u1"));
  rec_->final_mailbox("alice", boxes);
  rec_->final_mailbox("bob", boxes);
  EXPECT_TRUE(has(check(), "lost"));
}

// A retry answered with another message id than the first acknowledgement: the key names two messages.
TEST_F(CheckerTest, OneKeyAcknowledgedUnderTwoIdsBreaksOneId) {
  rec_->final_mailbox("bob", mailbox_);
  EXPECT_TRUE(check().ok());
  rec_->ok("alice/phone", "alice", "m2", 0);
  EXPECT_TRUE(has(check(), "one-id"));
}

TEST_F(CheckerTest, ARefusedSendThatIsStoredIsCaught) {
  rec_->invoke("alice/phone", "alice", kConv, "r1", "refused");
  rec_->fail("alice/phone", "alice", "r1", "UNAVAILABLE");
  auto box = mailbox_;
  box.push_back(entry(14, 104, "r1"));
  rec_->final_mailbox("bob", box);
  EXPECT_TRUE(has(check(), "refused-stored"));
}

TEST_F(CheckerTest, AFrameWithAnEntryAboveItsFrontierIsCaught) {
  client::ServerFrame f;
  f.type = "DELIVER";
  f.from = 10;
  f.frontier = 12;
  f.entries = {mailbox_[0], mailbox_[1]};
  rec_->frame("bob/phone", "bob", f);
  EXPECT_TRUE(check().ok());
  f.entries.push_back(mailbox_[2]);  // seq 13 > frontier 12
  rec_->frame("bob/phone", "bob", f);
  EXPECT_TRUE(has(check(), "frontier"));
}

TEST_F(CheckerTest, TheFileReadsBackToTheSameVerdict) {
  mailbox_.pop_back();
  rec_->final_mailbox("bob", mailbox_);
  auto loaded = load_history(path_);
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  ASSERT_EQ(loaded->size(), rec_->events().size());
  auto r = check_history(*loaded);
  EXPECT_TRUE(has(r, "lost"));
  auto live = check();
  ASSERT_EQ(r.violations.size(), live.violations.size());
  EXPECT_EQ(r.violations[0].message, live.violations[0].message);
}

// The first message of Outbox partition 0 has id 0: an ok naming it is an acknowledgement like any other.
TEST_F(CheckerTest, MessageIdZeroIsAnId) {
  rec_->invoke("alice/phone", "alice", kConv, "m0", "first");
  rec_->ok("alice/phone", "alice", "m0", 0);
  rec_->final_mailbox("bob", mailbox_);  // without message 0
  auto loaded = load_history(path_);
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  auto r = check_history(*loaded);
  ASSERT_TRUE(has(r, "lost")) << r.to_string();
  EXPECT_NE(r.violations[0].message.find("message 0 "), std::string::npos) << r.violations[0].message;
}

TEST_F(CheckerTest, ACorruptLineIsReportedWithItsNumber) {
  {
    std::ofstream out(path_, std::ios::app);
    out << "{\"kind\":\"ok\",\"user\":\"alice\",\"client_msg_id\":\"x\"}\n";  // an ok without message_id
  }
  auto loaded = load_history(path_);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code(), Errc::kCorruptEntry);
  EXPECT_NE(loaded.error().message().find(":7:"), std::string::npos) << loaded.error().message();
}

}  // namespace
}  // namespace qim::checker
