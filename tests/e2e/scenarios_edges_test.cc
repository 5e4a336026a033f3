// End-to-end edges of issue 36 against a real deployment: frames bounded by their encoded bytes (item 4)
// and a token's expiry ending its connection (item 6).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "auth/token.h"
#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

// A body of DEL bytes: each is written \u007f on the wire, six times its size.
std::string del_body(size_t bytes) {
  return std::string(bytes, '\x7f');
}

// X01. 200 messages of 16 KiB DEL bytes: a SYNC of 500 from 0 was one ~19 MB page, over the client's
// frame limit, so the receiver's loop failed on every SYNC. Pages are bounded by bytes now: the client
// loop shows every message, in order.
TEST(E2E, X01_ControlByteBodiesSyncFromZeroInBoundedPages) {
  auto& qim = shared_qim();
  const auto a = user("x01", "a"), b = user("x01", "b");
  const std::string body = del_body(16 * 1024);
  // Four connections of 50 SENDs each: within the per-connection frame rate, and each connection's pushes
  // of its own copies (the sender's mailbox) stay under its outbound bound.
  for (int d = 0; d < 4; ++d) {
    auto alice = login(qim, a, "d" + std::to_string(d));
    ASSERT_TRUE(alice);
    // Written by hand: JSON lets DEL stand unescaped (16 KiB on the wire), as a browser's JSON.stringify
    // sends it; the C++ client's writer escapes it and its 96 KiB frame would pass the frame limit.
    for (int i = 0; i < 50; ++i)
      alice->send_text(R"({"type":"SEND","client_msg_id":"m)" + std::to_string(d * 50 + i) + R"(","to":")" +
                       b + R"(","body":")" + body + "\"}");
    for (int i = 0; i < 50; ++i)
      ASSERT_TRUE(alice->wait_type("SEND_ACK", kWait).ok())
          << d << "/" << i << " closed " << alice->close_code() << " " << alice->close_reason();
    // Wait for this connection's own 50 copies before the next one opens: on a slower store they become
    // visible after the ACKs, and a later connection would be pushed them too (8 MiB outbound bound).
    std::set<std::string> own;
    while (own.size() < 50) {
      auto deliver = alice->wait_type("DELIVER", kWait);
      ASSERT_TRUE(deliver.ok()) << d << ": " << own.size() << " of 50 pushed; closed " << alice->close_code()
                                << " " << alice->close_reason();
      for (const auto& e : deliver->entries)
        if (e.client_msg_id.starts_with("m")) {
          const int n = std::stoi(e.client_msg_id.substr(1));
          if (n >= d * 50 && n < d * 50 + 50) own.insert(e.client_msg_id);
        }
    }
  }
  // Wait until the 200 are visible. A connection open meanwhile is pushed ~19 MB of escaped entries and may
  // be closed as a slow consumer (1013: reconnect and SYNC, as the protocol says): probe again then.
  size_t visible = 0;
  for (const auto deadline = std::chrono::steady_clock::now() + kWait;
       visible < 200 && std::chrono::steady_clock::now() < deadline;) {
    auto probe = login(qim, b, "probe");
    ASSERT_TRUE(probe);
    size_t n = 0;
    uint64_t after = 0;
    bool ok = true;
    for (bool more = true; more && ok;) {
      auto page = probe->sync(after, 500);
      ok = page.ok();
      if (!ok) break;
      n += page->entries.size();
      if (!page->entries.empty()) after = page->entries.back().seq;
      more = page->more;
    }
    if (ok) visible = n;
    if (visible < 200) std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(visible, 200u);
  auto bob = login(qim, b);
  ASSERT_TRUE(bob);

  // Every page is within the documented bound and the client loop from 0 shows all 200 once, in order.
  size_t pages = 0, largest = 0;
  uint64_t after = 0;
  for (bool more = true; more; ++pages) {
    auto page = bob->sync(after, 500);
    ASSERT_TRUE(page.ok()) << page.error().to_string();
    largest = std::max(largest, page->raw.size());
    ASSERT_FALSE(page->entries.empty());
    after = page->entries.back().seq;
    more = page->more;
  }
  EXPECT_LE(largest, size_t{1} << 20);
  EXPECT_GT(pages, 1u);
  std::printf("200 entries of 16 KiB DEL bodies: %zu pages, the largest %zu bytes\n", pages, largest);

  auto loop = login(qim, b, "loop");
  ASSERT_TRUE(loop);
  client::MailboxFollower follower(*loop, {});
  follower.start();
  auto shown = follow(follower, 200, kWait);
  ASSERT_EQ(shown.size(), 200u);
  expect_strictly_increasing(shown);
  for (const auto& e : shown) EXPECT_EQ(e.body, body);
}

// X02. A token that expires on a silent connection: no push after the expiry, and the connection is
// closed with 1008 naming the expiry (it was kept open by pings and pushed to for ever).
TEST(E2E, X02_AnExpiredTokenGetsNoPushAndIsClosed) {
  auto& qim = shared_qim();
  const auto a = user("x02", "a"), b = user("x02", "b");
  SystemClock clock;
  const int64_t ttl_ms = 3000;
  auto bob = connect_to(qim);
  ASSERT_TRUE(bob);
  auto ok = bob->auth(*mint_token(kSecret, *UserId::parse(b), *DeviceId::parse("short"), ttl_ms, clock));
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  auto alice = login(qim, a);
  ASSERT_TRUE(alice);
  ASSERT_TRUE(alice->send(b, "before", "while the token is valid").ok());
  ASSERT_TRUE(bob->wait_type("DELIVER", kWait).ok());

  std::this_thread::sleep_for(std::chrono::milliseconds(ttl_ms + 500));
  ASSERT_TRUE(alice->send(b, "after", "after the token expired").ok());
  auto pushed = bob->wait_for(
      [](const ServerFrame& f) {
        return f.type == "DELIVER" && std::any_of(f.entries.begin(), f.entries.end(),
                                                  [](const Entry& e) { return e.client_msg_id == "after"; });
      },
      kQuiet);
  EXPECT_FALSE(pushed.ok()) << "a DELIVER reached a connection whose token had expired: " << pushed->raw;
  EXPECT_TRUE(bob->closed());
  EXPECT_EQ(bob->close_code(), 1008);
  EXPECT_NE(bob->close_reason().find("token expired"), std::string::npos) << bob->close_reason();
  // The message is in the mailbox: a new token reads it.
  auto again = login(qim, b);
  ASSERT_TRUE(again);
  EXPECT_TRUE(has_cmid(sync_until(*again, [](const auto& e) { return has_cmid(e, "after"); }), "after"));
}

}  // namespace
}  // namespace qim::e2e
