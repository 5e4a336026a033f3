#include "bench/load/server_metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

namespace qim::load {

std::optional<std::string> metrics_text(uint16_t port) {
  // A plain HTTP GET over a TCP socket; the admin server answers one request per connection.
  int fd = -1;
  std::string body;
  {
    std::string cmd = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    struct Closer {
      int& fd;
      ~Closer() {
        if (fd >= 0) ::close(fd);
      }
    } closer{fd};
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return std::nullopt;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return std::nullopt;
    if (::write(fd, cmd.data(), cmd.size()) != static_cast<ssize_t>(cmd.size())) return std::nullopt;
    char buf[65536];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) body.append(buf, static_cast<size_t>(n));
  }
  if (body.empty()) return std::nullopt;
  return body;
}

double metric_sum(std::string_view text, std::string_view prefix) {
  double sum = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.substr(0, prefix.size()) != prefix) continue;
    const size_t sp = line.rfind(' ');
    if (sp == std::string_view::npos) continue;
    // strtod stops at the newline or the end of the buffer's line; copy the value to be safe.
    sum += std::strtod(std::string(line.substr(sp + 1)).c_str(), nullptr);
  }
  return sum;
}

}  // namespace qim::load
