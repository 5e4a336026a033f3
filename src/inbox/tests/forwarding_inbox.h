#pragma once
// An InboxBackend that forwards every call to another one it does not own: a restart of a backend whose
// rows live in the process (the memory inbox) is a new view over the same rows.

#include "inbox/inbox_backend.h"

namespace qim::test {

class ForwardingInbox : public InboxBackend {
 public:
  explicit ForwardingInbox(InboxBackend& inner) : inner_(inner) {}

  Status entries_written(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override {
    return inner_.entries_written(shard, epoch, entries);
  }
  std::unique_ptr<Pending> begin(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override {
    return inner_.begin(shard, epoch, entries);
  }
  std::string_view name() const override { return inner_.name(); }
  Result<std::vector<ConversationRow>> conversation_rows(const UserId& user) override {
    return inner_.conversation_rows(user);
  }
  Result<std::vector<ActivityPosition>> activity_desc(const UserId& user, MailboxSeq after, MailboxSeq before,
                                                      uint32_t limit) override {
    return inner_.activity_desc(user, after, before, limit);
  }
  Result<std::vector<std::optional<InboxEntryRef>>> rows_of(
      const UserId& user, std::span<const ConversationId> conversations) override {
    return inner_.rows_of(user, conversations);
  }
  Result<std::vector<MailboxSeq>> read_marks_of(const UserId& user,
                                                std::span<const ConversationId> conversations) override {
    return inner_.read_marks_of(user, conversations);
  }
  Status drop_stale_activity(const UserId& user, std::span<const ActivityPosition> stale) override {
    return inner_.drop_stale_activity(user, stale);
  }
  Result<std::vector<InboxEntryRef>> index_rows_desc(const UserId& user, const ConversationId& c,
                                                     MailboxSeq after, MailboxSeq upto,
                                                     uint32_t limit) override {
    return inner_.index_rows_desc(user, c, after, upto, limit);
  }
  Result<uint32_t> count_unread(const UserId& user, const ConversationId& c, MailboxSeq after,
                                MailboxSeq upto, uint32_t cap) override {
    return inner_.count_unread(user, c, after, upto, cap);
  }
  Status raise_read_mark(const UserId& user, const ConversationId& c, MailboxSeq seq) override {
    return inner_.raise_read_mark(user, c, seq);
  }
  Result<std::vector<ReadMark>> read_marks(const UserId& user) override { return inner_.read_marks(user); }
  Result<MailboxSeq> read_mark(const UserId& user, const ConversationId& c) override {
    return inner_.read_mark(user, c);
  }
  Status raise_receipt(const ConversationId& c, const UserId& user, MessageId read_through) override {
    return inner_.raise_receipt(c, user, read_through);
  }
  Result<std::vector<ReceiptMark>> receipts(const ConversationId& c, uint32_t limit) override {
    return inner_.receipts(c, limit);
  }
  Status put_setting(const UserId& user, const std::string& key, const std::string& value,
                     int64_t version) override {
    return inner_.put_setting(user, key, value, version);
  }
  Result<std::map<std::string, std::string>> settings(const UserId& user) override {
    return inner_.settings(user);
  }
  Result<BatchAnswers> read_batch(const BatchReads& reads, uint32_t parallelism) override {
    return inner_.read_batch(reads, parallelism);
  }
  OpCounters& counters() override { return inner_.counters(); }
  uint64_t round_trips() const override { return inner_.round_trips(); }

 private:
  InboxBackend& inner_;
};

}  // namespace qim::test
