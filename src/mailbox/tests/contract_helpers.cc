#include "mailbox/tests/contract_helpers.h"

namespace qim::test {

Status StoreSession::start(std::optional<uint32_t> page_max) {
  QIM_ASSIGN_OR_RETURN(harness_, fixture_.make_harness());
  return open(page_max);
}

Status StoreSession::restart(std::optional<uint32_t> page_max) {
  store_.reset();
  backend_ = nullptr;
  return open(page_max);
}

Status StoreSession::open(std::optional<uint32_t> page_max) {
  QIM_ASSIGN_OR_RETURN(std::unique_ptr<StoreBackend> backend, harness_->open(context_));
  backend_ = backend.get();
  store_ = std::make_unique<ContractStore>(std::move(backend), context_, page_max);
  return {};
}

Result<std::unique_ptr<MailboxStore>> StoreSession::open_another(FenceCheck fence) {
  if (fixture_.limits.single_opener) return Error(Errc::kInvalidArgument, *fixture_.limits.single_opener);
  QIM_ASSIGN_OR_RETURN(std::unique_ptr<StoreBackend> backend, harness_->open(context_));
  return std::unique_ptr<MailboxStore>(
      std::make_unique<ContractStore>(std::move(backend), context_, std::nullopt, fence));
}

UserId user_in_shard(const ShardMap& shards, ShardId shard, int n) {
  for (int i = 0;; ++i) {
    UserId u = *UserId::parse("user" + std::to_string(i));
    if (shards.shard_of(u) == shard && n-- == 0) return u;
  }
}

Message make_message(uint64_t id, const UserId& sender, int64_t server_time_ms) {
  Message m;
  m.id = MessageId{id};
  m.conversation = *direct_conversation(sender, sender);  // the store does not look inside
  m.sender = sender;
  m.sender_device = *DeviceId::parse("phone");
  m.client_msg_id = "client-" + std::to_string(id);
  m.server_time_ms = server_time_ms;
  m.body = "message " + std::to_string(id);
  return m;
}

DispatchRecord make_record(std::string_view id, const Message& message,
                           std::vector<std::vector<UserId>> chunks) {
  DispatchRecord r;
  r.message = message;
  r.chunks = std::move(chunks);
  r.identity = make_identity(*DispatchId::parse(id), message, r.chunks);
  return r;
}

std::vector<ChunkWrite> chunk_writes(const DispatchRecord& record, const std::vector<uint32_t>& chunks) {
  std::vector<ChunkWrite> out;
  for (uint32_t i = 0; i < record.chunks.size(); ++i) {
    if (!chunks.empty() && std::find(chunks.begin(), chunks.end(), i) == chunks.end()) continue;
    out.push_back(ChunkWrite{record.identity.id, i, &record.message, record.chunks[i]});
  }
  return out;
}

Result<FinishOutcome> materialise(MailboxStore& store, ShardId shard, Epoch epoch,
                                  const DispatchRecord& record, Offset observed, MailboxSeq previous) {
  QIM_ASSIGN_OR_RETURN(BeginOutcome begun, store.begin_dispatch(shard, epoch, record.identity, observed));
  if (begun.needs_entries) QIM_RETURN_IF_ERROR(store.write_chunks(shard, epoch, chunk_writes(record)));
  QIM_ASSIGN_OR_RETURN(MailboxSeq seq, compose(epoch, observed));
  return store.finish_dispatch(shard, epoch, record.identity.id, uniform_advances(previous, seq));
}

Result<std::vector<MailboxEntry>> read_all(MailboxStore& store, const UserId& user, MailboxSeq after) {
  std::vector<MailboxEntry> out;
  for (;;) {
    QIM_ASSIGN_OR_RETURN(MailboxPage page, store.read_mailbox(MailboxQuery{user, after, 3}));
    out.insert(out.end(), page.entries.begin(), page.entries.end());
    if (!page.more) return out;
    after = page.entries.back().seq;
  }
}

Result<MailboxSeq> frontier_of(MailboxStore& store, ShardId shard, Epoch epoch) {
  QIM_ASSIGN_OR_RETURN(auto lanes, store.lane_watermarks(shard, epoch));
  for (const MailboxSeq& w : lanes) {
    if (w != lanes[0]) return Error(Errc::kInvariant, "lane watermarks differ: " + w.to_string());
  }
  return lanes[0];
}

}  // namespace qim::test
