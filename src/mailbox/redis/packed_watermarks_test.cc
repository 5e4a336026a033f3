// Encodings of the Redis store that need no server: packed W v2, seq members, stored values.
#include "mailbox/redis/packed_watermarks.h"

#include <gtest/gtest.h>

#include "mailbox/redis/redis_keys.h"
#include "mailbox/redis/redis_values.h"

namespace qim {
namespace {

MailboxSeq seq(uint32_t epoch, uint64_t offset) {
  return *compose(Epoch{epoch}, Offset{offset});
}

TEST(PackedWatermarks, LayoutIs64LittleEndianLanesThenEpoch) {
  const MailboxSeq w = seq(3, 0x0102030405);
  const std::string bytes = encode_packed_watermarks(PackedWatermarks::uniform(w));
  ASSERT_EQ(bytes.size(), 516u);
  for (uint32_t l = 0; l < kLanes; ++l) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | static_cast<uint8_t>(bytes[8 * l + b]);
    EXPECT_EQ(v, w.raw()) << "lane " << l;
  }
  EXPECT_EQ(static_cast<uint8_t>(bytes[512]), 3);
  EXPECT_EQ(bytes.substr(513), std::string(3, '\0'));
  EXPECT_EQ(bytes.substr(0, 512), encode_packed_lanes(PackedWatermarks::uniform(w).lanes));
}

TEST(PackedWatermarks, RoundTripsAndYieldsTheFrontier) {
  const auto w = PackedWatermarks::uniform(seq(7, 99));
  auto back = decode_packed_watermarks(encode_packed_watermarks(w));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, w);
  EXPECT_EQ(*frontier_of(*back), seq(7, 99));
}

TEST(PackedWatermarks, WrongSizeIsCorrupt) {
  auto bad = decode_packed_watermarks(std::string(515, '\0'));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), Errc::kCorruptEntry);
}

TEST(PackedWatermarks, DifferingLanesOrWrongEpochAreCorrupt) {
  auto w = PackedWatermarks::uniform(seq(2, 10));
  w.lanes[17] = seq(2, 11);
  auto odd = frontier_of(w);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.code(), Errc::kCorruptEntry);
  EXPECT_NE(odd.error().message().find("lane 17"), std::string::npos);

  auto e = PackedWatermarks::uniform(seq(2, 10));
  e.epoch = Epoch{1};
  EXPECT_EQ(frontier_of(e).code(), Errc::kCorruptEntry);
}

TEST(SeqHex, SortsLikeTheNumberAboveTwoToThe53) {
  // Adjacent seqs at a high epoch differ only below double precision: the members must still differ.
  const MailboxSeq a = seq(65535, kMaxOffset - 1), b = seq(65535, kMaxOffset);
  EXPECT_EQ(static_cast<double>(a.raw()), static_cast<double>(b.raw()));
  EXPECT_LT(seq_hex(a), seq_hex(b));
  EXPECT_LT(seq_hex(seq(1, kMaxOffset)), seq_hex(seq(2, 0)));
  EXPECT_EQ(seq_hex(seq(1, 0)), "0001000000000000");
  EXPECT_EQ(*parse_seq_hex(seq_hex(b)), b);
}

TEST(SeqHex, RejectsAnythingButSixteenLowercaseHexDigits) {
  for (const char* bad : {"", "0001", "000100000000000G", "000100000000000A", "00010000000000000"}) {
    auto r = parse_seq_hex(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.code(), Errc::kCorruptEntry);
  }
}

TEST(RedisValues, IdentityRoundTripsAndRejectsGarbage) {
  const DispatchId id = *DispatchId::parse("d-1");
  const DispatchIdentity identity{id, 0xABCDEF, Manifest{{3, 4}}};
  auto back = decode_identity_value(id, encode_identity_value(identity, Offset{42}));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->identity, identity);
  EXPECT_EQ(back->canonical_offset, Offset{42});
  std::string truncated = encode_identity_value(identity, Offset{42});
  truncated.pop_back();
  EXPECT_EQ(decode_identity_value(id, truncated).code(), Errc::kCorruptEntry);
}

TEST(RedisValues, EntryCarriesItsExpiryFirst) {
  Message m;
  m.id = MessageId{5};
  m.conversation = *ConversationId::parse("d:a:b");
  m.sender = *UserId::parse("a");
  m.server_time_ms = 1'000;
  m.body = "hi";
  const std::string bytes = encode_entry_value(m, 0x0102);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0x02);
  EXPECT_EQ(static_cast<uint8_t>(bytes[1]), 0x01);
  auto back = decode_entry_value(bytes);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->expires_ms, 0x0102);
  EXPECT_EQ(back->message, m);
  EXPECT_EQ(decode_entry_value("short").code(), Errc::kCorruptEntry);
}

}  // namespace
}  // namespace qim
