#pragma once
// The server API's HTTP/1.1 listener (docs/api.md): its own port (QIM_API_LISTEN), TLS with the client
// port's certificate options when they are set, keep-alive. A small pool of worker threads (QIM_API_THREADS)
// each serves one connection at a time with blocking reads and writes, bounded in size (the request line and
// headers 8 KiB, the body QIM_API_MAX_REQUEST_BYTES: larger is a TOO_LARGE problem, 413) and in time (10 s
// without a byte closes the connection); connections past the pool wait in a bounded accept queue (64), past
// that they are closed at accept. Requests go to ApiRouter.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "api/api_options.h"
#include "api/api_router.h"
#include "core/status.h"

namespace qim::api {

class ApiServer {
 public:
  ApiServer(ApiOptions options, ApiDeps deps);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds and starts serving. Io if the address cannot be bound; Config for a TLS pair that does not load.
  Status start();
  // Stops accepting, ends open connections, joins the threads. Idempotent.
  void stop();
  uint16_t port() const { return port_; }
  bool tls() const { return tls_ != nullptr; }

 private:
  void accept_loop();
  void worker_loop();
  void serve(boost::asio::ip::tcp::socket socket);

  const ApiOptions options_;
  ApiRouter router_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  uint16_t port_ = 0;

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<boost::asio::ip::tcp::socket> queue_;
  std::set<int> open_fds_;  // shut down by stop() so blocked reads return
  bool stopping_ = false;
  std::thread acceptor_thread_;
  std::vector<std::thread> workers_;
};

}  // namespace qim::api
