// qimctl refuses names that cannot exist before it connects, with the gateway's own error (issue 8,
// item 1): `history --with alice:bob` once asked for "d:alice:bob:carol" and read another pair's history.
#include <gtest/gtest.h>

#include <sstream>

#include "ctl/commands.h"

namespace qim::ctl {
namespace {

// Nothing listens on port 1: a command that got as far as connecting would fail with a transport error.
Connection nowhere() {
  Connection c;
  c.url = "ws://127.0.0.1:1";
  c.token = "any";
  return c;
}

TEST(Arguments, SendRefusesAUserOrConversationThatCannotExist) {
  struct Case {
    const char* to;
    const char* conversation;
    const char* expected;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"bob:carol", "", "qimctl: send --to: user id 'bob:carol' has ':' at byte 4"},
           {"", "d:alice:bob:carol", "qimctl: send --conversation: conversation id 'd:alice:bob:carol'"},
           {"", "d:bob:alice", "not canonical"}}) {
    SendRequest r;
    r.connection = nowhere();
    r.to = c.to;
    r.conversation = c.conversation;
    r.body = "x";
    std::ostringstream out, err;
    EXPECT_EQ(run_send(r, out, err), 1);
    EXPECT_NE(err.str().find(c.expected), std::string::npos) << err.str();
    EXPECT_TRUE(out.str().empty());
  }
}

TEST(Arguments, HistoryRefusesAPeerThatCannotExist) {
  HistoryRequest r;
  r.connection = nowhere();
  r.with = "alice:bob";
  std::ostringstream out, err;
  EXPECT_EQ(run_history(r, out, err), 1);
  EXPECT_NE(err.str().find("qimctl: history --with: user id 'alice:bob' has ':'"), std::string::npos)
      << err.str();
}

TEST(Arguments, GroupCommandsRefuseAGroupOrMemberThatCannotExist) {
  struct Case {
    const char* group;
    const char* member;
    const char* expected;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"d:alice:bob", "", "qimctl: group --group: 'd:alice:bob' is not a group"},
           {"g:a:b", "", "qimctl: group --group: conversation id 'g:a:b' has a bad group"},
           {"g:abc", "bob:carol", "qimctl: group --member: user id 'bob:carol' has ':'"}}) {
    GroupCommand r;
    r.connection = nowhere();
    r.action = "add";
    r.fields.group = c.group;
    if (*c.member) r.fields.members.push_back(c.member);
    std::ostringstream out, err;
    EXPECT_EQ(run_group(r, out, err), 1);
    EXPECT_NE(err.str().find(c.expected), std::string::npos) << err.str();
  }
  HistoryRequest h;
  h.connection = nowhere();
  h.group = "g:";
  std::ostringstream out, err;
  EXPECT_EQ(run_history(h, out, err), 1);
  EXPECT_NE(err.str().find("qimctl: history --group: conversation id 'g:'"), std::string::npos) << err.str();
}

TEST(Arguments, ReadRefusesAConversationThatCannotExist) {
  struct Case {
    const char* conversation;
    uint64_t seq;
    const char* expected;
  };
  for (const Case& c :
       std::initializer_list<Case>{{"d:bob:alice", 5, "qimctl: read: conversation id 'd:bob:alice'"},
                                   {"bob!", 5, "qimctl: read: user id 'bob!'"},
                                   {"d:alice:bob", 0, "qimctl: read: seq must be a seq of your mailbox"}}) {
    ReadRequest r;
    r.connection = nowhere();
    r.conversation = c.conversation;
    r.seq = c.seq;
    std::ostringstream out, err;
    EXPECT_EQ(run_read(r, out, err), 1);
    EXPECT_NE(err.str().find(c.expected), std::string::npos) << err.str();
    EXPECT_TRUE(out.str().empty());
  }
}

}  // namespace
}  // namespace qim::ctl
