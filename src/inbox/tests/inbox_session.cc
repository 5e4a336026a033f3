#include "inbox/tests/inbox_session.h"

namespace qim::test {

Status FlakySink::entries_written(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) {
  if (failures_.load() > 0) {
    failures_--;
    failed_++;
    if (partial_.load() && entries.size() > 1) {
      QIM_RETURN_IF_ERROR(target_.entries_written(shard, epoch, entries.first(entries.size() / 2)));
    }
    return Error(Errc::kTransport, "injected inbox write failure");
  }
  return target_.entries_written(shard, epoch, entries);
}

std::unique_ptr<EntrySink::Pending> FlakySink::begin(ShardId shard, Epoch epoch,
                                                     std::span<const MailboxEntry> entries) {
  // A failure to inject goes through entries_written (from the default's wait); otherwise the target's
  // own begin, so the suites run the path a process runs (cql: sent beside the entries).
  if (failures_.load() > 0) return EntrySink::begin(shard, epoch, entries);
  return target_.begin(shard, epoch, entries);
}

Status InboxSession::start() {
  QIM_ASSIGN_OR_RETURN(mailbox_harness_, fixture_.mailbox.make_harness());
  QIM_ASSIGN_OR_RETURN(inbox_harness_, fixture_.make_harness());
  QIM_ASSIGN_OR_RETURN(process_, open_process(FenceCheck{}));
  return {};
}

Status InboxSession::restart() {
  process_.reset();
  QIM_ASSIGN_OR_RETURN(process_, open_process(FenceCheck{}));
  return {};
}

Result<std::unique_ptr<InboxProcess>> InboxSession::open_another(FenceCheck fence) {
  if (fixture_.mailbox.limits.single_opener) {
    return Error(Errc::kInvalidArgument, *fixture_.mailbox.limits.single_opener);
  }
  return open_process(fence);
}

Result<std::unique_ptr<InboxProcess>> InboxSession::open_process(FenceCheck fence) {
  auto p = std::make_unique<InboxProcess>();
  QIM_ASSIGN_OR_RETURN(p->backend, inbox_harness_->open(context_));
  p->sink = std::make_unique<FlakySink>(*p->backend);
  QIM_ASSIGN_OR_RETURN(std::unique_ptr<StoreBackend> rows, mailbox_harness_->open(context_));
  QIM_RETURN_IF_ERROR(inbox_harness_->bind(*p->backend, *rows));
  p->store = std::make_unique<ContractStore>(std::move(rows), context_, std::nullopt, fence, p->sink.get());
  p->inbox = std::make_unique<Inbox>(*p->store, *p->backend);
  return p;
}

}  // namespace qim::test
