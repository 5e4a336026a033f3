// qim-relay: the protocol-only ceiling server (relay.h) as a process, for scripts/bench/ladder.sh. Serves
// until SIGINT or SIGTERM, then prints what it relayed.
#include <signal.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>

#include "bench/relay/relay.h"

int main(int argc, char** argv) {
  CLI::App app{"qim-relay: QIM's client protocol with no storage (AUTH, SEND -> SEND_ACK + DELIVER)"};
  qim::relay::RelayOptions o;
  o.auth_secret = std::getenv("QIM_AUTH_SECRET") ? std::getenv("QIM_AUTH_SECRET") : "";
  app.add_option("--listen", o.listen_address, "listen address")->capture_default_str();
  app.add_option("--port", o.port, "client port (0 picks one)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--secret", o.auth_secret, "token secret (default: QIM_AUTH_SECRET)");
  app.add_option("--threads", o.threads, "io threads")->capture_default_str()->check(CLI::Range(1, 64));
  CLI11_PARSE(app, argc, argv);

  // Blocked before any thread starts, so only sigwait sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto relay = qim::relay::Relay::start(o, std::make_shared<qim::SystemClock>());
  if (!relay.ok()) {
    std::fprintf(stderr, "qim-relay: %s\n", relay.error().to_string().c_str());
    return relay.error().code() == qim::Errc::kConfig ? 2 : 1;
  }
  std::printf("qim-relay: listening on %s:%u, %u thread(s)\n", o.listen_address.c_str(), (*relay)->port(),
              o.threads);
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  const auto s = (*relay)->stats();
  relay->reset();
  std::printf("qim-relay: stopped; %llu connections, %llu SENDs, %llu DELIVERs\n",
              static_cast<unsigned long long>(s.connections), static_cast<unsigned long long>(s.sends),
              static_cast<unsigned long long>(s.delivers));
  return 0;
}
