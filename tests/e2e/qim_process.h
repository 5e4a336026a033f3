#pragma once
// A real `qim up` (or one role: `qim gateway|fanout|mailbox|archiver`) process for the e2e suite: started in
// its own data directory with free ports (read back from <data_dir>/running.json), stopped with SIGTERM
// (clean drain) or SIGKILL (a crash), restarted with other variables (e.g. a higher QIM_EPOCH). Output goes
// to <data_dir>/qim.log.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "core/status.h"

namespace qim::e2e {

using Env = std::map<std::string, std::string>;

class QimProcess {
 public:
  // `command`: "up" (default) or a role; a process without a gateway is up once its admin server is.
  QimProcess(std::string binary, std::string data_dir, Env env, std::string command = "up");
  ~QimProcess();
  QimProcess(const QimProcess&) = delete;
  QimProcess& operator=(const QimProcess&) = delete;

  // Starts `qim up` with the base variables plus `extra`, and waits until it serves. Transport with the
  // tail of its log if it exits or does not come up in time.
  Status start(const Env& extra = {});
  // SIGTERM and wait for the drain (SIGKILL after the timeout). Returns the exit code.
  int stop(std::chrono::seconds timeout = std::chrono::seconds(60));
  // SIGKILL: a crash, nothing drained.
  void kill();
  // Starts with `extra` expecting the process to refuse and exit by itself; its exit code, or -1 if it
  // was still running after `timeout` (then it is killed).
  int run_expecting_exit(const Env& extra, std::chrono::seconds timeout);

  // Waits up to `timeout` for the process to end by itself (it is not signalled): its exit code (128 + the
  // signal if one ended it), -1 if it still runs, -2 if it was not running.
  int wait_for_exit(std::chrono::milliseconds timeout) { return running() ? wait_exit(timeout) : -2; }

  // Whether the data directory stays after the process object is gone (for a failed test's post-mortem);
  // asked at destruction. Without it the directory is removed.
  void keep_data_if(std::function<bool()> keep) { keep_ = std::move(keep); }

  // Sends `sig` to the running process (SIGSTOP / SIGCONT pause and resume it: a GC pause, a VM steal).
  // Invariant if it does not run; Io if kill(2) fails.
  Status signal(int sig) const;

  bool running() const { return pid_ > 0; }
  uint16_t port() const { return port_; }
  uint16_t admin_port() const { return admin_port_; }
  const std::string& data_dir() const { return data_dir_; }
  Env& base_env() { return env_; }
  std::string log_tail(size_t bytes = 4000) const;

 private:
  pid_t spawn(const Env& extra);
  // waitpid with a deadline; the exit code, or -1 on timeout.
  int wait_exit(std::chrono::milliseconds timeout);

  std::string binary_;
  std::string data_dir_;
  std::string command_;
  Env env_;
  std::function<bool()> keep_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  uint16_t admin_port_ = 0;
};

// A fresh empty directory under $TMPDIR (or /tmp).
std::string make_temp_dir(const std::string& prefix);

// One HTTP request to 127.0.0.1:port; "<status> <body>", or "0 <error>" if it could not be made.
std::string http_request(uint16_t port, const std::string& method, const std::string& target);

}  // namespace qim::e2e
