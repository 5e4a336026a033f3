#include "inbox/unread_rule.h"

#include <gtest/gtest.h>

#include "inbox/entry_ref.h"

namespace qim {
namespace {

MailboxEntry entry(const std::string& user, const std::string& sender, const std::string& client_id) {
  MailboxEntry e;
  e.user = *UserId::parse(user);
  e.message.sender = *UserId::parse(sender);
  e.message.client_msg_id = client_id;
  return e;
}

TEST(UnreadRule, CountsOthersMessagesOnly) {
  EXPECT_TRUE(counts_as_unread(entry("bob", "alice", "c1")));
  EXPECT_FALSE(counts_as_unread(entry("bob", "bob", "c1"))) << "one's own message is never unread";
  EXPECT_FALSE(counts_as_unread(entry("bob", "alice", "~group:add"))) << "a system entry never counts";
}

TEST(EntryRef, PreviewCutsOnACharacterBoundary) {
  const std::string body = std::string(199, 'a') + "\xc3\xa9" + "tail";  // 'é' straddles byte 200
  EXPECT_EQ(preview_of(body), std::string(199, 'a'));
  EXPECT_EQ(preview_of("short"), "short");
}

}  // namespace
}  // namespace qim
