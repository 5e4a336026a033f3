// End-to-end scenarios 15-16 of SYSTEM.md section 5 (bad input and isolation), over real WebSockets against
// a real `qim up`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

// 15. bad input: malformed frames, unknown types, oversize bodies, wrong types, sending as someone else:
//     a clear error frame, nothing stored, the server keeps serving.
TEST(E2E, S15_BadInput) {
  auto& qim = shared_qim();
  const auto a = user("s15", "a"), b = user("s15", "b"), victim = user("s15", "v");
  auto alice = login(qim, a);
  struct Case {
    std::string frame;
    std::string code;
  };
  const std::vector<Case> cases = {
      {"{not json", "BAD_FRAME"},
      {"[]", "BAD_FRAME"},
      {R"({"no":"type"})", "BAD_FRAME"},
      {R"({"type":"LAUNCH_MISSILES"})", "UNKNOWN_TYPE"},
      {R"({"type":"SEND","client_msg_id":"x1","to":")" + b + R"(","body":")" + std::string(20'000, 'x') +
           "\"}",
       "TOO_LARGE"},
      {R"({"type":"SEND","client_msg_id":"x2","to":")" + b + R"(","body":["not","a","string"]})",
       "INVALID_ARGUMENT"},
      {R"({"type":"SEND","client_msg_id":42,"to":")" + b + R"(","body":"x"})", "INVALID_ARGUMENT"},
      {R"({"type":"SYNC","after":"minus one"})", "INVALID_ARGUMENT"},
      {R"({"type":"SEND","client_msg_id":"x3","to":")" + b + R"(","body":"x","sender":")" + victim + "\"}",
       "FORBIDDEN"},
      {R"({"type":"SEND","client_msg_id":"x4","conversation":")" + conv(victim, b) + R"(","body":"x"})",
       "FORBIDDEN"},
  };
  for (const auto& c : cases) {
    alice->send_text(c.frame);
    auto e = alice->wait_type("ERROR", kWait);
    ASSERT_TRUE(e.ok()) << c.frame.substr(0, 80) << ": " << e.error().to_string();
    EXPECT_EQ(e->code, c.code) << c.frame.substr(0, 80) << " -> " << e->raw;
    EXPECT_FALSE(e->message.empty());
  }
  // A frame over the frame limit closes that connection (1009); the server keeps serving others.
  auto big = login(qim, a, "big");
  big->send_text(std::string(200'000, ' '));
  EXPECT_EQ(big->wait_type("never", kWait).code(), Errc::kTransport);
  EXPECT_EQ(big->close_code(), 1009);

  // Nothing was stored: b's mailbox and the victim's conversation are empty.
  ASSERT_TRUE(alice->send(b, "ok", "a valid message after all that").ok());  // still serving
  auto bob = login(qim, b);
  auto entries = sync_until(*bob, [](const auto& e) { return has_cmid(e, "ok"); });
  ASSERT_EQ(entries.size(), 1u) << "a refused SEND was stored";
  EXPECT_EQ(entries[0].sender, a);
  auto victim_mailbox = sync_all(*login(qim, victim));
  ASSERT_TRUE(victim_mailbox);
  EXPECT_TRUE(victim_mailbox->empty());
}

// 16. isolation: nobody can read another user's mailbox or a conversation they are not in.
TEST(E2E, S16_Isolation) {
  auto& qim = shared_qim();
  const auto a = user("s16", "a"), b = user("s16", "b"), eve = user("s16", "eve");
  auto e = login(qim, eve);
  auto bob = login(qim, b);
  ASSERT_TRUE(login(qim, a)->send(b, "secret", "for b only").ok());
  ASSERT_EQ(collect_delivered(*bob, 1, kWait).size(), 1u);
  EXPECT_TRUE(collect_delivered(*e, 1, kQuiet).empty()) << "eve got b's push";
  auto eves = sync_all(*e);
  ASSERT_TRUE(eves);
  EXPECT_TRUE(eves->empty()) << "eve's SYNC returned someone else's entries";
  // No frame field can point SYNC at another mailbox: extra fields are ignored, never obeyed.
  e->send_text(R"({"type":"SYNC","ref":"x","user":")" + b + R"(","mailbox":")" + b + "\"}");
  auto sneaky = e->wait_ref("x", kWait);
  ASSERT_TRUE(sneaky.ok());
  EXPECT_TRUE(sneaky->entries.empty());
  auto history = e->history(conv(a, b), std::nullopt, 50);
  ASSERT_FALSE(history.ok());
  EXPECT_EQ(history.error().message().rfind("FORBIDDEN", 0), 0u);
  auto post = e->send_to_conversation(conv(a, b), "in", "let me in");
  ASSERT_FALSE(post.ok());
  EXPECT_EQ(post.error().message().rfind("FORBIDDEN", 0), 0u);

  // Names (issue 8, item 1). Users whose names are near-spellings of each other read their own mailbox
  // only; ':' is no name character, so no id can spell two conversations, and nobody gets a token, a
  // message or a history page through one.
  const std::string dotted = a + ".b", at = a + "@x";
  auto d = login(qim, dotted);
  ASSERT_TRUE(login(qim, a)->send(dotted, "n1", "a to a.b").ok());
  ASSERT_TRUE(login(qim, at)->send(eve, "n2", "a@x to eve").ok());
  auto dotted_mailbox = sync_until(*d, [](const auto& got) { return has_cmid(got, "n1"); });
  ASSERT_EQ(dotted_mailbox.size(), 1u);
  EXPECT_EQ(dotted_mailbox[0].sender, a);
  auto a_mailbox = sync_all(*login(qim, a));
  ASSERT_TRUE(a_mailbox);
  EXPECT_FALSE(has_cmid(*a_mailbox, "n2")) << "a read a@x's mailbox";
  auto ambiguous = e->history("d:" + a + ":" + b + ":" + eve, std::nullopt, 50);
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.error().message().rfind("INVALID_ARGUMENT", 0), 0u) << ambiguous.error().message();
  auto colon = e->send(a + ":" + b, "n3", "to a name with ':'");
  ASSERT_FALSE(colon.ok());
  EXPECT_NE(colon.error().message().find("':'"), std::string::npos) << colon.error().message();
  // `qim token` refuses such a name (exit 2, configuration or argument refused) and mints a normal one.
  auto qim_token = [&](const std::string& name) {
    const std::string cmd = "QIM_AUTH_SECRET=" + std::string(kSecret) + " '" + QIM_BINARY +
                            "' token --data-dir '" + qim.data_dir() + "' --user '" + name +
                            "' >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(qim_token(a + ":" + b), 2);
  EXPECT_EQ(qim_token(dotted), 0);
}

}  // namespace
}  // namespace qim::e2e
