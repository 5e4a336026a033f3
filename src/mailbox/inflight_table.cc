#include "mailbox/inflight_table.h"

#include <algorithm>

namespace qim {

bool InflightRecord::complete() const {
  return std::all_of(chunk_written.begin(), chunk_written.end(), [](bool w) { return w; });
}

std::vector<uint32_t> InflightRecord::completed_chunks() const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < chunk_written.size(); ++i) {
    if (chunk_written[i]) out.push_back(i);
  }
  return out;
}

InflightRecord& InflightTable::track(Epoch epoch, const DispatchIdentity& identity, Offset canonical,
                                     bool all_written) {
  auto it = records_.find(identity.id);
  if (it != records_.end() && it->second.epoch == epoch && it->second.canonical_offset == canonical) {
    if (all_written) std::fill(it->second.chunk_written.begin(), it->second.chunk_written.end(), true);
    return it->second;
  }
  InflightRecord rec{epoch, identity, canonical,
                     std::vector<bool>(identity.manifest.chunk_count(), all_written)};
  return records_.insert_or_assign(identity.id, std::move(rec)).first->second;
}

size_t InflightTable::erase_covered(MailboxSeq w) {
  return std::erase_if(records_, [w](const auto& kv) {
    const InflightRecord& r = kv.second;
    if (r.epoch < w.epoch()) return true;
    if (r.epoch != w.epoch()) return false;
    auto seq = compose(r.epoch, r.canonical_offset);
    return seq.ok() && *seq <= w;
  });
}

void InflightTable::wait_identity_writes() {
  for (auto& [id, record] : records_) {
    if (record.identity_write) (void)record.identity_write->wait();
    record.identity_write.reset();
  }
}

InflightRecord* InflightTable::find(const DispatchId& id) {
  auto it = records_.find(id);
  return it == records_.end() ? nullptr : &it->second;
}

}  // namespace qim
