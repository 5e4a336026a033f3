// Reactions (issue 39 item 4; docs/protocol.md "Reactions", docs/adr/0124): members react and take
// reactions back, every member receives each as a system entry, HISTORY returns counts per reaction and
// whether the reader holds it; a non-member is refused, a removed member's reaction stays, every refusal
// is its documented code and appends nothing, and a recalled message's reactions are not served.
//
// Served wherever the message state store is, as EDIT and RECALL are (decisions 90, 128): `qim up`, and
// the distributed deployments on the redis and scylla stores, where the scenario must run (an UNAVAILABLE
// there fails it). Only a distributed deployment on the embedded store (no shared engine) refuses REACT
// with UNAVAILABLE: there the scenario is skipped.
#include <gtest/gtest.h>

#include "e2e/e2e_env.h"
#include "e2e/qim_process.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

const char* const kThumbsUp = "\xF0\x9F\x91\x8D";

const Entry::Reaction* reaction_of(const Entry& e, const std::string& emoji) {
  for (const auto& r : e.reactions) {
    if (r.emoji == emoji) return &r;
  }
  return nullptr;
}

// L5. In a group, bob and carol react with the same emoji and bob with a short code; dave (a member) sees
//     the counts and that he holds none; an outsider is refused; bad reactions and a repeated one are
//     refused with their codes and append nothing; carol is removed and her reaction stays; bob takes his
//     back; after the owner recalls the message no reaction is served.
TEST(E2E, L07_ReactionsCountedPerReaderAndRefusedForOutsiders) {
  auto& qim = shared_qim();
  const auto o = user("l07", "owner"), b = user("l07", "bob"), c3 = user("l07", "carol"),
             d = user("l07", "dave"), x = user("l07", "outsider");
  auto owner = login(qim, o);
  auto created = owner->group("GROUP_CREATE", {.members = {b, c3, d}, .name = "reacting"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  auto sent = owner->send_to_conversation(g, "m1", "lunch at noon?");
  ASSERT_TRUE(sent.ok()) << sent.error().to_string();
  const uint64_t id = sent->message_id;
  auto bob = login(qim, b);
  auto carol = login(qim, c3);
  auto dave = login(qim, d);
  auto outsider = login(qim, x);

  auto first = bob->react(g, id, "b1", kThumbsUp);
  if (code(first) == "UNAVAILABLE") {
    const std::string backend = backend_under_test();
    ASSERT_FALSE(backend == "redis" || backend == "scylla" || backend == "scylla-lwt" ||
                 deployment_under_test() != "distributed")
        << "REACT must be served on this deployment (" << deployment_under_test() << ", " << backend
        << "): " << first.error().to_string();
    GTEST_SKIP() << "REACT is not served by a distributed deployment on the embedded store";
  }
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  EXPECT_EQ(first->type, "REACT_ACK");
  EXPECT_EQ(first->target, id);
  ASSERT_EQ(code(carol->react(g, id, "c1", kThumbsUp)), "REACT_ACK");
  ASSERT_EQ(code(bob->react(g, id, "b2", ":tada:")), "REACT_ACK");
  // The same client_msg_id again is the same REACT: acknowledged again, appended once.
  EXPECT_EQ(code(bob->react(g, id, "b2", ":tada:")), "REACT_ACK");

  // Refusals: documented codes, nothing appended.
  EXPECT_EQ(code(outsider->react(g, id, "x1", kThumbsUp)), "NOT_A_MEMBER");
  EXPECT_EQ(code(dave->react(g, id, "d1", "lol")), "BAD_REACTION");
  EXPECT_EQ(code(bob->react(g, id, "b3", kThumbsUp)), "REACTION_UNCHANGED");
  EXPECT_EQ(code(dave->react(g, id, "d2", kThumbsUp, true)), "REACTION_UNCHANGED");
  EXPECT_EQ(code(dave->react(g, id + 100'000, "d3", kThumbsUp)), "UNKNOWN_MESSAGE");

  // Dave receives each applied reaction as a system entry naming the message, and nothing else.
  ASSERT_TRUE(owner->send_to_conversation(g, "marker", "after the reactions").ok());
  auto at_dave = sync_until(*dave, [](const auto& e) { return has_cmid(e, "marker"); });
  std::vector<std::string> kinds;
  for (const Entry& e : at_dave) {
    if (e.conversation == g) kinds.push_back(e.client_msg_id);
  }
  const std::vector<std::string> expected{"m1", "~react", "~react", "~react", "marker"};
  EXPECT_EQ(std::vector<std::string>(kinds.end() - std::min(kinds.size(), expected.size()), kinds.end()),
            expected);
  for (const Entry& e : at_dave) {
    if (e.client_msg_id == "~react") {
      EXPECT_NE(e.body.find("\"message_id\":\"" + std::to_string(id) + "\""), std::string::npos) << e.body;
    }
  }

  // HISTORY: counts per reaction, `mine` per reader.
  auto h = history_entry(*dave, g, id, [](const Entry& e) { return e.reactions.size() == 2; });
  ASSERT_TRUE(h);
  ASSERT_EQ(h->reactions.size(), 2u);
  EXPECT_EQ(h->reactions[0].emoji, kThumbsUp);  // in the order first added
  EXPECT_EQ(h->reactions[0].count, 2u);
  EXPECT_FALSE(h->reactions[0].mine);
  EXPECT_EQ(h->reactions[1].emoji, ":tada:");
  EXPECT_EQ(h->reactions[1].count, 1u);
  auto hb = history_entry(*bob, g, id, [](const Entry&) { return true; });
  ASSERT_TRUE(hb && reaction_of(*hb, kThumbsUp));
  EXPECT_TRUE(reaction_of(*hb, kThumbsUp)->mine);
  EXPECT_TRUE(reaction_of(*hb, ":tada:")->mine);

  // Carol is removed: her reaction stays. Bob takes his thumbs-up back.
  ASSERT_TRUE(owner->group("GROUP_REMOVE", {.group = g, .members = {c3}}).ok());
  EXPECT_EQ(code(carol->react(g, id, "c2", ":wave:")), "NOT_A_MEMBER");
  auto back = bob->react(g, id, "b4", kThumbsUp, true);
  ASSERT_EQ(code(back), "UNREACT_ACK");
  h = history_entry(*dave, g, id,
                    [](const Entry& e) { return e.reactions.size() == 2 && e.reactions[0].count == 1; });
  ASSERT_TRUE(h);
  ASSERT_EQ(h->reactions.size(), 2u);
  EXPECT_EQ(h->reactions[0].count, 1u) << "carol's reaction (removed member) should stay, bob's go";

  // After a recall no reaction is served, and none is taken.
  auto recalled = owner->recall(g, id, "r1");
  ASSERT_EQ(code(recalled), "RECALL_ACK") << (recalled.ok() ? std::string() : recalled.error().to_string());
  h = history_entry(*dave, g, id, [](const Entry& e) { return e.recalled; });
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->recalled);
  EXPECT_TRUE(h->reactions.empty());
  EXPECT_EQ(code(dave->react(g, id, "d4", kThumbsUp)), "MESSAGE_RECALLED");
}

}  // namespace
}  // namespace qim::e2e
