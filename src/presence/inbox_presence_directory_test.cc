// The inbox as presence's directory: direct peers from the conversation rows (groups and notes to self
// left out, most recent first, each once), privacy from the setting "presence" (fail closed).
#include "presence/inbox_presence_directory.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

UserId u(std::string_view name) {
  return *UserId::parse(name);
}

// An InboxBackend with rows and settings given by the test; nothing else is used.
class FakeInbox final : public InboxBackend {
 public:
  std::vector<ConversationRow> rows;
  std::map<std::string, std::string> user_settings;
  bool fail = false;

  std::string_view name() const override { return "fake"; }
  Status entries_written(ShardId, Epoch, std::span<const MailboxEntry>) override { return {}; }
  Result<std::vector<ConversationRow>> conversation_rows(const UserId&) override {
    if (fail) return Error(Errc::kTransport, "down");
    return rows;
  }
  Result<std::vector<InboxEntryRef>> index_rows_desc(const UserId&, const ConversationId&, MailboxSeq,
                                                     MailboxSeq, uint32_t) override {
    return std::vector<InboxEntryRef>{};
  }
  Result<uint32_t> count_unread(const UserId&, const ConversationId&, MailboxSeq, MailboxSeq,
                                uint32_t) override {
    return 0u;
  }
  Status raise_read_mark(const UserId&, const ConversationId&, MailboxSeq) override { return {}; }
  Result<std::vector<ReadMark>> read_marks(const UserId&) override { return std::vector<ReadMark>{}; }
  Result<MailboxSeq> read_mark(const UserId&, const ConversationId&) override { return MailboxSeq{}; }
  Status raise_receipt(const ConversationId&, const UserId&, MessageId) override { return {}; }
  Result<std::vector<ReceiptMark>> receipts(const ConversationId&, uint32_t) override {
    return std::vector<ReceiptMark>{};
  }
  Status put_setting(const UserId&, const std::string& key, const std::string& value, int64_t) override {
    user_settings[key] = value;
    return {};
  }
  Result<std::map<std::string, std::string>> settings(const UserId&) override {
    if (fail) return Error(Errc::kTransport, "down");
    return user_settings;
  }
  OpCounters& counters() override { return counters_; }

 private:
  OpCounters counters_;
};

ConversationRow row(std::string_view conversation, uint64_t seq) {
  ConversationRow r;
  r.conversation = *ConversationId::parse(conversation);
  r.last.seq = MailboxSeq::from_raw(seq);
  return r;
}

TEST(InboxPresenceDirectory, DirectPeersFromTheRowsMostRecentFirst) {
  FakeInbox inbox;
  inbox.rows = {row("d:alice:bob", 5), row("g:team", 9), row("d:alice:carol", 7), row("d:alice:alice", 8),
                row("d:alice:bob", 3)};  // a second row of bob's conversation (another epoch)
  InboxPresenceDirectory dir(inbox);
  auto peers = dir.direct_peers(u("alice"), 10);
  ASSERT_TRUE(peers.ok());
  EXPECT_EQ(*peers, (std::vector<UserId>{u("carol"), u("bob")}));
  auto one = dir.direct_peers(u("alice"), 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, std::vector<UserId>{u("carol")});
  inbox.fail = true;
  EXPECT_FALSE(dir.direct_peers(u("alice"), 10).ok());
}

TEST(InboxPresenceDirectory, PrivacyFromTheSettingFailingClosed) {
  FakeInbox inbox;
  InboxPresenceDirectory dir(inbox);
  EXPECT_EQ(*dir.privacy(u("alice")), PresencePrivacy::kEveryone);  // never set
  inbox.user_settings["presence"] = "contacts";
  EXPECT_EQ(*dir.privacy(u("alice")), PresencePrivacy::kContacts);
  inbox.user_settings["presence"] = "nobody";
  EXPECT_EQ(*dir.privacy(u("alice")), PresencePrivacy::kNobody);
  inbox.user_settings["presence"] = "friends";  // unknown: hidden
  EXPECT_EQ(*dir.privacy(u("alice")), PresencePrivacy::kNobody);
  inbox.fail = true;
  EXPECT_FALSE(dir.privacy(u("alice")).ok());
}

}  // namespace
}  // namespace qim
