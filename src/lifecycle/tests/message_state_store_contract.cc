#include "lifecycle/tests/message_state_store_contract.h"

#include <gtest/gtest.h>

namespace qim {

MessageState contract_message_state() {
  MessageState s;
  s.id = MessageId{(uint64_t{1} << 48) | 10};
  s.conversation = ConversationId::parse("d:alice:bob").value();
  s.sender = UserId::parse("alice").value();
  s.client_msg_id = "c1";
  s.sent_at_ms = 1'000'000;
  EventRequest recall;
  recall.event = MessageEvent{MessageEventKind::kRecall, s.id};
  recall.conversation = s.conversation;
  recall.actor = s.sender;
  recall.at_ms = 1'000'100;
  recall.offset = 20;
  s.events[20] = decide_event(&s, recall, {});
  return s;
}

void run_message_state_store_contract(MessageStateStore& store) {
  const MessageState s = contract_message_state();
  EXPECT_FALSE(store.load(s.id)->has_value());
  EXPECT_EQ(*store.watermark(1), 0u);
  ASSERT_TRUE(store.put(s, 1, 20).ok());
  EXPECT_EQ(*store.watermark(1), 21u);
  EXPECT_EQ(*store.watermark(0), 0u);
  ASSERT_TRUE(store.put(s, 1, 7).ok());  // a lower offset never lowers it
  EXPECT_EQ(*store.watermark(1), 21u);
  ASSERT_TRUE(store.raise_watermark(1, 3).ok());
  EXPECT_EQ(*store.watermark(1), 21u);
  ASSERT_TRUE(store.raise_watermark(1, 40).ok());
  EXPECT_EQ(*store.watermark(1), 41u);
  auto loaded = store.load(s.id);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ(**loaded, s);
  EXPECT_TRUE((*loaded)->recalled());
  std::vector<MessageId> ids{MessageId{1}, s.id, MessageId{(uint64_t{1} << 48) | 11}};
  auto many = store.load_many(ids);
  ASSERT_TRUE(many.ok());
  ASSERT_EQ(many->size(), 3u);
  EXPECT_FALSE((*many)[0]);
  EXPECT_TRUE((*many)[1]);
  EXPECT_FALSE((*many)[2]);
}

}  // namespace qim
