#include "e2e/qim_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace qim::e2e {

namespace {

constexpr auto kStartTimeout = std::chrono::seconds(60);

// The integer after "key": in a small JSON text, or -1.
int64_t json_int(const std::string& text, const std::string& key) {
  auto at = text.find("\"" + key + "\"");
  if (at == std::string::npos) return -1;
  at = text.find(':', at);
  if (at == std::string::npos) return -1;
  return std::strtoll(text.c_str() + at + 1, nullptr, 10);
}

}  // namespace

std::string make_temp_dir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) return {};
  return std::string(buf.data());
}

QimProcess::QimProcess(std::string binary, std::string data_dir, Env env, std::string command)
    : binary_(std::move(binary)),
      data_dir_(std::move(data_dir)),
      command_(std::move(command)),
      env_(std::move(env)) {
  env_["QIM_DATA_DIR"] = data_dir_;
  env_.try_emplace("QIM_GATEWAY_PORT", "0");
  env_.try_emplace("QIM_ADMIN_PORT", "0");
  env_.try_emplace("QIM_LOG_LEVEL", "warn");
}

QimProcess::~QimProcess() {
  if (running()) stop(std::chrono::seconds(30));
  if (!data_dir_.empty() && !(keep_ && keep_())) {
    std::error_code ignored;
    std::filesystem::remove_all(data_dir_, ignored);
  }
}

pid_t QimProcess::spawn(const Env& extra) {
  Env all;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) all[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : env_) all[k] = v;
  for (const auto& [k, v] : extra) all[k] = v;
  std::vector<std::string> strings;
  for (const auto& [k, v] : all) strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string log = data_dir_ + "/qim.log";
  std::string arg0 = "qim", arg1 = command_;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};

  pid_t pid = fork();
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      ::close(fd);
    }
    execve(binary_.c_str(), argv, envp.data());
    _exit(127);
  }
  return pid;
}

Status QimProcess::start(const Env& extra) {
  if (running()) return Error(Errc::kInvariant, "qim is already running");
  pid_ = spawn(extra);
  if (pid_ < 0) return Error(Errc::kIo, "fork failed");
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  const std::string running_file = data_dir_ + "/running.json";
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Error(Errc::kTransport, "qim " + command_ + " exited during start (status " +
                                         std::to_string(status) + "); log tail:\n" + log_tail());
    }
    std::ifstream in(running_file);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      std::string text = ss.str();
      const bool has_gateway = command_ == "up" || command_ == "gateway";
      if (json_int(text, "pid") == pid_ && json_int(text, "admin_port") > 0 &&
          (!has_gateway || json_int(text, "gateway_port") > 0)) {
        port_ = static_cast<uint16_t>(json_int(text, "gateway_port"));
        admin_port_ = static_cast<uint16_t>(json_int(text, "admin_port"));
        return {};
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill();
  return Error(Errc::kTimeout, "qim " + command_ + " did not come up; log tail:\n" + log_tail());
}

int QimProcess::wait_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int QimProcess::stop(std::chrono::seconds timeout) {
  if (!running()) return -1;
  ::kill(pid_, SIGTERM);
  int code = wait_exit(timeout);
  if (code == -1) {
    ::kill(pid_, SIGKILL);
    code = wait_exit(std::chrono::seconds(10));
  }
  return code;
}

void QimProcess::kill() {
  if (!running()) return;
  ::kill(pid_, SIGKILL);
  wait_exit(std::chrono::seconds(10));
}

Status QimProcess::signal(int sig) const {
  if (!running()) return Error(Errc::kInvariant, "qim " + command_ + " does not run");
  if (::kill(pid_, sig) != 0) return Error(Errc::kIo, "kill(" + std::to_string(sig) + ") failed");
  return {};
}

int QimProcess::run_expecting_exit(const Env& extra, std::chrono::seconds timeout) {
  if (running()) return -2;
  pid_ = spawn(extra);
  int code = wait_exit(timeout);
  if (code == -1) kill();
  return code;
}

std::string QimProcess::log_tail(size_t bytes) const {
  std::ifstream in(data_dir_ + "/qim.log");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > bytes ? s.substr(s.size() - bytes) : s;
}

std::string http_request(uint16_t port, const std::string& method, const std::string& target) {
  namespace net = boost::asio;
  namespace http = boost::beast::http;
  try {
    net::io_context io;
    net::ip::tcp::socket s(io);
    s.connect({net::ip::make_address("127.0.0.1"), port});
    http::request<http::string_body> req(http::string_to_verb(method), target, 11);
    // As a browser on the banner's address and qim's admin client send them: Host with the port (the
    // dev token route checks it), and the header the admin routes require (gateway/admin_server.h).
    req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
    req.set("X-QIM-Admin", "1");
    req.prepare_payload();
    http::write(s, req);
    boost::beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(s, buf, res);
    return std::to_string(res.result_int()) + " " + res.body();
  } catch (const std::exception& e) {
    return std::string("0 ") + e.what();
  }
}

}  // namespace qim::e2e
