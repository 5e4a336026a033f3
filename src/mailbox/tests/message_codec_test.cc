// Round trips and corrupt input of the byte encodings in mailbox/message_codec.h and mailbox/dispatch.h.
#include "mailbox/message_codec.h"

#include <gtest/gtest.h>

#include "mailbox/tests/contract_helpers.h"

namespace qim::test {
namespace {

Message sample_message() {
  Message m = make_message(7, *UserId::parse("alice"), 1'790'000'000'123);
  m.body = std::string("multi\nline \0 body", 17);
  return m;
}

DispatchRecord sample_record() {
  return make_record("m7-s3", sample_message(),
                     {{*UserId::parse("bob"), *UserId::parse("alice")}, {*UserId::parse("carol")}});
}

TEST(MessageCodec, MessageRoundTrips) {
  const Message m = sample_message();
  auto decoded = decode_message(encode_message(m));
  ASSERT_TRUE(is_ok(decoded));
  EXPECT_EQ(*decoded, m);
}

// A reply carries reply_to (docs/adr/0125) in a version 2; a plain message stays version 1 byte for byte.
TEST(MessageCodec, AReplyRoundTripsAndAPlainMessageStaysVersionOne) {
  const Message plain = sample_message();
  const std::string plain_bytes = encode_message(plain);
  EXPECT_EQ(plain_bytes[0], 1);
  Message reply = plain;
  reply.reply_to = MessageId{(uint64_t{3} << 48) | 41};
  const std::string reply_bytes = encode_message(reply);
  EXPECT_EQ(reply_bytes[0], 2);
  EXPECT_EQ(reply_bytes.substr(1, plain_bytes.size() - 1), plain_bytes.substr(1));
  auto decoded = decode_message(reply_bytes);
  ASSERT_TRUE(is_ok(decoded));
  EXPECT_EQ(*decoded, reply);
  // In a dispatch record too, and only a reply's digest differs from a plain message's.
  DispatchRecord rec = sample_record();
  rec.message = reply;
  auto back = decode_dispatch_record(encode_dispatch_record(rec));
  ASSERT_TRUE(is_ok(back));
  EXPECT_EQ(back->message.reply_to, reply.reply_to);
  // A truncated reply_to is corrupt; a reply to message 0 (partition 0's first message) is one.
  EXPECT_EQ(decode_message(reply_bytes.substr(0, reply_bytes.size() - 1)).code(), Errc::kCorruptEntry);
  Message zero = plain;
  zero.reply_to = MessageId{0};
  auto zero_back = decode_message(encode_message(zero));
  ASSERT_TRUE(is_ok(zero_back));
  EXPECT_EQ(*zero_back, zero);
}

TEST(MessageCodec, MessageWithoutDeviceOrBodyRoundTrips) {
  Message m = sample_message();
  m.sender_device = DeviceId{};
  m.body.clear();
  m.client_msg_id.clear();
  auto decoded = decode_message(encode_message(m));
  ASSERT_TRUE(is_ok(decoded));
  EXPECT_EQ(*decoded, m);
}

TEST(MessageCodec, LargestBodyRoundTrips) {
  Message m = sample_message();
  m.body.assign(kMaxBodyBytes, 'b');
  auto decoded = decode_message(encode_message(m));
  ASSERT_TRUE(is_ok(decoded));
  EXPECT_EQ(decoded->body.size(), kMaxBodyBytes);
}

TEST(MessageCodec, EveryTruncationIsCorrupt) {
  const std::string bytes = encode_message(sample_message());
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_TRUE(fails_with(decode_message(bytes.substr(0, n)), Errc::kCorruptEntry)) << n << " bytes";
  }
}

TEST(MessageCodec, UnknownVersionIsCorrupt) {
  std::string bytes = encode_message(sample_message());
  bytes[0] = 9;
  auto decoded = decode_message(bytes);
  EXPECT_TRUE(fails_with(decoded, Errc::kCorruptEntry));
  EXPECT_NE(decoded.error().message().find("version"), std::string::npos) << decoded.error().message();
}

TEST(MessageCodec, TrailingBytesAreCorrupt) {
  auto decoded = decode_message(encode_message(sample_message()) + "x");
  EXPECT_TRUE(fails_with(decoded, Errc::kCorruptEntry));
  EXPECT_NE(decoded.error().message().find("trailing"), std::string::npos) << decoded.error().message();
}

TEST(MessageCodec, InvalidSenderIsCorrupt) {
  Message m = sample_message();
  m.sender = UserId::unchecked("bad user");  // a space is not a name character
  auto decoded = decode_message(encode_message(m));
  EXPECT_TRUE(fails_with(decoded, Errc::kCorruptEntry));
  EXPECT_NE(decoded.error().message().find("sender"), std::string::npos) << decoded.error().message();
}

TEST(MessageCodec, OversizeBodyLengthIsCorrupt) {
  Message m = sample_message();
  m.body.assign(kMaxBodyBytes + 1, 'b');
  EXPECT_TRUE(fails_with(decode_message(encode_message(m)), Errc::kCorruptEntry));
}

TEST(DispatchRecordCodec, RoundTripsWithItsIdentity) {
  const DispatchRecord r = sample_record();
  auto decoded = decode_dispatch_record(encode_dispatch_record(r));
  ASSERT_TRUE(is_ok(decoded));
  EXPECT_EQ(decoded->identity, r.identity);
  EXPECT_EQ(decoded->message, r.message);
  EXPECT_EQ(decoded->chunks, r.chunks);
  EXPECT_EQ(decoded->identity.manifest.entry_counts, (std::vector<uint32_t>{2, 1}));
}

TEST(DispatchRecordCodec, TruncatedVersionedOrTrailingIsCorrupt) {
  const std::string bytes = encode_dispatch_record(sample_record());
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_TRUE(fails_with(decode_dispatch_record(bytes.substr(0, n)), Errc::kCorruptEntry)) << n << " bytes";
  }
  std::string bad_version = bytes;
  bad_version[0] = 3;
  EXPECT_TRUE(fails_with(decode_dispatch_record(bad_version), Errc::kCorruptEntry));
  EXPECT_TRUE(fails_with(decode_dispatch_record(bytes + std::string(1, '\0')), Errc::kCorruptEntry));
}

