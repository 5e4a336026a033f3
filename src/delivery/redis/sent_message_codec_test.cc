// The done entry of the shared SEND table: round trip, and CorruptEntry for anything else.
#include <gtest/gtest.h>

#include "delivery/redis/redis_send_dedup.h"

namespace qim {
namespace {

TEST(SentMessageCodec, RoundTripsAndRefusesAnythingElse) {
  SentMessage s{MessageId{(uint64_t{5} << 48) | 77},
                *direct_conversation(*UserId::parse("alice"), *UserId::parse("bob")), 1'800'000'000'123,
                send_fingerprint(*direct_conversation(*UserId::parse("alice"), *UserId::parse("bob")), "hi")};
  const std::string bytes = encode_sent_message(s);
  auto back = decode_sent_message(bytes);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->id.value, s.id.value);
  EXPECT_EQ(back->conversation, s.conversation);
  EXPECT_EQ(back->server_time_ms, s.server_time_ms);
  EXPECT_EQ(back->fingerprint, s.fingerprint);
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_EQ(decode_sent_message(bytes.substr(0, n)).code(), Errc::kCorruptEntry) << n;
  EXPECT_EQ(decode_sent_message(bytes + "x").code(), Errc::kCorruptEntry);
  EXPECT_EQ(decode_sent_message("Pgw-a:1").code(), Errc::kCorruptEntry);  // a claim is not an outcome
}

}  // namespace
}  // namespace qim
