#include "e2e/engine_control.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "e2e/qim_process.h"

namespace qim::e2e {

std::optional<std::string> engines_dir() {
  const char* dir = std::getenv("QIM_TEST_ENGINES_DIR");
  if (dir == nullptr || *dir == '\0') return std::nullopt;
  return std::string(dir);
}

Status run_engine_script(const std::string& script, const std::vector<std::string>& args,
                         std::chrono::seconds timeout) {
  const auto dir = engines_dir();
  if (!dir) return Error(Errc::kConfig, "QIM_TEST_ENGINES_DIR is not set: the engine scripts' directory");
  std::string command = "bash " + *dir + "/" + script;
  for (const auto& a : args) command += " " + a;
  // The output goes to a file (not a pipe we would have to drain while waiting).
  const std::string out_dir = make_temp_dir("qim-engine-cmd");
  const std::string out = out_dir + "/out";
  std::cerr << "[engine] " << command << "\n";
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> argv_s = {"bash", *dir + "/" + script};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error(Errc::kIo, "cannot create " + out);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fd);
    return Error(Errc::kIo, "fork for '" + command + "' failed");
  }
  if (pid == 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    // Its children (a JVM started in the background) stay out of the test's process group.
    setpgid(0, 0);
    execvp("bash", argv.data());
    _exit(127);
  }
  close(fd);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::stringstream text;
  text << std::ifstream(out).rdbuf();
  std::filesystem::remove_all(out_dir);
  std::string output = text.str();
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) std::cerr << "[engine] " << line << "\n";
  const std::string tail = output.size() > 2000 ? output.substr(output.size() - 2000) : output;
  if (done == 0) {
    ::kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return Error(Errc::kTimeout, "'" + command + "' ran longer than " + std::to_string(timeout.count()) +
                                     " s; its output ends:\n" + tail);
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code != 0)
    return Error(Errc::kTransport,
                 "'" + command + "' exited " + std::to_string(code) + "; its output ends:\n" + tail);
  return ok_status();
}

}  // namespace qim::e2e
