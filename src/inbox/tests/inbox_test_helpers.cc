#include "inbox/tests/inbox_test_helpers.h"

#include <algorithm>

namespace qim::test {

Message inbox_message(uint64_t id, const ConversationId& c, const UserId& sender, int64_t time_ms,
                      bool system) {
  Message m;
  m.id = MessageId{id};
  m.conversation = c;
  m.sender = sender;
  m.sender_device = *DeviceId::parse("phone");
  m.client_msg_id = system ? "~group:add" : "client-" + std::to_string(id);
  m.server_time_ms = time_ms;
  m.body = "message " + std::to_string(id);
  return m;
}

DispatchRecord inbox_record(const Message& message, const std::vector<UserId>& recipients) {
  return make_record("r" + std::to_string(message.id.value), message, {recipients});
}

namespace {

Result<std::vector<PageItem>> begin_and_write(MailboxStore& store, Epoch epoch,
                                              std::span<const DispatchRecord> records, uint64_t& next_offset,
                                              MailboxSeq running) {
  std::vector<BeginRequest> requests;
  std::vector<uint64_t> offsets;
  for (const DispatchRecord& r : records) {
    offsets.push_back(next_offset);
    requests.push_back(BeginRequest{&r.identity, Offset{next_offset++}});
  }
  QIM_ASSIGN_OR_RETURN(auto begun, store.begin_dispatch_page(kInboxShard, epoch, requests));
  std::vector<ChunkWrite> writes;
  std::vector<PageItem> page;
  for (size_t i = 0; i < records.size(); ++i) {
    QIM_ASSIGN_OR_RETURN(BeginOutcome b, std::move(begun[i]));
    if (b.needs_entries) {
      auto w = chunk_writes(records[i]);
      writes.insert(writes.end(), w.begin(), w.end());
    }
    const MailboxSeq observed = *compose(epoch, Offset{offsets[i]});
    page.push_back(PageItem{records[i].identity.id, uniform_advances(running, observed)});
    if (b.canonical && b.seq > running) running = observed;
  }
  if (!writes.empty()) QIM_RETURN_IF_ERROR(store.write_chunks(kInboxShard, epoch, writes));
  return page;
}

}  // namespace

Result<MailboxSeq> deliver(MailboxStore& store, Epoch epoch, std::span<const DispatchRecord> records,
                           uint64_t& next_offset) {
  QIM_ASSIGN_OR_RETURN(MailboxSeq frontier, frontier_of(store, kInboxShard, epoch));
  const size_t limit = store.finish_page_limit();
  for (size_t from = 0; from < records.size(); from += limit) {
    auto part = records.subspan(from, std::min(limit, records.size() - from));
    QIM_ASSIGN_OR_RETURN(auto page, begin_and_write(store, epoch, part, next_offset, frontier));
    QIM_ASSIGN_OR_RETURN(PageOutcome done, store.finish_dispatch_page(kInboxShard, epoch, page));
    frontier = done.frontier;
  }
  return frontier;
}

Status write_only(MailboxStore& store, Epoch epoch, std::span<const DispatchRecord> records,
                  uint64_t& next_offset) {
  QIM_ASSIGN_OR_RETURN(MailboxSeq frontier, frontier_of(store, kInboxShard, epoch));
  QIM_RETURN_IF_ERROR(begin_and_write(store, epoch, records, next_offset, frontier));
  return {};
}

}  // namespace qim::test
