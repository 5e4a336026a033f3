#include "ops/dispatch_audit.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "fanout/dispatch_plan.h"
#include "gateway/protocol/json_writer.h"
#include "mailbox/store_options.h"

namespace qim {

namespace {

struct StoredId {
  uint64_t digest = 0;
  Manifest manifest;
  Offset canonical;
};

std::string manifest_text(const Manifest& m) {
  std::string out = "[";
  for (size_t i = 0; i < m.entry_counts.size(); ++i)
    out += (i ? "," : "") + std::to_string(m.entry_counts[i]);
  return out + "]";
}

class Auditor {
 public:
  explicit Auditor(const AuditRequest& request) : request_(request) {
    for (ShardId s : request.shards) selected_.insert(s.value);
  }

  bool wanted(ShardId shard) const { return selected_.empty() || selected_.contains(shard.value); }

  void corrupt(const AuditCorruptRow& row) {
    report_.findings.push_back(
        {AuditFindingKind::kCorruptRow, std::nullopt, std::nullopt, "", "", row.where + ": " + row.problem});
  }

  Status frontier(const AuditFrontierRow& row) {
    if (!wanted(row.shard)) return {};
    report_.counts.frontier_rows++;
    frontiers_[{row.shard.value, row.epoch.value}] = row.offset;
    if (row.writetime && *row.writetime != static_cast<int64_t>(row.offset.value)) {
      report_.findings.push_back({AuditFindingKind::kFrontierWritetime, row.shard, row.epoch, "", "",
                                  fmt::format("WRITETIME(frontier_offset) {} != frontier_offset {}",
                                              *row.writetime, row.offset.value)});
    }
    return {};
  }

  Status identity(const AuditIdentityRow& row) {
    if (!wanted(row.shard)) return {};
    report_.counts.identity_rows++;
    const int64_t expected_ts = static_cast<int64_t>(kMaxOffset - row.canonical.value);
    if (row.writetime && *row.writetime != expected_ts) {
      report_.findings.push_back(
          {AuditFindingKind::kIdentityWritetime, row.shard, row.epoch, row.id.str(), "",
           fmt::format("WRITETIME {} != 2^48-1-canonical_offset {} (canonical_offset {})", *row.writetime,
                       expected_ts, row.canonical.value)});
    }
    if (row.ttl_seconds && (*row.ttl_seconds < 0 || *row.ttl_seconds > kDispatchIdentityTtlSeconds)) {
      report_.findings.push_back({AuditFindingKind::kIdentityTtl, row.shard, row.epoch, row.id.str(), "",
                                  *row.ttl_seconds < 0
                                      ? std::string("no TTL (expected at most DISPATCH_IDENTITY_TTL_SECONDS)")
                                      : fmt::format("TTL {} s > DISPATCH_IDENTITY_TTL_SECONDS {}",
                                                    *row.ttl_seconds, kDispatchIdentityTtlSeconds)});
    }
    identities_[{row.shard.value, row.id.str()}][row.epoch.value] =
        StoredId{row.digest, row.manifest, row.canonical};
    return {};
  }

  // After every identity is in: one finding per dispatch id whose epochs disagree.
  void conflicts() {
    for (const auto& [key, by_epoch] : identities_) {
      if (by_epoch.size() < 2) continue;
      const auto& [first_epoch, first] = *by_epoch.begin();
      for (const auto& [epoch, other] : by_epoch) {
        if (epoch == first_epoch) continue;
        std::string what;
        if (other.digest != first.digest)
          what = fmt::format("digest {:016x} at epoch {} vs {:016x} at epoch {}", first.digest, first_epoch,
                             other.digest, epoch);
        if (other.manifest != first.manifest) {
          what +=
              fmt::format("{}manifest {} at epoch {} vs {} at epoch {}", what.empty() ? "" : "; ",
                          manifest_text(first.manifest), first_epoch, manifest_text(other.manifest), epoch);
        }
        if (!what.empty()) {
          report_.findings.push_back(
              {AuditFindingKind::kIdentityConflict, ShardId{key.first}, Epoch{epoch}, key.second, "", what});
        }
      }
    }
  }

  Status entry(const AuditEntryRow& row) {
    const ShardId shard = request_.shard_map.shard_of(row.user);
    if (!wanted(shard)) return {};
    report_.counts.entry_rows++;
    const Epoch epoch = row.seq.epoch();
    auto f = frontiers_.find({shard.value, epoch.value});
    if (f == frontiers_.end() || row.seq.offset() > f->second) report_.counts.entries_above_frontier++;
    // A shard with more recipients than one record holds has further records, "-p1", "-p2", ...
    // (fanout/dispatch_plan.h): the entry belongs to the part whose canonical offset it is at, else (a
    // mismatch) to the first.
    DispatchId id = dispatch_id_for(row.message, shard);
    auto by_epoch = identities_.find({shard.value, id.str()});
    if (by_epoch == identities_.end() || !by_epoch->second.contains(epoch.value)) {
      report_.counts.entries_without_identity++;
      return {};
    }
    for (uint32_t part = 1; by_epoch->second.at(epoch.value).canonical != row.seq.offset(); ++part) {
      const DispatchId next = dispatch_id_for(row.message, shard, part);
      auto found = identities_.find({shard.value, next.str()});
      if (found == identities_.end()) break;
      if (!found->second.contains(epoch.value) || found->second.at(epoch.value).canonical != row.seq.offset())
        continue;
      id = next;
      by_epoch = found;
    }
    const StoredId& stored = by_epoch->second.at(epoch.value);
    if (stored.canonical != row.seq.offset()) {
      report_.findings.push_back({AuditFindingKind::kEntrySeqMismatch, shard, epoch, id.str(), row.user.str(),
                                  fmt::format("entry at offset {} but the dispatch's canonical_offset is {}",
                                              row.seq.offset().value, stored.canonical.value)});
    }
    return {};
  }

