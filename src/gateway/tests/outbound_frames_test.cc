#include "gateway/outbound_frames.h"

#include <gtest/gtest.h>

#include <vector>

namespace qim {
namespace {

using Kind = OutboundFrames::Kind;

OutboundFrames::Frame frame(std::string text) {
  return std::make_shared<const std::string>(std::move(text));
}

// Writes everything queued, one frame at a time as the connection does, and returns the order.
std::vector<std::string> drain(OutboundFrames& q) {
  std::vector<std::string> out;
  while (const auto& f = q.start_next()) {
    out.push_back(*f);
    q.written();
  }
  return out;
}

TEST(OutboundFrames, AnAnswerGoesOutBeforeThePushesStillWaiting) {
  OutboundFrames q;
  q.add(Kind::kPush, frame("deliver 1"));
  q.add(Kind::kPush, frame("deliver 2"));
  q.add(Kind::kAnswer, frame("send_ack a"));
  q.add(Kind::kPush, frame("deliver 3"));
  q.add(Kind::kAnswer, frame("send_ack b"));
  EXPECT_EQ(drain(q),
            (std::vector<std::string>{"send_ack a", "send_ack b", "deliver 1", "deliver 2", "deliver 3"}));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.bytes(), 0u);
}

TEST(OutboundFrames, NothingOvertakesTheFrameBeingWritten) {
  OutboundFrames q;
  q.add(Kind::kPush, frame("deliver 1"));
  ASSERT_EQ(*q.start_next(), "deliver 1");  // on the wire now
  q.add(Kind::kPush, frame("deliver 2"));
  q.add(Kind::kAnswer, frame("error x"));
  EXPECT_EQ(*q.start_next(), "deliver 1");  // asked again before it is written: the same frame
  q.written();
  EXPECT_EQ(drain(q), (std::vector<std::string>{"error x", "deliver 2"}));
}

TEST(OutboundFrames, EachKindKeepsItsOrder) {
  OutboundFrames q;
  for (int i = 0; i < 5; ++i) {
    q.add(Kind::kAnswer, frame("a" + std::to_string(i)));
    q.add(Kind::kPush, frame("p" + std::to_string(i)));
  }
  EXPECT_EQ(drain(q), (std::vector<std::string>{"a0", "a1", "a2", "a3", "a4", "p0", "p1", "p2", "p3", "p4"}));
}

TEST(OutboundFrames, BoundsCountBothKindsAndTheFrameBeingWritten) {
  OutboundFrames q;
  EXPECT_FALSE(q.would_exceed(1000, 2, 100));  // an empty queue takes one frame over the byte bound
  q.add(Kind::kPush, frame(std::string(60, 'p')));
  q.start_next();
  EXPECT_EQ(q.frames(), 1u);
  EXPECT_EQ(q.bytes(), 60u);
  EXPECT_FALSE(q.would_exceed(40, 2, 100));
  EXPECT_TRUE(q.would_exceed(41, 2, 100));  // bytes
  q.add(Kind::kAnswer, frame(std::string(10, 'a')));
  EXPECT_EQ(q.frames(), 2u);
  EXPECT_TRUE(q.would_exceed(1, 2, 100));  // frames
  q.written();
  EXPECT_EQ(q.frames(), 1u);
  EXPECT_EQ(q.bytes(), 10u);
}

TEST(OutboundFrames, DroppingWaitingFramesKeepsTheOneBeingWritten) {
  OutboundFrames q;
  q.add(Kind::kPush, frame("deliver 1"));
  q.start_next();
  q.add(Kind::kPush, frame("deliver 2"));
  q.add(Kind::kAnswer, frame("pong"));
  q.drop_waiting();
  EXPECT_EQ(q.frames(), 1u);
  EXPECT_EQ(q.bytes(), std::string("deliver 1").size());
  EXPECT_EQ(drain(q), (std::vector<std::string>{"deliver 1"}));
  q.add(Kind::kAnswer, frame("later"));
  q.start_next();
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.writing());
  EXPECT_EQ(q.bytes(), 0u);
}

}  // namespace
}  // namespace qim
