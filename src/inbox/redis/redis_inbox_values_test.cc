// The byte encodings of the Redis inbox: no Redis needed.
#include "inbox/redis/redis_inbox_values.h"

#include <gtest/gtest.h>

#include "mailbox/redis/redis_keys.h"

namespace qim {
namespace {

InboxEntryRef ref() {
  return InboxEntryRef{MailboxSeq::from_raw((uint64_t{7} << 48) | 42),
                       MessageId{(uint64_t{3} << 48) | 9},
                       *UserId::parse("alice"),
                       1'800'000'000'123,
                       true,
                       "hello"};
}

TEST(RedisInboxValuesTest, IndexValueRoundTrips) {
  const auto decoded = decode_inbox_value(encode_inbox_value(ref(), 1'900'000'000'000));
  ASSERT_TRUE(decoded.ok()) << decoded.error().to_string();
  EXPECT_EQ(decoded->expires_ms, 1'900'000'000'000);
  InboxEntryRef want = ref();
  want.seq = MailboxSeq();  // the member carries it
  EXPECT_EQ(decoded->ref, want);
}

TEST(RedisInboxValuesTest, RowCarriesItsSeqInFront) {
  const std::string row = seq_hex(ref().seq) + encode_inbox_value(ref(), 5);
  const auto decoded = decode_inbox_row(row);
  ASSERT_TRUE(decoded.ok()) << decoded.error().to_string();
  EXPECT_EQ(decoded->ref, ref());
  EXPECT_EQ(decoded->expires_ms, 5);
}

TEST(RedisInboxValuesTest, CorruptValuesAreCorruptEntry) {
  std::string bytes = encode_inbox_value(ref(), 5);
  EXPECT_EQ(decode_inbox_value(bytes.substr(0, bytes.size() - 1)).error().code(), Errc::kCorruptEntry);
  EXPECT_EQ(decode_inbox_value(bytes + "x").error().code(), Errc::kCorruptEntry);
  bytes[8] = 2;  // counts: neither 0 nor 1
  EXPECT_EQ(decode_inbox_value(bytes).error().code(), Errc::kCorruptEntry);
  EXPECT_EQ(decode_inbox_row("0123").error().code(), Errc::kCorruptEntry);
  EXPECT_EQ(decode_inbox_row("zzzzzzzzzzzzzzzz" + encode_inbox_value(ref(), 5)).error().code(),
            Errc::kCorruptEntry);
}

TEST(RedisInboxValuesTest, SettingKeepsItsValueAfterTheVersion) {
  const std::string cell = encode_setting(1'800'000'000'000, "off");
  EXPECT_EQ(cell.size(), 16u + 3u);
  EXPECT_EQ(*decode_setting_value(cell), "off");
  EXPECT_EQ(*decode_setting_value(encode_setting(0, "")), "");
  EXPECT_EQ(decode_setting_value("short").error().code(), Errc::kCorruptEntry);
  // Fixed width: ordered as text as by version.
  EXPECT_LT(encode_setting(9, ""), encode_setting(10, ""));
}

TEST(RedisInboxValuesTest, MessageIdHexIsFixedWidthAndExact) {
  const MessageId big{(uint64_t{1} << 60) + 1};
  EXPECT_EQ(message_id_hex(big), "1000000000000001");
  EXPECT_EQ(parse_message_id_hex(message_id_hex(big))->value, big.value);
  EXPECT_LT(message_id_hex(MessageId{0xff}), message_id_hex(MessageId{0x100}));
  EXPECT_FALSE(parse_message_id_hex("12").ok());
}

}  // namespace
}  // namespace qim