  AuditReport finish(std::string backend, std::vector<std::string> notes) {
    report_.backend = std::move(backend);
    report_.notes = std::move(notes);
    report_.shards = request_.shards;
    std::sort(report_.findings.begin(), report_.findings.end(),
              [](const AuditFinding& a, const AuditFinding& b) {
                auto key = [](const AuditFinding& f) {
                  return std::make_tuple(static_cast<int>(f.kind), f.shard ? f.shard->value : 0u,
                                         f.dispatch_id, f.epoch ? f.epoch->value : 0u, f.user, f.detail);
                };
                return key(a) < key(b);
              });
    return std::move(report_);
  }

 private:
  const AuditRequest& request_;
  std::set<uint32_t> selected_;
  std::map<std::pair<uint32_t, uint32_t>, Offset> frontiers_;                            // (shard, epoch)
  std::map<std::pair<uint32_t, std::string>, std::map<uint32_t, StoredId>> identities_;  // (shard, id)
  AuditReport report_;
};

}  // namespace

std::string_view audit_finding_name(AuditFindingKind kind) {
  switch (kind) {
    case AuditFindingKind::kIdentityConflict:
      return "identity_conflict";
    case AuditFindingKind::kEntrySeqMismatch:
      return "entry_seq_mismatch";
    case AuditFindingKind::kIdentityWritetime:
      return "identity_writetime";
    case AuditFindingKind::kIdentityTtl:
      return "identity_ttl";
    case AuditFindingKind::kFrontierWritetime:
      return "frontier_writetime";
    case AuditFindingKind::kCorruptRow:
      return "corrupt_row";
  }
  return "unknown";
}

Result<AuditReport> audit_dispatch(AuditReader& reader, const AuditRequest& request) {
  for (ShardId s : request.shards) QIM_RETURN_IF_ERROR(request.shard_map.check(s));
  Auditor auditor(request);
  RowPacer pacer(request.rows_per_second, request.progress);
  auto corrupt = [&](const AuditCorruptRow& row) { auditor.corrupt(row); };
  // Frontiers first (entries are compared with them), identities before entries (entries look theirs up).
  QIM_RETURN_IF_ERROR(reader.frontiers(
      request.shards, pacer, [&](const AuditFrontierRow& r) { return auditor.frontier(r); }, corrupt));
  QIM_RETURN_IF_ERROR(reader.identities(
      request.shards, pacer, [&](const AuditIdentityRow& r) { return auditor.identity(r); }, corrupt));
  auditor.conflicts();
  QIM_RETURN_IF_ERROR(reader.entries(
      request.shards, pacer, [&](const AuditEntryRow& r) { return auditor.entry(r); }, corrupt));
  return auditor.finish(std::string(reader.backend()), reader.notes());
}

std::string render_audit_table(const AuditReport& report) {
  std::string out;
  if (report.findings.empty()) {
    out += "no inconsistencies found\n";
  } else {
    out += fmt::format("{:<20} {:>5} {:>5}  {:<24} {:<16} {}\n", "kind", "shard", "epoch", "dispatch id",
                       "user", "detail");
    for (const auto& f : report.findings) {
      out += fmt::format(
          "{:<20} {:>5} {:>5}  {:<24} {:<16} {}\n", audit_finding_name(f.kind),
          f.shard ? std::to_string(f.shard->value) : "-", f.epoch ? std::to_string(f.epoch->value) : "-",
          f.dispatch_id.empty() ? "-" : f.dispatch_id, f.user.empty() ? "-" : f.user, f.detail);
    }
    out += fmt::format("{} inconsistencies\n", report.findings.size());
  }
  const auto& c = report.counts;
  std::string shards = "all";
  if (!report.shards.empty()) {
    shards.clear();
    for (ShardId s : report.shards) shards += (shards.empty() ? "" : ",") + std::to_string(s.value);
  }
  out += fmt::format(
      "backend {}, shards {}: {} frontier rows, {} identity rows, {} entries ({} without an identity row at "
      "their epoch, {} above their epoch's frontier)\n",
      report.backend, shards, c.frontier_rows, c.identity_rows, c.entry_rows, c.entries_without_identity,
      c.entries_above_frontier);
  for (const auto& n : report.notes) out += "note: " + n + "\n";
  return out;
}

std::string render_audit_json(const AuditReport& report) {
  JsonWriter w;
  w.begin_object().field("backend", report.backend);
  w.key("shards").begin_array();
  for (ShardId s : report.shards) w.uint64(s.value);
  w.end_array();
  w.field("clean", report.findings.empty());
  const auto& c = report.counts;
  w.key("counts").begin_object();
  w.key("frontier_rows").uint64(c.frontier_rows).key("identity_rows").uint64(c.identity_rows);
  w.key("entry_rows").uint64(c.entry_rows).key("entries_without_identity").uint64(c.entries_without_identity);
  w.key("entries_above_frontier").uint64(c.entries_above_frontier).end_object();
  w.key("notes").begin_array();
  for (const auto& n : report.notes) w.string(n);
  w.end_array();
  w.key("findings").begin_array();
  for (const auto& f : report.findings) {
    w.begin_object().field("kind", audit_finding_name(f.kind));
    w.key("shard");
    f.shard ? w.uint64(f.shard->value) : w.null();
    w.key("epoch");
    f.epoch ? w.uint64(f.epoch->value) : w.null();
    w.field("dispatch_id", f.dispatch_id).field("user", f.user).field("detail", f.detail).end_object();
  }
  w.end_array().end_object();
  return w.take() + "\n";
}

}  // namespace qim
