// The publication codec of delivery across gateways: what is encoded decodes to the same, and anything
// else (truncated, padded, other versions, entries outside the range) is a CorruptEntry, never a crash.
#include "delivery/redis/route_payload.h"

#include <gtest/gtest.h>

#include <random>

namespace qim {
namespace {

MailboxSeq seq(uint64_t offset) {
  return compose(Epoch{2}, Offset{offset}).value();
}

RoutePayload sample() {
  RoutePayload p;
  p.shard = ShardId{7};
  p.from = seq(10);
  p.to = seq(20);
  for (uint64_t o : {12, 15, 20}) {
    MailboxEntry e;
    e.user = *UserId::parse("u" + std::to_string(o));
    e.seq = seq(o);
    e.message.id = MessageId{(uint64_t{3} << 48) | o};
    e.message.conversation = *direct_conversation(*UserId::parse("alice"), *UserId::parse("bob"));
    e.message.sender = *UserId::parse("alice");
    e.message.sender_device = *DeviceId::parse("phone");
    e.message.client_msg_id = "c-" + std::to_string(o);
    e.message.server_time_ms = 1'800'000'000'000 + static_cast<int64_t>(o);
    e.message.body = std::string("body\0with nul ", 14) + std::to_string(o);
    p.entries.push_back(e);
  }
  return p;
}

TEST(RoutePayload, RoundTripsEntriesAndUnknownRanges) {
  const RoutePayload p = sample();
  auto back = decode_route_payload(encode_route_payload(p));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_FALSE(back->unknown);
  EXPECT_EQ(back->shard, p.shard);
  EXPECT_EQ(back->from, p.from);
  EXPECT_EQ(back->to, p.to);
  EXPECT_EQ(back->entries, p.entries);

  RoutePayload u;
  u.unknown = true;
  u.shard = ShardId{3};
  u.from = seq(1);
  u.to = seq(9);
  auto ub = decode_route_payload(encode_route_payload(u));
  ASSERT_TRUE(ub.ok()) << ub.error().to_string();
  EXPECT_TRUE(ub->unknown);
  EXPECT_EQ(ub->to, seq(9));
  EXPECT_TRUE(ub->entries.empty());
}

// Replies (docs/adr/0125): a payload with one carries every entry's reply_to (version 2); one of plain
// messages stays version 1.
TEST(RoutePayload, RepliesRoundTripAndPlainPayloadsStayVersionOne) {
  EXPECT_EQ(encode_route_payload(sample())[1], 1);
  RoutePayload p = sample();
  p.entries[1].message.reply_to = p.entries[0].message.id;
  const std::string bytes = encode_route_payload(p);
  EXPECT_EQ(bytes[1], 2);
  auto back = decode_route_payload(bytes);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  ASSERT_EQ(back->entries.size(), 3u);
  EXPECT_EQ(back->entries[1].message, p.entries[1].message);
  EXPECT_FALSE(back->entries[0].message.reply_to);
  EXPECT_EQ(decode_route_payload(bytes.substr(0, bytes.size() - 1)).code(), Errc::kCorruptEntry);
}

TEST(RoutePayload, EveryTruncationAndPaddingIsCorrupt) {
  const std::string bytes = encode_route_payload(sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = decode_route_payload(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes decoded";
    EXPECT_EQ(r.code(), Errc::kCorruptEntry);
  }
  auto padded = decode_route_payload(bytes + "x");
  ASSERT_FALSE(padded.ok());
  EXPECT_EQ(padded.code(), Errc::kCorruptEntry);
}

TEST(RoutePayload, RefusesOtherVersionsKindsAndEntriesOutsideTheRange) {
  std::string bytes = encode_route_payload(sample());
  auto with = [&](size_t at, char v) {
    std::string b = bytes;
    b[at] = v;
    return decode_route_payload(b);
  };
  EXPECT_EQ(with(0, 'X').code(), Errc::kCorruptEntry);  // magic
  EXPECT_EQ(with(1, 3).code(), Errc::kCorruptEntry);    // version
  EXPECT_EQ(with(2, 5).code(), Errc::kCorruptEntry);    // kind

  RoutePayload outside = sample();
  outside.entries.back().seq = seq(21);  // above `to`
  EXPECT_EQ(decode_route_payload(encode_route_payload(outside)).code(), Errc::kCorruptEntry);
  RoutePayload unordered = sample();
  std::swap(unordered.entries[0], unordered.entries[1]);
  EXPECT_EQ(decode_route_payload(encode_route_payload(unordered)).code(), Errc::kCorruptEntry);
  RoutePayload bad_user = sample();
  std::string b = encode_route_payload(bad_user);
  // The first entry's user starts after the 31-byte header and its u32 length: make it an invalid name.
  b[31 + 4] = ' ';
  EXPECT_EQ(decode_route_payload(b).code(), Errc::kCorruptEntry);
}

TEST(RoutePayload, RandomBytesNeverCrash) {
  std::mt19937_64 random(42);
  const std::string good = encode_route_payload(sample());
  for (int i = 0; i < 2000; ++i) {
    std::string b = good;
    for (int k = 0; k < 1 + i % 4; ++k) b[random() % b.size()] = static_cast<char>(random());
    (void)decode_route_payload(b);  // must not crash or throw; ok or CorruptEntry
    std::string junk(random() % 64, '\0');
    for (auto& c : junk) c = static_cast<char>(random());
    auto r = decode_route_payload(junk);
    if (!r.ok()) {
      EXPECT_EQ(r.code(), Errc::kCorruptEntry);
    }
  }
}

}  // namespace
}  // namespace qim
