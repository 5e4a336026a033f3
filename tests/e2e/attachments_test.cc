// Attachments on a real deployment with a real object store (issue 41 item 7; docs/protocol.md
// "Attachments"): ATTACH, the client's own HTTP PUT of the presigned URL, SEND with the attachment, a
// member's ATTACHMENT_URL and HTTP GET of the same bytes; a non-member refused; a size lie refused by the
// store itself and by the SEND's check. Runs only when the deployment has an object store: QIM_S3_ENDPOINT
// set in the environment (which reaches `qim up` unchanged, e2e_env.h); skipped otherwise.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "e2e/attachment_support.h"
#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

// A1. Upload, send, a member downloads the same bytes; a non-member gets UNKNOWN_ATTACHMENT; a PUT of
//     another size is refused by the store and a SEND declaring another size by QIM.
TEST(E2E, A01_AttachmentUploadSendDownload) {
  if (!store_configured()) GTEST_SKIP() << "QIM_S3_ENDPOINT is unset: no object store for attachments";
  auto& qim = shared_qim();
  const auto a = user("a01", "alice"), b = user("a01", "bob"), c = user("a01", "carol");
  auto alice = login(qim, a);
  auto bob = login(qim, b);
  auto carol = login(qim, c);
  const std::string conversation = conv(a, b);
  std::string bytes(300'000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 131) & 0xff);

  auto ok = ask(*alice, "at1",
                R"({"type":"ATTACH","conversation":")" + conversation +
                    R"(","name":"data.bin","content_type":"application/zip","size":)" +
                    std::to_string(bytes.size()) + "}");
  ASSERT_EQ(ok.type, "ATTACH_OK") << ok.raw;
  const std::string id = field(ok.raw, "attachment");
  const std::string put = field(ok.raw, "upload_url");
  EXPECT_GE(http_request(http::verb::put, put, "application/zip", bytes.substr(1)).status, 400u);  // size lie
  ASSERT_EQ(http_request(http::verb::put, put, "application/zip", bytes).status, 200u);

  auto send = [&](const std::string& cmid, size_t size) {
    return ask(*alice, "s-" + cmid,
               R"({"type":"SEND","client_msg_id":")" + cmid + R"(","conversation":")" + conversation +
                   R"(","body":"file","attachments":[{"attachment":")" + id +
                   R"(","name":"data.bin","content_type":"application/zip","size":)" + std::to_string(size) +
                   "}]}");
  };
  EXPECT_EQ(send("lie", bytes.size() + 1).code, "ATTACHMENT_MISMATCH");
  auto ack = send("m1", bytes.size());
  ASSERT_EQ(ack.type, "SEND_ACK") << ack.raw;

  auto url_frame = [&](uint64_t message_id) {
    return R"({"type":"ATTACHMENT_URL","conversation":")" + conversation + R"(","message_id":")" +
           std::to_string(message_id) + R"(","attachment":")" + id + R"("})";
  };
  // The history is written by the archiver after the append: ask until it has the message.
  ServerFrame got;
  const auto until = std::chrono::steady_clock::now() + kWait;
  int tries = 0;
  do {
    if (tries > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a poll with a bound
    got = ask(*bob, "u" + std::to_string(++tries), url_frame(ack.message_id));
  } while (got.type != "ATTACHMENT_URL_OK" && std::chrono::steady_clock::now() < until);
  ASSERT_EQ(got.type, "ATTACHMENT_URL_OK") << got.raw;
  auto download = http_request(http::verb::get, field(got.raw, "url"));
  EXPECT_EQ(download.status, 200u);
  EXPECT_TRUE(download.body == bytes) << "downloaded " << download.body.size() << " bytes";
  EXPECT_EQ(ask(*carol, "uc", url_frame(ack.message_id)).code, "UNKNOWN_ATTACHMENT");
}

