#include "app/admin_routes.h"

#include <fmt/format.h>

#include <charconv>

#include "app/quarantine_view.h"
#include "gateway/protocol/json_writer.h"

namespace qim {

std::optional<std::string> query_param(const std::string& query, const std::string& key) {
  size_t start = 0;
  while (start <= query.size()) {
    const size_t end = std::min(query.find('&', start), query.size());
    const std::string_view part(query.data() + start, end - start);
    if (part.starts_with(key + "=")) return std::string(part.substr(key.size() + 1));
    start = end + 1;
  }
  return std::nullopt;
}

namespace {

std::optional<uint64_t> number(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (text->empty() || ec != std::errc() || p != text->data() + text->size()) return std::nullopt;
  return v;
}

AdminResponse replay(Pipeline& pipeline, const std::string& query) {
  if (pipeline.fanout() == nullptr) return {409, "fanout is not running in this process\n"};
  const auto offset = number(query_param(query, "offset"));
  if (!offset) return {400, "expected ?offset=<outbox offset>[&partition=<p>]\n"};
  std::vector<uint32_t> partitions;
  if (auto p = query_param(query, "partition")) {
    auto n = number(p);
    if (!n) return {400, "partition='" + *p + "' is not a number\n"};
    partitions.push_back(static_cast<uint32_t>(*n));
  } else {
    for (uint32_t p = 0; p < pipeline.outbox().partition_count(); ++p) partitions.push_back(p);
  }
  for (uint32_t p : partitions) {  // all or nothing: every partition is checked before any replays
    auto end = pipeline.outbox().end_offset(p);
    if (!end.ok()) return {400, end.error().to_string() + "\n"};
    if (Status s = pipeline.fanout()->check_replay(p, std::min(Offset{*offset}, *end)); !s.ok())
      return {400, s.error().to_string() + "\n"};
  }
  std::string out;
  for (uint32_t p : partitions) {
    auto end = pipeline.outbox().end_offset(p);
    if (!end.ok()) return {400, end.error().to_string() + "\n"};
    const Offset from = std::min(Offset{*offset}, *end);
    if (Status s = pipeline.fanout()->replay_from(p, from); !s.ok())
      return {400, s.error().to_string() + "\n"};
    out += fmt::format("outbox partition {}: fanout replays from offset {} ({} records)\n", p, from.value,
                       end->value - from.value);
  }
  return {200, out};
}

// POST /admin/archiver/replay?offset=N&partition=P: the archiver reads partition P again from N (its rows
// are rewritten as they are: a replay changes nothing in HISTORY, decision 90).
AdminResponse archiver_replay(Pipeline& pipeline, const std::string& query) {
  if (pipeline.archiver() == nullptr) return {409, "the archiver is not running in this process\n"};
  const auto offset = number(query_param(query, "offset"));
  const auto partition = number(query_param(query, "partition"));
  if (!offset || !partition) return {400, "expected ?offset=<outbox offset>&partition=<p>\n"};
  const uint32_t p = static_cast<uint32_t>(*partition);
  if (p >= pipeline.outbox().partition_count()) return {400, "no such outbox partition\n"};
  auto end = pipeline.outbox().end_offset(p);
  if (!end.ok()) return {400, end.error().to_string() + "\n"};
  const Offset from = std::min(Offset{*offset}, *end);
  if (Status s = pipeline.archiver()->replay_from(p, from); !s.ok())
    return {400, s.error().to_string() + "\n"};
  return {200, fmt::format("outbox partition {}: the archiver replays from offset {}\n", p, from.value)};
}

// GET /admin/quarantine[?position=N][&json=1]: what `qim quarantine list|show` prints.
AdminResponse quarantine(Pipeline& pipeline, const std::string& query) {
  auto entries = read_quarantine(pipeline.quarantine_log(), Offset{0}, kQuarantineReadMax);
  if (!entries.ok()) return {500, entries.error().to_string() + "\n"};
  const bool json = query_param(query, "json") == "1";
  if (auto p = query_param(query, "position")) {
    auto n = number(p);
    if (!n) return {400, "position='" + *p + "' is not a number\n"};
    auto shown = render_quarantine_show(*entries, *n, json);
    if (!shown.ok()) return {404, shown.error().message() + "\n"};
    return {200, *shown};
  }
  return {200, render_quarantine_list(*entries, json)};
}

}  // namespace

std::string pipeline_json(Pipeline& pipeline) {
  std::string shards;
  if (pipeline.node() != nullptr) {
    for (const auto& m : pipeline.node()->metrics()) {
      shards += fmt::format(
          "{}{{\"shard\":{},\"epoch\":{},\"frontier_epoch\":{},\"frontier_offset\":{},\"records\":{},"
          "\"advanced\":{},\"repeated\":{},\"skipped\":{},\"catch_up\":{},\"pages\":{},\"paged_records\":{},"
          "\"mean_page\":{:.3f},\"retries\":{},\"lag\":{}}}",
          shards.empty() ? "" : ",", m.shard.value, m.epoch.value, m.frontier.epoch().value,
          m.frontier.offset().value, m.records, m.advanced, m.repeated, m.skipped, m.catch_up, m.pages,
          m.paged_records, m.mean_page(), m.retries, m.lag);
      // A stopped shard (e.g. fenced by a newer owner) says why; null while it runs.
      shards.pop_back();
      shards += ",\"stopped\":";
      if (m.stopped.empty()) {
        shards += "null";
      } else {
        append_json_string(shards, m.stopped);
      }
      shards += "}";
    }
  }
  std::string out = "{\"shards\":[" + shards + "]";
  if (pipeline.node() != nullptr) {
    const ShardMetrics t = total(pipeline.node()->metrics());
    out += fmt::format(
        ",\"node\":{{\"records\":{},\"pages\":{},\"paged_records\":{},\"mean_page\":{:.3f},\"lag\":{}}}",
        t.records, t.pages, t.paged_records, t.mean_page(), t.lag);
  }
  if (pipeline.fanout() != nullptr) {
    const auto f = pipeline.fanout()->metrics();
    out += fmt::format(",\"fanout\":{{\"records\":{},\"dispatches\":{},\"skipped\":{}}}", f.records,
                       f.dispatches, f.skipped);
  }
  if (pipeline.archiver() != nullptr) {
    out += fmt::format(",\"archiver\":{{\"messages\":{}}}", pipeline.archiver()->metrics().messages);
  }
  const OpCounts ops = pipeline.store().op_counts();
  out += fmt::format(
      ",\"store\":{{\"backend\":\"{}\",\"page_limit\":{},\"inserts\":{},\"updates\":{},\"reads\":{},\"lwts\":"
      "{},"
      "\"frontier_writes\":{},\"pages\":{},\"mean_page\":{:.3f}}}}}\n",
      pipeline.store().backend_name(), pipeline.store().finish_page_limit(), ops.inserts, ops.updates,
      ops.reads, ops.lwts, ops.frontier_writes, ops.pages, ops.mean_page());
  return out;
}

std::vector<AdminRoute> pipeline_admin_routes(Pipeline& pipeline) {
  return {
      AdminRoute{
          "POST", "/admin/fanout/replay",
          [&pipeline](const std::string& query, const std::string&) { return replay(pipeline, query); }},
      AdminRoute{"POST", "/admin/archiver/replay",
                 [&pipeline](const std::string& query, const std::string&) {
                   return archiver_replay(pipeline, query);
                 }},
      AdminRoute{
          "GET", "/admin/quarantine",
          [&pipeline](const std::string& query, const std::string&) { return quarantine(pipeline, query); }},
      AdminRoute{"GET", "/admin/pipeline",
                 [&pipeline](const std::string&, const std::string&) {
                   return AdminResponse{200, pipeline_json(pipeline)};
                 }},
  };
}

std::vector<AdminRoute> ownership_admin_routes(ShardOwnership& loop) {
  return {
      AdminRoute{"POST", "/admin/shards/clear",
                 [&loop](const std::string& query, const std::string&) -> AdminResponse {
                   const auto shard = number(query_param(query, "shard"));
                   if (!shard || *shard > kMaxShards) return {400, "expected ?shard=<shard number>\n"};
                   const ShardId id{static_cast<uint32_t>(*shard)};
                   if (Status s = loop.clear(id); !s.ok()) return {404, s.error().message() + "\n"};
                   return {200, fmt::format("shard {}: cleared; its worker restarts at the same epoch at the "
                                            "node's next scan\n",
                                            id.value)};
                 }},
      AdminRoute{"GET", "/admin/shards",
                 [&loop](const std::string&, const std::string&) -> AdminResponse {
                   const OwnershipMetrics m = loop.metrics();
                   std::string out;
                   for (const auto& [shard, epoch] : m.held) {
                     std::string why = "running";
                     for (const auto& [s, e] : m.stopped) {
                       if (s == shard) why = "STOPPED: " + e;
                     }
                     out += fmt::format("shard {} epoch {}: {}\n", shard.value, epoch.value, why);
                   }
                   return {200, out.empty() ? std::string("no shard held\n") : out};
                 }},
  };
}

}  // namespace qim
