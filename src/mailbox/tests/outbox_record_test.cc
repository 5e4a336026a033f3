// Round trips and corrupt input of the Outbox record (outbox/outbox_record.h).
#include "outbox/outbox_record.h"

#include <gtest/gtest.h>

#include "mailbox/tests/contract_helpers.h"

namespace qim::test {
namespace {

OutboxRecord sample() {
  OutboxRecord r;
  r.conversation = *ConversationId::parse("d:alice:bob");
  r.sender = *UserId::parse("alice");
  r.sender_device = *DeviceId::parse("laptop-2");
  r.client_msg_id = "c-991";
  r.server_time_ms = 1'790'000'000'000;
  r.body = "hello, bob";
  return r;
}

TEST(OutboxRecord, RoundTrips) {
  auto decoded = decode_outbox_record(encode_outbox_record(sample()));
  ASSERT_TRUE(is_ok(decoded));
  EXPECT_EQ(*decoded, sample());
}

// A reply is version 4 (docs/adr/0125): version 1's bytes then reply_to; a plain SEND is version 1.
TEST(OutboxRecord, AReplyIsVersionFourAndAPlainSendUnchanged) {
  const std::string plain = encode_outbox_record(sample());
  EXPECT_EQ(plain[0], 1);
  OutboxRecord reply = sample();
  reply.reply_to = MessageId{(uint64_t{2} << 48) | 7};
  const std::string bytes = encode_outbox_record(reply);
  EXPECT_EQ(bytes[0], 4);
  EXPECT_EQ(bytes.substr(1, plain.size() - 1), plain.substr(1));
  auto decoded = decode_outbox_record(bytes);
  ASSERT_TRUE(is_ok(decoded));
  EXPECT_EQ(*decoded, reply);
  EXPECT_EQ(to_message(*decoded, MessageId{9}).reply_to, reply.reply_to);
  EXPECT_FALSE(decode_outbox_record(bytes.substr(0, bytes.size() - 1)).ok());
  // An event never carries reply_to: the event's version, without it.
  OutboxRecord event = reply;
  event.event = MessageEvent{MessageEventKind::kRecall, MessageId{5}};
  auto back = decode_outbox_record(encode_outbox_record(event));
  ASSERT_TRUE(is_ok(back));
  EXPECT_FALSE(back->reply_to);
}

TEST(OutboxRecord, RoundTripsWithoutDevice) {
  OutboxRecord r = sample();
  r.sender_device = DeviceId{};
  auto decoded = decode_outbox_record(encode_outbox_record(r));
  ASSERT_TRUE(is_ok(decoded));
  EXPECT_EQ(*decoded, r);
}

TEST(OutboxRecord, EveryTruncationIsCorrupt) {
  const std::string bytes = encode_outbox_record(sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_TRUE(fails_with(decode_outbox_record(bytes.substr(0, n)), Errc::kCorruptEntry)) << n << " bytes";
  }
}

TEST(OutboxRecord, UnknownVersionIsCorrupt) {
  std::string bytes = encode_outbox_record(sample());
  bytes[0] = 0;
  auto decoded = decode_outbox_record(bytes);
  EXPECT_TRUE(fails_with(decoded, Errc::kCorruptEntry));
  EXPECT_NE(decoded.error().message().find("version"), std::string::npos) << decoded.error().message();
}

TEST(OutboxRecord, TrailingBytesAreCorrupt) {
  EXPECT_TRUE(fails_with(decode_outbox_record(encode_outbox_record(sample()) + "zz"), Errc::kCorruptEntry));
}

TEST(OutboxRecord, InvalidConversationIsCorrupt) {
  OutboxRecord r = sample();
  r.conversation = ConversationId::unchecked("d:alice bob");
  auto decoded = decode_outbox_record(encode_outbox_record(r));
  EXPECT_TRUE(fails_with(decoded, Errc::kCorruptEntry));
  EXPECT_NE(decoded.error().message().find("conversation"), std::string::npos) << decoded.error().message();
}

TEST(OutboxRecord, MessageIdAndMessage) {
  const MessageId id = message_id_of(3, Offset{42});
  EXPECT_EQ(id.value, (uint64_t{3} << 48) | 42);
  const Message m = to_message(sample(), id);
  EXPECT_EQ(m.id, id);
  EXPECT_EQ(m.sender, sample().sender);
  EXPECT_EQ(m.body, sample().body);
  EXPECT_EQ(m.server_time_ms, sample().server_time_ms);
  EXPECT_TRUE(is_ok(validate_message(m)));
}

TEST(OutboxRecord, AMessageKeepsVersionOneAndAGroupOpIsVersionTwo) {
  const std::string message = encode_outbox_record(sample());
  EXPECT_EQ(message[0], 1);  // the bytes of every record written before groups
  OutboxRecord op = sample();
  op.conversation = *ConversationId::parse("g:team");
  op.client_msg_id = "~group:add";
  op.group_op =
      GroupOp{GroupOpKind::kAdd, {*UserId::parse("carol"), *UserId::parse("dave")}, "", GroupRole::kMember};
  const std::string bytes = encode_outbox_record(op);
  EXPECT_EQ(bytes[0], 2);
  auto decoded = decode_outbox_record(bytes);
  ASSERT_TRUE(is_ok(decoded));
  EXPECT_EQ(*decoded, op);
  EXPECT_FALSE(decode_outbox_record(message)->group_op.has_value());

  OutboxRecord direct = op;  // a group op in a direct conversation is no group op
  direct.conversation = *ConversationId::parse("d:alice:bob");
  EXPECT_TRUE(fails_with(decode_outbox_record(encode_outbox_record(direct)), Errc::kCorruptEntry));
  std::string truncated = bytes.substr(0, bytes.size() - 1);
  EXPECT_TRUE(fails_with(decode_outbox_record(truncated), Errc::kCorruptEntry));
}

TEST(OutboxRecord, PartitionIsStableAndInRange) {
  const auto c = *ConversationId::parse("d:alice:bob");
  const uint32_t p = outbox_partition_of(c, 12);
  EXPECT_LT(p, 12u);
  EXPECT_EQ(outbox_partition_of(c, 12), p);
  EXPECT_EQ(outbox_partition_of(c, 1), 0u);
}

}  // namespace
}  // namespace qim::test
