#include "e2e/e2e_env.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "auth/token.h"

namespace qim::e2e {

namespace {

std::string run_tag() {
  static const std::string tag = std::to_string(::getpid());
  return tag;
}

}  // namespace

std::string backend_under_test() {
  const char* b = std::getenv("QIM_E2E_BACKEND");
  return b && *b ? b : "embedded";
}

Env process_env_for_backend() {
  Env env;
  env["QIM_AUTH_SECRET"] = kSecret;
  env["QIM_MAILBOX_STORE_BACKEND"] = backend_under_test();
  env["QIM_PRESENCE_GRACE_MS"] = "1000";  // presence scenarios wait out the debounce (scenarios_signals)
  return env;
}

std::unique_ptr<Deployment> new_deployment(const std::string& name, Ownership ownership) {
  std::string dir = make_temp_dir("qim-e2e-" + name);
  Env env = process_env_for_backend();
  // Each deployment has logs of its own (its data dir, or its own Kafka topics), so it needs a store
  // namespace of its own too: a remote store shared between deployments would hold frontiers of another
  // deployment's log.
  static int serial = 0;
  const std::string ns = "qim_e2e_" + run_tag() + "_" + std::to_string(serial++);
  env["QIM_MAILBOX_REDIS_PREFIX"] = ns + ":";
  env["QIM_CQL_KEYSPACE"] = ns;
  env["QIM_KAFKA_TOPIC_PREFIX"] = ns + ".";
  std::unique_ptr<Deployment> process;
  if (deployment_under_test() == "distributed") {
    env["QIM_ROUTING_REDIS_PREFIX"] = ns + ":";
    process = distributed_deployment(QIM_BINARY, dir, std::move(env), ns, 16, ownership);
  } else {
    process = single_deployment(QIM_BINARY, dir, std::move(env));
  }
  // A failed run keeps its data directory and qim.log (QIM_E2E_KEEP=1 keeps every one).
  process->keep_data_if([] {
    const char* keep = std::getenv("QIM_E2E_KEEP");
    return (keep != nullptr && std::string(keep) == "1") || ::testing::UnitTest::GetInstance()->Failed() ||
           ::testing::Test::HasFailure();
  });
  return process;
}

std::string user(const std::string& scenario, const std::string& name) {
  return scenario + "_" + name + "_" + run_tag();
}

std::string token_for(const std::string& user, const std::string& device) {
  // Long-lived, so a process whose clock runs days ahead (scenario 13) still accepts it.
  SystemClock clock;
  return *mint_token(kSecret, *UserId::parse(user), *DeviceId::parse(device), 30 * kDayMs, clock);
}

namespace {
std::unique_ptr<Client> connect_port(uint16_t port) {
  client::ClientOptions o;
  o.port = port;
  o.timeout = kWait;
  auto c = Client::connect(o);
  EXPECT_TRUE(c.ok()) << c.error().to_string();
  return c.ok() ? std::move(c).value() : nullptr;
}
}  // namespace

std::unique_ptr<Client> connect_to(const Deployment& qim) {
  return connect_port(qim.port());
}

std::unique_ptr<Client> login(const Deployment& qim, const std::string& user, const std::string& device) {
  return login_at(qim.port_for(user), user, device);
}

std::unique_ptr<Client> login_at(uint16_t port, const std::string& user, const std::string& device) {
  auto c = connect_port(port);
  if (!c) return nullptr;
  auto ok = c->auth(token_for(user, device));
  EXPECT_TRUE(ok.ok()) << ok.error().to_string();
  return ok.ok() ? std::move(c) : nullptr;
}

std::optional<std::vector<Entry>> sync_all(Client& c, uint64_t after) {
  std::vector<Entry> out;
  for (int page = 0; page < 1000; ++page) {
    auto r = c.sync(after, 500);
    EXPECT_TRUE(r.ok()) << r.error().to_string();
    if (!r.ok()) return std::nullopt;
    for (auto& e : r->entries) {
      after = e.seq;
      out.push_back(std::move(e));
    }
    if (!r->more) break;
  }
  return out;
}

std::vector<Entry> sync_until(Client& c, const std::function<bool(const std::vector<Entry>&)>& pred,
                              uint64_t after, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  std::vector<Entry> last;
  while (std::chrono::steady_clock::now() < deadline) {
    auto entries = sync_all(c, after);
    if (!entries) return last;
    last = std::move(*entries);
    if (pred(last)) return last;
    std::this_thread::sleep_for(50ms);
  }
  return last;
}

std::vector<Entry> collect_delivered(Client& c, size_t count, std::chrono::milliseconds timeout) {
  std::vector<Entry> out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out.size() < count) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto d = c.wait_type("DELIVER", left);
    if (!d.ok()) break;
    for (auto& e : d->entries) out.push_back(std::move(e));
  }
  return out;
}

std::vector<Entry> follow(client::MailboxFollower& f, size_t count, std::chrono::milliseconds timeout) {
  std::vector<Entry> out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out.size() < count) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto shown = f.next(left);
    if (!shown.ok()) {
      EXPECT_EQ(shown.code(), Errc::kTimeout) << shown.error().to_string();
      break;
    }
    for (auto& e : *shown) out.push_back(std::move(e));
  }
  return out;
}

std::string metrics_text(const Deployment& qim) {
  std::string out;
  for (uint16_t port : qim.admin_ports()) out += http_request(port, "GET", "/metrics") + "\n";
  return out;
}

double metric(const Deployment& qim, const std::string& sample) {
  double sum = 0;
  for (uint16_t port : qim.admin_ports()) {
    std::istringstream in(http_request(port, "GET", "/metrics"));
    for (std::string line; std::getline(in, line);) {
      if (line.size() > sample.size() && line.compare(0, sample.size(), sample) == 0 &&
          line[sample.size()] == ' ')
        sum += std::strtod(line.c_str() + sample.size() + 1, nullptr);
    }
  }
  return sum;
}

}  // namespace qim::e2e
