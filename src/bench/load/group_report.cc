#include "bench/load/group_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "bench/load/number_format.h"
#include "bench/load/stats.h"

namespace qim::load {

LatencySummary summarize(std::vector<double> samples_ms) {
  LatencySummary s;
  s.samples = samples_ms.size();
  if (samples_ms.empty()) return s;
  s.p50_ms = percentile(samples_ms, 50);
  s.p99_ms = percentile(samples_ms, 99);
  s.max_ms = samples_ms.back();  // percentile() sorted them
  return s;
}

std::vector<std::string> choose_listeners(const std::vector<std::string>& members, const ShardMap& shards,
                                          uint32_t chunk_entries, size_t count) {
  // Sorted and distinct, as fanout orders a shard's recipients (UserId compares as its string).
  std::vector<std::string> sorted;
  for (const auto& m : members)
    if (UserId::parse(m).ok()) sorted.push_back(m);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (count >= sorted.size()) return sorted;

  std::map<uint32_t, std::vector<std::string>> by_shard;  // each sorted, as `sorted` is
  for (const auto& m : sorted) by_shard[shards.shard_of(UserId::unchecked(m)).value].push_back(m);
  std::vector<std::string> out;
  std::set<std::string> taken;
  auto take = [&](const std::string& m) {
    if (out.size() < count && taken.insert(m).second) out.push_back(m);
  };
  // The last member of every shard's record, the last shard first.
  for (auto it = by_shard.rbegin(); it != by_shard.rend(); ++it) take(it->second.back());
  // The rest of the last shard's last chunk (chunk boundaries at multiples of chunk_entries).
  if (!by_shard.empty() && chunk_entries > 0) {
    const auto& last = by_shard.rbegin()->second;
    const size_t begin = (last.size() - 1) / chunk_entries * chunk_entries;
    for (size_t i = last.size(); i-- > begin;) take(last[i]);
  }
  // Then evenly over the sorted members; a second pass fills what the first left (already taken).
  const size_t room = count - std::min(count, out.size());
  if (room > 0) {
    const double step = static_cast<double>(sorted.size()) / static_cast<double>(room);
    for (size_t k = 0; k < room; ++k) take(sorted[static_cast<size_t>(static_cast<double>(k) * step)]);
  }
  for (size_t i = 0; i < sorted.size() && out.size() < count; ++i) take(sorted[i]);
  return out;
}

namespace {

std::string ms(double v) {
  return v >= 1000 ? fixed(v / 1000, 2) + " s" : fixed(v, 1) + " ms";
}

std::string ops_of(const GroupResult& r) {
  if (!r.inserts_per_entry) return "-";
  return opt(r.inserts_per_entry, 3) + " / " + opt(r.updates_per_entry, 3) + " / " +
         opt(r.reads_per_entry, 3) + " / " + opt(r.lwts_per_entry, 3);
}

std::string rate_of(const GroupResult& r) {
  return r.rate > 0 ? fixed(r.rate, 0) + " msg/s" : "one at a time";
}

}  // namespace

std::string group_markdown(const std::vector<GroupResult>& results) {
  std::string out =
      "| config | members | listeners | messages | sending | set-up | SEND_ACK P50 / P99 | first listener "
      "P50 / P99 | last listener P50 / P99 / max | listener deliveries missing | mailboxes checked: missing "
      "| store ins / upd / read / LWT per entry | group store reads / fanout loads per msg | errors |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : results) {
    const std::string verified =
        r.verified_members ? std::to_string(*r.verified_members) + ": " + std::to_string(r.verify_missing)
                           : "not checked";
    out += "| " + r.config + " | " + std::to_string(r.members) + " | " + std::to_string(r.listeners) + " | " +
           std::to_string(r.messages) + " | " + rate_of(r) + " | " + fixed(r.setup_seconds, 1) + " s | " +
           ms(r.ack.p50_ms) + " / " + ms(r.ack.p99_ms) + " | " + ms(r.first.p50_ms) + " / " +
           ms(r.first.p99_ms) + " | " + ms(r.last.p50_ms) + " / " + ms(r.last.p99_ms) + " / " +
           ms(r.last.max_ms) + " | " + std::to_string(r.listener_missing) + " | " + verified + " | " +
           ops_of(r) + " | " + opt(r.group_reads_per_msg, 3) + " / " + opt(r.group_loads_per_msg, 3) + " | " +
           std::to_string(r.errors) + " |\n";
  }
  return out;
}

std::string group_csv(const std::vector<GroupResult>& results) {
  std::string out =
      "config,members,listeners,messages,rate,setup_s,acked,ack_p50_ms,ack_p99_ms,first_p50_ms,first_p99_"
      "ms,last_p50_ms,last_p99_ms,last_max_ms,last_samples,listener_missing,verified_members,verify_missing,"
      "entries,inserts_per_entry,updates_per_entry,reads_per_entry,lwts_per_entry,group_reads_per_msg,"
      "group_loads_per_msg,errors,complete\n";
  auto o = [](const std::optional<double>& v) { return v ? fixed(*v, 4) : std::string(); };
  for (const auto& r : results) {
    out += r.config + "," + std::to_string(r.members) + "," + std::to_string(r.listeners) + "," +
           std::to_string(r.messages) + "," + fixed(r.rate, 1) + "," + fixed(r.setup_seconds, 2) + "," +
           std::to_string(r.acked) + "," + fixed(r.ack.p50_ms, 3) + "," + fixed(r.ack.p99_ms, 3) + "," +
           fixed(r.first.p50_ms, 3) + "," + fixed(r.first.p99_ms, 3) + "," + fixed(r.last.p50_ms, 3) + "," +
           fixed(r.last.p99_ms, 3) + "," + fixed(r.last.max_ms, 3) + "," + std::to_string(r.last.samples) +
           "," + std::to_string(r.listener_missing) + "," +
           (r.verified_members ? std::to_string(*r.verified_members) : std::string()) + "," +
           std::to_string(r.verify_missing) + "," + std::to_string(r.entries()) + "," +
           o(r.inserts_per_entry) + "," + o(r.updates_per_entry) + "," + o(r.reads_per_entry) + "," +
           o(r.lwts_per_entry) + "," + o(r.group_reads_per_msg) + "," + o(r.group_loads_per_msg) + "," +
           std::to_string(r.errors) + "," + (r.complete() ? "yes" : "no") + "\n";
  }
  return out;
}

}  // namespace qim::load
