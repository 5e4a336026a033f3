#include "delivery/redis/signal_payload.h"

#include <gtest/gtest.h>

#include "delivery/redis/route_payload.h"

namespace qim {
namespace {

TEST(SignalPayload, RoundTrips) {
  std::vector<Signal> in{{{*UserId::parse("bob"), *UserId::parse("carol")}, "{\"type\":\"TYPING\"}", 42},
                         {{*UserId::parse("dave")}, std::string("\0x", 2), 0}};
  const std::string bytes = encode_signal_payload(in);
  EXPECT_TRUE(is_signal_payload(bytes));
  auto out = decode_signal_payload(bytes);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  ASSERT_EQ(out->size(), 2u);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ((*out)[i].users, in[i].users);
    EXPECT_EQ((*out)[i].frame, in[i].frame);
    EXPECT_EQ((*out)[i].except_connection, in[i].except_connection);
  }
}

TEST(SignalPayload, IsToldApartFromRoutePayloads) {
  RoutePayload p;
  p.shard = ShardId{3};
  p.from = MailboxSeq::from_raw(1);
  p.to = MailboxSeq::from_raw(2);
  const std::string route = encode_route_payload(p);
  EXPECT_FALSE(is_signal_payload(route));
  EXPECT_FALSE(decode_signal_payload(route).ok());
  // and a route decoder refuses a signal payload (an old gateway resyncs rather than misreads it)
  EXPECT_FALSE(decode_route_payload(encode_signal_payload({})).ok());
}

TEST(SignalPayload, RefusesEveryTruncationAndTrailingBytes) {
  const std::string bytes = encode_signal_payload(std::vector<Signal>{{{*UserId::parse("bob")}, "frame", 1}});
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = decode_signal_payload(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.code(), Errc::kCorruptEntry);
  }
  EXPECT_FALSE(decode_signal_payload(bytes + "x").ok());
  std::string bad_user = encode_signal_payload(std::vector<Signal>{{{*UserId::parse("bob")}, "f", 0}});
  bad_user[3 + 4 + 8 + 4 + 4] = ':';  // "bob" -> ":ob": not a user id
  EXPECT_FALSE(decode_signal_payload(bad_user).ok());
}

}  // namespace
}  // namespace qim
