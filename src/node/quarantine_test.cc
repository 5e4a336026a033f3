// The quarantine record's bytes (node/quarantine.h): a mailbox-log record keeps version 1, byte for byte;
// an Outbox record fanout refused is version 2, which names its log (issue 36, item 1).
#include "node/quarantine.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

QuarantinedRecord sample(QuarantineSource source) {
  QuarantinedRecord r;
  r.source = source;
  r.shard = ShardId{3};
  r.offset = Offset{42};
  r.code = Errc::kCorruptEntry;
  r.message = "group store: group 'team' member bob: does not decode";
  r.time_ms = 1'700'000'000'000;
  r.raw = "raw bytes";
  r.raw_size = r.raw.size();
  return r;
}

TEST(QuarantineCodecTest, AMailboxRecordStaysVersionOneAndAnOutboxRecordNamesItsLog) {
  const std::string mailbox = encode_quarantined(sample(QuarantineSource::kMailboxLog));
  const std::string outbox = encode_quarantined(sample(QuarantineSource::kOutbox));
  EXPECT_EQ(mailbox[0], 1);
  EXPECT_EQ(outbox[0], 2);
  EXPECT_EQ(outbox.size(), mailbox.size() + 1);
  auto m = decode_quarantined(mailbox);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->source, QuarantineSource::kMailboxLog);
  auto o = decode_quarantined(outbox);
  ASSERT_TRUE(o.ok()) << o.error().to_string();
  EXPECT_EQ(o->source, QuarantineSource::kOutbox);
  EXPECT_EQ(o->shard.value, 3u);
  EXPECT_EQ(o->offset.value, 42u);
  EXPECT_EQ(o->code, Errc::kCorruptEntry);
  EXPECT_EQ(o->raw, "raw bytes");
  EXPECT_EQ(quarantine_source_name(o->source), "outbox");
  std::string bad = outbox;
  bad[1] = 7;  // no such source
  EXPECT_EQ(decode_quarantined(bad).code(), Errc::kCorruptEntry);
  bad[0] = 3;  // no such version
  EXPECT_EQ(decode_quarantined(bad).code(), Errc::kCorruptEntry);
}

}  // namespace
}  // namespace qim
