#include "core/cpu_placement.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace qim {

namespace {

constexpr int kMaxCpu = 1023;  // CPU_SETSIZE

Result<int> parse_cpu(std::string_view part, const std::string& whole) {
  int cpu = -1;
  auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), cpu);
  if (part.empty() || ec != std::errc() || end != part.data() + part.size() || cpu < 0 || cpu > kMaxCpu) {
    return Error(Errc::kInvalidArgument, "CPU list '" + whole + "': '" + std::string(part) +
                                             "' is not a CPU number (0.." + std::to_string(kMaxCpu) + ")");
  }
  return cpu;
}

std::vector<int> cpus_of(const cpu_set_t& set) {
  std::vector<int> out;
  for (int cpu = 0; cpu <= kMaxCpu; ++cpu) {
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  }
  return out;
}

}  // namespace

Result<std::vector<int>> parse_cpu_list(const std::string& text) {
  if (text.empty()) return Error(Errc::kInvalidArgument, "CPU list is empty");
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = std::string_view(text).substr(start, comma - start);
    const size_t dash = part.find('-');
    QIM_ASSIGN_OR_RETURN(int first, parse_cpu(part.substr(0, dash), text));
    int last = first;
    if (dash != std::string_view::npos) {
      QIM_ASSIGN_OR_RETURN(last, parse_cpu(part.substr(dash + 1), text));
      if (last < first) {
        return Error(Errc::kInvalidArgument,
                     "CPU list '" + text + "': range '" + std::string(part) + "' runs backwards");
      }
    }
    for (int cpu = first; cpu <= last; ++cpu) out.push_back(cpu);
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<CpuPlacementSetting> parse_cpu_placement(const std::string& text) {
  CpuPlacementSetting s;
  if (text == "auto") return s;
  if (text == "off") {
    s.mode = CpuPlacementSetting::Mode::kOff;
    return s;
  }
  const size_t colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos) {
    return Error(Errc::kInvalidArgument,
                 "'" + text + "': expected auto, off or PIPELINE:GATEWAY CPU lists (e.g. 1:0)");
  }
  s.mode = CpuPlacementSetting::Mode::kExplicit;
  const std::string pipeline = text.substr(0, colon), gateway = text.substr(colon + 1);
  if (pipeline.empty() && gateway.empty())
    return Error(Errc::kInvalidArgument, "'" + text + "': both CPU lists are empty (use off)");
  if (!pipeline.empty()) {
    QIM_ASSIGN_OR_RETURN(s.pipeline, parse_cpu_list(pipeline));
  }
  if (!gateway.empty()) {
    QIM_ASSIGN_OR_RETURN(s.gateway, parse_cpu_list(gateway));
  }
  return s;
}

Result<std::vector<int>> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return Error(Errc::kIo, std::string("sched_getaffinity: ") + std::strerror(errno));
  return cpus_of(set);
}

Result<CpuPlacement> plan_cpu_placement(const CpuPlacementSetting& setting, const std::vector<int>& allowed,
                                        bool gateway, bool pipeline) {
  CpuPlacement p;
  switch (setting.mode) {
    case CpuPlacementSetting::Mode::kOff:
      p.why = "off";
      return p;
    case CpuPlacementSetting::Mode::kAuto:
      if (!gateway || !pipeline) {
        p.why = "auto: not placed (only a process with the gateway and the pipeline is)";
      } else if (allowed.size() != 2) {
        p.why = "auto: not placed (" + std::to_string(allowed.size()) + " CPUs; placed on 2 only)";
      } else {
        p.pipeline = {allowed[1]};
        p.gateway = {allowed[0]};
        p.why = "auto: 2 CPUs";
      }
      return p;
    case CpuPlacementSetting::Mode::kExplicit:
      for (const auto* list : {&setting.pipeline, &setting.gateway}) {
        for (int cpu : *list) {
          if (!std::binary_search(allowed.begin(), allowed.end(), cpu)) {
            return Error(Errc::kInvalidArgument, "CPU " + std::to_string(cpu) +
                                                     " is not one this process may run on (" +
                                                     format_cpu_list(allowed) + ")");
          }
        }
      }
      if (pipeline) p.pipeline = setting.pipeline;
      if (gateway) p.gateway = setting.gateway;
      p.why = "as configured";
      return p;
  }
  return p;
}

Status pin_current_thread(const std::vector<int>& cpus) {
  if (cpus.empty()) return {};
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  if (int e = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); e != 0) {
    return Error(Errc::kIo,
                 "cannot confine a thread to CPUs " + format_cpu_list(cpus) + ": " + std::strerror(e));
  }
  return {};
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace qim
