#pragma once
// Where a process's threads may run (QIM_CPU_PLACEMENT, docs/adr/0048-pipeline-on-one-cpu.md). The stages of
// the embedded pipeline (the logs' writers, fanout, the archiver, the shard workers, the fan-in, RocksDB's
// background work) hand every record from one thread to the next; when the next thread sleeps on another CPU,
// the hand-off is a cross-CPU wake-up, which on a small VM costs more than the work handed over. Kept on one
// set of CPUs they wake each other where they run, and the gateway's I/O threads, which serve the
// sockets in parallel with them, get a set of their own.
//
//   auto   (default) a process that runs the gateway and the pipeline (`qim up`) and may use exactly two
//          CPUs puts the pipeline on the higher one and the gateway's I/O on the lower; otherwise nothing
//          is placed (other sizes are not measured yet)
//   off    nothing is placed
//   P:G    CPU lists (`1`, `0-3`, `0,2,4-5`): the pipeline on P, the gateway's I/O on G; either may be
//          empty (`:0` places the gateway alone)
//
// Linux only (sched_getaffinity / pthread_setaffinity_np).

#include <string>
#include <vector>

#include "core/status.h"

namespace qim {

struct CpuPlacementSetting {
  enum class Mode { kAuto, kOff, kExplicit };
  Mode mode = Mode::kAuto;
  std::vector<int> pipeline;  // kExplicit only
  std::vector<int> gateway;   // kExplicit only
};

// What a process applies: empty lists place nothing.
struct CpuPlacement {
  std::vector<int> pipeline;
  std::vector<int> gateway;
  std::string why;  // for the start-up log line
};

// "0-3,6" -> {0,1,2,3,6}: ascending, without repeats. InvalidArgument naming the bad part for anything
// else (an empty list included), or for a CPU above 1023.
Result<std::vector<int>> parse_cpu_list(const std::string& text);
// "auto", "off" or "P:G". InvalidArgument naming the problem.
Result<CpuPlacementSetting> parse_cpu_placement(const std::string& text);
// The CPUs the calling thread may run on, ascending: the process's, before any placement. Io if the kernel
// does not say.
Result<std::vector<int>> allowed_cpus();
// The placement for a process that runs the gateway (`gateway`) and pipeline stages (`pipeline`) on
// `allowed` CPUs. InvalidArgument if an explicit list names a CPU outside `allowed`.
Result<CpuPlacement> plan_cpu_placement(const CpuPlacementSetting& setting, const std::vector<int>& allowed,
                                        bool gateway, bool pipeline);
// Confines the calling thread (and the threads it starts afterwards, which inherit it) to `cpus`; nothing
// for an empty list. Io naming the CPUs if the kernel refuses.
Status pin_current_thread(const std::vector<int>& cpus);
// "0-3,6".
std::string format_cpu_list(const std::vector<int>& cpus);

}  // namespace qim
