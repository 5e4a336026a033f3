#include "node/lease_guard.h"

namespace qim {

namespace {

constexpr std::string_view kLapsed = "lease lapsed: ";

}  // namespace

Status LeaseGuardedStore::check(ShardId shard, Epoch epoch) const {
  if (shard != shard_ || !valid_ || valid_()) return {};
  // EpochAhead: the worker treats it as "another owner may have the shard now" and stops writing.
  return Error(Errc::kEpochAhead, std::string(kLapsed) + "shard " + std::to_string(shard.value) +
                                      " at epoch " + std::to_string(epoch.value) +
                                      ": the node could not renew its lease in time and stops writing the "
                                      "shard before another node may take it");
}

Result<BeginOutcome> LeaseGuardedStore::begin_dispatch(ShardId shard, Epoch epoch,
                                                       const DispatchIdentity& identity, Offset observed) {
  QIM_RETURN_IF_ERROR(check(shard, epoch));
  return inner().begin_dispatch(shard, epoch, identity, observed);
}

Result<std::vector<Result<BeginOutcome>>> LeaseGuardedStore::begin_dispatch_page(
    ShardId shard, Epoch epoch, std::span<const BeginRequest> page) {
  QIM_RETURN_IF_ERROR(check(shard, epoch));
  return inner().begin_dispatch_page(shard, epoch, page);
}

Status LeaseGuardedStore::write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) {
  QIM_RETURN_IF_ERROR(check(shard, epoch));
  return inner().write_chunks(shard, epoch, chunks);
}

Status LeaseGuardedStore::redact_message(ShardId shard, Epoch epoch, const RecallEntry& recall,
                                         std::span<const UserId> users) {
  QIM_RETURN_IF_ERROR(check(shard, epoch));
  return inner().redact_message(shard, epoch, recall, users);
}

Result<FinishOutcome> LeaseGuardedStore::finish_dispatch(ShardId shard, Epoch epoch, const DispatchId& id,
                                                         const LaneAdvances& advances) {
  QIM_RETURN_IF_ERROR(check(shard, epoch));
  return inner().finish_dispatch(shard, epoch, id, advances);
}

Result<PageOutcome> LeaseGuardedStore::finish_dispatch_page(ShardId shard, Epoch epoch,
                                                            std::span<const PageItem> page) {
  QIM_RETURN_IF_ERROR(check(shard, epoch));
  return inner().finish_dispatch_page(shard, epoch, page);
}

bool is_lease_lapsed(const Error& error) {
  return error.code() == Errc::kEpochAhead && error.message().starts_with(kLapsed);
}

}  // namespace qim
