#pragma once
// Names the calling thread for `top -H`, `perf report --sort comm` and gdb: "fanout-p3", "node-s12",
// "log-outbox". Linux keeps at most 15 bytes; a longer name is cut, never refused. Best effort: a failure
// changes nothing else.

#include <pthread.h>

#include <string>

namespace qim {

inline void set_thread_name(const std::string& name) {
  const std::string cut = name.substr(0, 15);
  pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace qim