// A2. In a group, ATTACHMENT_URL only for a current member who may see the message: bob (a member all along)
//     downloads the bytes; dave (added after the message), carol (removed before it, added back after it)
//     and erin (removed before it) are refused with the one code UNKNOWN_ATTACHMENT.
TEST(E2E, A02_GroupDownloadOnlyForMembersWhoMaySeeTheMessage) {
  if (!store_configured()) GTEST_SKIP() << "QIM_S3_ENDPOINT is unset: no object store for attachments";
  auto& qim = shared_qim();
  const auto a = user("a02", "alice"), b = user("a02", "bob"), c = user("a02", "carol"),
             d = user("a02", "dave"), e = user("a02", "erin");
  auto alice = login(qim, a);
  auto created = alice->group("GROUP_CREATE", {.members = {b, c, e}, .name = "files"});
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const std::string g = created->group;
  ASSERT_TRUE(alice->group("GROUP_REMOVE", {.group = g, .members = {c, e}}).ok());
  const std::string bytes = pattern_bytes(120'000, 37);
  const std::string id = upload(*alice, g, bytes);
  ASSERT_FALSE(id.empty());
  auto ack = send_with(*alice, g, "g1", id, bytes.size());
  ASSERT_EQ(ack.type, "SEND_ACK") << ack.raw;
  ASSERT_TRUE(alice->group("GROUP_ADD", {.group = g, .members = {c, d}}).ok());

  auto bob = login(qim, b);
  auto got = url_when_archived(*bob, g, ack.message_id, id);
  ASSERT_EQ(got.type, "ATTACHMENT_URL_OK") << got.raw;
  auto download = http_request(http::verb::get, field(got.raw, "url"));
  EXPECT_EQ(download.status, 200u);
  EXPECT_TRUE(download.body == bytes) << "downloaded " << download.body.size() << " bytes";
  auto carol = login(qim, c);
  auto dave = login(qim, d);
  auto erin = login(qim, e);
  EXPECT_EQ(url_of(*dave, "ud", g, ack.message_id, id).code, "UNKNOWN_ATTACHMENT");
  EXPECT_EQ(url_of(*carol, "uc", g, ack.message_id, id).code, "UNKNOWN_ATTACHMENT");
  EXPECT_EQ(url_of(*erin, "ue", g, ack.message_id, id).code, "UNKNOWN_ATTACHMENT");
}

// A3. An EDIT of a message with attachments changes its caption and keeps its attachments (docs/protocol.md
//     "Editing and recalling"): the ~edit entry and HISTORY carry the attachments body with the new text, and
//     a member still gets a download URL; an EDIT body that would pass for an attachments body is refused.
TEST(E2E, A03_EditKeepsTheAttachments) {
  if (!store_configured()) GTEST_SKIP() << "QIM_S3_ENDPOINT is unset: no object store for attachments";
  auto& qim = shared_qim();
  const auto a = user("a03", "alice"), b = user("a03", "bob");
  auto alice = login(qim, a);
  auto bob = login(qim, b);
  const std::string conversation = conv(a, b);
  const std::string bytes = pattern_bytes(50'000, 11);
  const std::string id = upload(*alice, conversation, bytes);
  ASSERT_FALSE(id.empty());
  auto ack = send_with(*alice, conversation, "e1", id, bytes.size(), "old caption");
  ASSERT_EQ(ack.type, "SEND_ACK") << ack.raw;
  ASSERT_EQ(collect_delivered(*bob, 1, kWait).size(), 1u);

  auto edited = alice->edit(conversation, ack.message_id, "ed1", "new caption");
  ASSERT_TRUE(edited.ok()) << edited.error().to_string();
  ASSERT_EQ(edited->type, "EDIT_ACK");
  auto live = collect_delivered(*bob, 1, kWait);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].client_msg_id, "~edit");
  simdjson::dom::parser p;
  std::string_view inner;
  ASSERT_EQ(p.parse(live[0].body)["body"].get_string().get(inner), simdjson::SUCCESS) << live[0].body;
  const std::string edited_body(inner);
  EXPECT_EQ(edited_body.rfind(R"({"qim":"attachments","text":"new caption")", 0), 0u) << edited_body;
  EXPECT_NE(edited_body.find(id), std::string::npos) << edited_body;

  // The archiver rewrites the history row after fanout decided the edit: read until the row has changed.
  std::string current;
  const auto until = std::chrono::steady_clock::now() + kWait;
  while (std::chrono::steady_clock::now() < until) {
    auto page = bob->history(conversation, std::nullopt, 50);
    ASSERT_TRUE(page.ok()) << page.error().to_string();
    for (const auto& m : page->entries)
      if (m.message_id == ack.message_id) current = m.body;
    if (current.find("old caption") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(current, edited_body);
  auto got = url_of(*bob, "u-after-edit", conversation, ack.message_id, id);
  ASSERT_EQ(got.type, "ATTACHMENT_URL_OK") << got.raw;
  EXPECT_TRUE(http_request(http::verb::get, field(got.raw, "url")).body == bytes);

  auto forged = alice->edit(conversation, ack.message_id, "ed2",
                            R"({"qim":"attachments","text":"x","attachments":[]})");
  ASSERT_FALSE(forged.ok());
  EXPECT_NE(forged.error().message().find("INVALID_ARGUMENT"), std::string::npos)
      << forged.error().to_string();
}

// A4. The daily upload budget holds across gateways (docs/adr/0158): one user ATTACHes the largest file
//     allowed through every gateway in turn; together they grant what one budget holds
//     (QIM_ATTACH_DAILY_BYTES over QIM_ATTACH_MAX_BYTES files, the defaults unless the environment sets them)
//     and then each refuses QUOTA_EXCEEDED. Needs two gateways (the distributed deployment); nothing is
//     uploaded (a grant is charged by its declared size).
TEST(E2E, A04_DailyBudgetHoldsAcrossGateways) {
  if (!store_configured()) GTEST_SKIP() << "QIM_S3_ENDPOINT is unset: no object store for attachments";
  auto& qim = shared_qim();
  const auto ports = qim.gateway_ports();
  if (ports.size() < 2)
    GTEST_SKIP() << "one gateway: the budget across gateways needs the distributed deployment";
  auto setting = [](const char* var, uint64_t fallback) -> uint64_t {
    const char* v = std::getenv(var);
    return v != nullptr ? std::stoull(v) : fallback;
  };
  const uint64_t budget = setting("QIM_ATTACH_DAILY_BYTES", 2ull << 30);
  const uint64_t size = std::min(setting("QIM_ATTACH_MAX_BYTES", 100ull << 20), budget);
  const uint64_t fits = budget / size;  // grants one budget holds
  const auto a = user("a04", "alice"), b = user("a04", "bob");
  std::vector<std::unique_ptr<Client>> alice;  // one connection per gateway
  for (size_t i = 0; i < ports.size(); ++i) {
    alice.push_back(login_at(ports[i], a, "d" + std::to_string(i)));
    ASSERT_NE(alice.back(), nullptr);
  }
  const std::string attach = R"({"type":"ATTACH","conversation":")" + conv(a, b) +
                             R"(","name":"big.bin","content_type":"application/zip","size":)" +
                             std::to_string(size) + "}";
  uint64_t granted = 0;
  std::vector<uint64_t> granted_by(ports.size(), 0);
  // Every gateway in turn until each has refused once (bounded: a budget per gateway would show by then).
  std::vector<bool> refused(ports.size(), false);
  for (uint64_t n = 0; n < (fits + 1) * ports.size() + ports.size(); ++n) {
    const size_t g = n % ports.size();
    auto got = ask(*alice[g], "b" + std::to_string(n), attach);
    if (got.type == "ATTACH_OK") {
      ++granted;
      ++granted_by[g];
      continue;
    }
    ASSERT_EQ(got.code, "QUOTA_EXCEEDED") << got.raw;
    refused[g] = true;
    if (std::all_of(refused.begin(), refused.end(), [](bool r) { return r; })) break;
  }
  EXPECT_EQ(granted, fits) << "the gateways together granted " << granted * size << " bytes of a budget of "
                           << budget;
  for (size_t g = 0; g < ports.size(); ++g) {
    EXPECT_TRUE(refused[g]) << "gateway " << g << " never refused";
    EXPECT_GT(granted_by[g], 0u) << "gateway " << g << " granted nothing: the turns did not spread";
  }
}

