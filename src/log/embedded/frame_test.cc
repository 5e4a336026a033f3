#include "log/embedded/frame.h"

#include <gtest/gtest.h>

namespace qim::embedded_log {
namespace {

TEST(FrameTest, RoundTripsARecord) {
  std::string buf;
  append_frame(buf, 42, 1700, "key", "value bytes");
  ASSERT_EQ(buf.size(), frame_size(3, 11));
  FrameView v = parse_frame(buf, 1 << 20);
  ASSERT_EQ(v.state, FrameView::State::kComplete) << v.why;
  EXPECT_EQ(v.size, buf.size());
  EXPECT_EQ(v.record.offset.value, 42u);
  EXPECT_EQ(v.record.timestamp_ms, 1700);
  EXPECT_EQ(v.record.key, "key");
  EXPECT_EQ(v.record.value, "value bytes");
}

TEST(FrameTest, ReportsACutFrameAsTruncated) {
  std::string buf;
  append_frame(buf, 1, 0, "", "payload");
  EXPECT_EQ(parse_frame(std::string_view(buf).substr(0, 5), 1 << 20).state, FrameView::State::kTruncated);
  FrameView v = parse_frame(std::string_view(buf).substr(0, buf.size() - 1), 1 << 20);
  EXPECT_EQ(v.state, FrameView::State::kTruncated);
  EXPECT_EQ(v.size, buf.size());
}

TEST(FrameTest, DetectsAFlippedByteAnywhere) {
  std::string clean;
  append_frame(clean, 7, 9, "k", "some value");
  for (size_t i = 0; i < clean.size(); ++i) {
    std::string buf = clean;
    buf[i] = static_cast<char>(buf[i] ^ 0x20);
    FrameView v = parse_frame(buf, 1 << 20);
    EXPECT_NE(v.state, FrameView::State::kComplete) << "flipped byte " << i;
  }
}

TEST(FrameTest, RefusesAnImpossibleLength) {
  std::string buf;
  append_frame(buf, 0, 0, "", std::string(100, 'x'));
  FrameView v = parse_frame(buf, 50);
  EXPECT_EQ(v.state, FrameView::State::kCorrupt);
  EXPECT_NE(v.why.find("length"), std::string::npos);
}

}  // namespace
}  // namespace qim::embedded_log
