#include "mailbox/redis/redis_test_env.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <random>

#include "mailbox/redis/redis_connection.h"

namespace qim {

std::vector<std::string> test_redis_endpoints() {
  std::vector<std::string> out;
  const char* env = std::getenv(std::string(kTestRedisVariable).c_str());
  if (env == nullptr) return out;
  std::string_view rest(env);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return out;
}

std::string unique_test_prefix(std::string_view name) {
  std::random_device random;
  return "qimtest:" + std::to_string(::getpid()) + ":" + std::string(name) + ":" + std::to_string(random()) +
         std::to_string(random()) + ":";
}

int unused_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) ::close(fd);
  return port;
}

Status delete_test_prefix(const std::vector<std::string>& endpoints, const std::string& prefix) {
  if (prefix.empty()) return Error(Errc::kInvalidArgument, "refusing to delete an empty prefix");
  for (const auto& text : endpoints) {
    QIM_ASSIGN_OR_RETURN(RedisEndpoint endpoint, RedisEndpoint::parse(text));
    QIM_ASSIGN_OR_RETURN(auto conn, RedisConnection::open(endpoint, RedisTimeouts{}));
    std::string cursor = "0";
    for (int round = 0; round < 100'000; ++round) {  // bounded: a test's keyspace is small
      QIM_ASSIGN_OR_RETURN(RedisReply r, conn->run({"SCAN", cursor, "MATCH", prefix + "*", "COUNT", "1000"}));
      if (r.kind != RedisReply::Kind::kArray || r.elements.size() != 2) {
        return Error(Errc::kTransport, "redis " + text + ": unexpected SCAN reply");
      }
      cursor = r.elements[0].str;
      if (!r.elements[1].elements.empty()) {
        RedisCommand del{"DEL"};
        for (const auto& key : r.elements[1].elements) del.push_back(key.str);
        QIM_RETURN_IF_ERROR(conn->run(del));
      }
      if (cursor == "0") break;
    }
  }
  return {};
}

}  // namespace qim
