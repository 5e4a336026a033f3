// The read receipt's Outbox record (outbox/outbox_record.h version 5, docs/adr/0147): it round-trips, is
// told apart from messages, group ops and events, and is never a repeated SEND.
#include <gtest/gtest.h>

#include "outbox/outbox_record.h"

namespace qim {
namespace {

OutboxRecord receipt() {
  OutboxRecord r;
  r.conversation = ConversationId::parse("d:alice:bob").value();
  r.sender = UserId::parse("bob").value();
  r.sender_device = DeviceId::parse("phone").value();
  r.server_time_ms = 1'790'000'000'000;
  r.read_through = MessageId{(uint64_t{2} << 48) | 17};
  return r;
}

TEST(ReadReceiptRecord, RoundTripsAsVersionFiveAndIsNoMessage) {
  const std::string bytes = encode_outbox_record(receipt());
  EXPECT_EQ(bytes[0], 5);
  auto decoded = decode_outbox_record(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().to_string();
  EXPECT_EQ(*decoded, receipt());
  EXPECT_TRUE(is_read_receipt(*decoded));
  OutboxRecord message = receipt();
  message.read_through.reset();
  message.body = "hi";
  EXPECT_FALSE(is_read_receipt(*decode_outbox_record(encode_outbox_record(message))));
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(decode_outbox_record(bytes.substr(0, n)).ok()) << n << " bytes";
  EXPECT_FALSE(decode_outbox_record(bytes + "z").ok());
}

}  // namespace
}  // namespace qim