TEST(DispatchRecordCodec, EmptyChunksAreCorrupt) {
  DispatchRecord no_chunks = sample_record();
  no_chunks.chunks.clear();
  EXPECT_TRUE(fails_with(decode_dispatch_record(encode_dispatch_record(no_chunks)), Errc::kCorruptEntry));
  DispatchRecord empty_chunk = sample_record();
  empty_chunk.chunks.push_back({});
  EXPECT_TRUE(fails_with(decode_dispatch_record(encode_dispatch_record(empty_chunk)), Errc::kCorruptEntry));
}

// Decision 160: a recall's record names its former recipients (version 2), with chunks or without; only a
// recall's, and a record without chunks only if it names some.
TEST(DispatchRecordCodec, ARecallsFormerRecipientsRoundTripWithOrWithoutChunks) {
  DispatchRecord r = sample_record();
  r.message.client_msg_id = "~recall";
  r.message.body = R"({"event":"recall","message_id":"12","by":"alice"})";
  r.former_recipients = {*UserId::parse("dave"), *UserId::parse("erin")};
  r.identity = make_identity(r.identity.id, r.message, r.chunks, r.former_recipients);
  const std::string with_chunks = encode_dispatch_record(r);
  EXPECT_EQ(with_chunks[0], 2) << "version 2";
  auto back = decode_dispatch_record(with_chunks);
  ASSERT_TRUE(is_ok(back));
  EXPECT_EQ(back->identity, r.identity);
  EXPECT_EQ(back->chunks, r.chunks);
  EXPECT_EQ(back->former_recipients, r.former_recipients);
  for (size_t n = 0; n < with_chunks.size(); ++n) {
    EXPECT_TRUE(fails_with(decode_dispatch_record(with_chunks.substr(0, n)), Errc::kCorruptEntry)) << n;
  }
  r.chunks.clear();
  r.identity = make_identity(r.identity.id, r.message, r.chunks, r.former_recipients);
  EXPECT_TRUE(r.identity.manifest.entry_counts.empty());
  back = decode_dispatch_record(encode_dispatch_record(r));
  ASSERT_TRUE(is_ok(back));
  EXPECT_EQ(back->identity, r.identity);
  EXPECT_TRUE(back->chunks.empty());
  EXPECT_EQ(back->former_recipients, r.former_recipients);
  DispatchRecord not_a_recall = sample_record();
  not_a_recall.former_recipients = r.former_recipients;
  EXPECT_TRUE(fails_with(decode_dispatch_record(encode_dispatch_record(not_a_recall)), Errc::kCorruptEntry));
}

TEST(ManifestCodec, RoundTripsAndRefusesMalformedBytes) {
  const Manifest m{{3, 1, 1024}};
  auto decoded = decode_manifest(encode_manifest(m));
  ASSERT_TRUE(is_ok(decoded));
  EXPECT_EQ(*decoded, m);
  const std::string bytes = encode_manifest(m);
  EXPECT_TRUE(fails_with(decode_manifest(bytes.substr(0, 6)), Errc::kCorruptEntry));
  EXPECT_TRUE(fails_with(decode_manifest(bytes.substr(0, 12)), Errc::kCorruptEntry)) << "count says 3 chunks";
  EXPECT_TRUE(fails_with(decode_manifest(bytes + std::string(4, '\0')), Errc::kCorruptEntry));
  EXPECT_TRUE(fails_with(decode_manifest(""), Errc::kCorruptEntry));
}

TEST(DispatchIdentity, DigestCoversMessageAndRecipients) {
  const DispatchRecord r = sample_record();
  Message other = r.message;
  other.body += "!";
  EXPECT_NE(make_identity(r.identity.id, other, r.chunks).digest, r.identity.digest);
  auto swapped = r.chunks;
  std::swap(swapped[0][0], swapped[0][1]);
  EXPECT_NE(make_identity(r.identity.id, r.message, swapped).digest, r.identity.digest);
  EXPECT_EQ(make_identity(r.identity.id, r.message, r.chunks), r.identity) << "deterministic";
  const std::vector<UserId> former = {*UserId::parse("dave")};
  EXPECT_NE(make_identity(r.identity.id, r.message, r.chunks, former).digest, r.identity.digest)
      << "a record's former recipients are part of its digest (decision 160)";
  EXPECT_EQ(make_identity(r.identity.id, r.message, r.chunks, {}), r.identity) << "none: digested as before";
}

}  // namespace
}  // namespace qim::test