// A5. An ATTACH with a client_upload_id repeated on the other gateway (the client reconnected there) is the
//     same grant, charged once against the shared budget (docs/adr/0161): the repeats answer the first
//     attachment id, the same id with another size is refused, and the budget then holds exactly one grant
//     fewer than it would have.
TEST(E2E, A05_RepeatedAttachOnAnotherGatewayIsChargedOnce) {
  if (!store_configured()) GTEST_SKIP() << "QIM_S3_ENDPOINT is unset: no object store for attachments";
  auto& qim = shared_qim();
  const auto ports = qim.gateway_ports();
  if (ports.size() < 2)
    GTEST_SKIP() << "one gateway: a repeat on another gateway needs the distributed deployment";
  auto setting = [](const char* var, uint64_t fallback) -> uint64_t {
    const char* v = std::getenv(var);
    return v != nullptr ? std::stoull(v) : fallback;
  };
  const uint64_t budget = setting("QIM_ATTACH_DAILY_BYTES", 2ull << 30);
  const uint64_t size = std::min(setting("QIM_ATTACH_MAX_BYTES", 100ull << 20), budget);
  const uint64_t fits = budget / size;
  const auto a = user("a05", "alice"), b = user("a05", "bob");
  std::vector<std::unique_ptr<Client>> alice;  // one connection per gateway
  for (size_t i = 0; i < ports.size(); ++i) {
    alice.push_back(login_at(ports[i], a, "d" + std::to_string(i)));
    ASSERT_NE(alice.back(), nullptr);
  }
  auto attach = [&](uint64_t bytes, const std::string& client_id) {
    return R"({"type":"ATTACH","conversation":")" + conv(a, b) +
           R"(","name":"big.bin","content_type":"application/zip","size":)" + std::to_string(bytes) +
           (client_id.empty() ? std::string() : R"(,"client_upload_id":")" + client_id + "\"") + "}";
  };
  auto first = ask(*alice[0], "r0", attach(size, "file-1"));
  ASSERT_EQ(first.type, "ATTACH_OK") << first.raw;
  for (size_t g = 1; g <= 2 * ports.size(); ++g) {
    auto again = ask(*alice[g % ports.size()], "r" + std::to_string(g), attach(size, "file-1"));
    ASSERT_EQ(again.type, "ATTACH_OK") << again.raw;
    EXPECT_EQ(field(again.raw, "attachment"), field(first.raw, "attachment"))
        << "gateway " << g % ports.size();
  }
  EXPECT_EQ(ask(*alice[1], "rx", attach(size - 1, "file-1")).code, "INVALID_ARGUMENT");
  // What is left of the budget: one grant fewer than it holds, whichever gateway asks.
  uint64_t granted = 0;
  for (uint64_t n = 0; n < fits + 1; ++n) {
    auto got = ask(*alice[n % ports.size()], "n" + std::to_string(n), attach(size, ""));
    if (got.type != "ATTACH_OK") {
      EXPECT_EQ(got.code, "QUOTA_EXCEEDED") << got.raw;
      break;
    }
    ++granted;
  }
  EXPECT_EQ(granted, fits - 1) << "the repeats were charged: " << fits - 1 - granted << " grants too few";
}

}  // namespace
}  // namespace qim::e2e
