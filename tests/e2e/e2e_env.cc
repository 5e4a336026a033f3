#include "e2e/e2e_env.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "auth/token.h"

namespace qim::e2e {

namespace {

class SharedQim : public ::testing::Environment {
 public:
  void SetUp() override {
    process_ = new_process("shared");
    auto st = process_->start();
    if (!st.ok()) {
      // Not ASSERT: a fatal failure here makes gtest report every test "skipped", which reads as "no
      // engine configured". A process that cannot start (e.g. its store unreachable) fails the run.
      ADD_FAILURE() << "the shared qim up did not start: " << st.error().to_string() << "\nlog tail:\n"
                    << process_->log_tail();
      process_.reset();  // now (it keeps its data: a test failed), not from exit, which destroys gtest
      std::exit(1);      // NOLINT(concurrency-mt-unsafe): no other thread runs yet
    }
  }
  void TearDown() override {
    if (process_ && process_->running()) {
      int code = process_->stop();
      EXPECT_EQ(code, 0) << "qim up did not exit cleanly; log tail:\n" << process_->log_tail();
    }
    // Destroy it now, while gtest is alive: its keep-data check asks gtest whether anything failed, and
    // gtest destroys environments only from its own destructor at exit.
    process_.reset();
  }
  std::unique_ptr<QimProcess> process_;
};

SharedQim* g_shared = static_cast<SharedQim*>(::testing::AddGlobalTestEnvironment(new SharedQim));

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
  return env;
}

std::unique_ptr<QimProcess> new_process(const std::string& name) {
  std::string dir = make_temp_dir("qim-e2e-" + name);
  Env env = process_env_for_backend();
  // Each process has logs of its own (its data dir), so it needs a store namespace of its own too: a
  // remote store shared between processes would hold frontiers of another process's log.
  static int serial = 0;
  const std::string ns = "qim_e2e_" + run_tag() + "_" + std::to_string(serial++);
  env["QIM_MAILBOX_REDIS_PREFIX"] = ns + ":";
  env["QIM_CQL_KEYSPACE"] = ns;
  env["QIM_KAFKA_TOPIC_PREFIX"] = ns + ".";
  auto process = std::make_unique<QimProcess>(QIM_BINARY, dir, std::move(env));
  // A failed run keeps its data directory and qim.log (QIM_E2E_KEEP=1 keeps every one).
  process->keep_data_if([] {
    const char* keep = std::getenv("QIM_E2E_KEEP");
    return (keep != nullptr && std::string(keep) == "1") || ::testing::UnitTest::GetInstance()->Failed() ||
           ::testing::Test::HasFailure();
  });
  return process;
}

QimProcess& shared_qim() {
  return *g_shared->process_;
}

std::string user(const std::string& scenario, const std::string& name) {
  return scenario + "_" + name + "_" + run_tag();
}

std::string token_for(const std::string& user, const std::string& device) {
  // Long-lived, so a process whose clock runs days ahead (scenario 13) still accepts it.
  SystemClock clock;
  return *mint_token(kSecret, *UserId::parse(user), *DeviceId::parse(device), 30 * kDayMs, clock);
}

std::unique_ptr<Client> connect_to(const QimProcess& qim) {
  client::ClientOptions o;
  o.port = qim.port();
  o.timeout = kWait;
  auto c = Client::connect(o);
  EXPECT_TRUE(c.ok()) << c.error().to_string();
  return c.ok() ? std::move(c).value() : nullptr;
}

std::unique_ptr<Client> login(const QimProcess& qim, const std::string& user, const std::string& device) {
  auto c = connect_to(qim);
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
                              uint64_t after) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
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

double metric(const QimProcess& qim, const std::string& sample) {
  std::string text = http_request(qim.admin_port(), "GET", "/metrics");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > sample.size() && line.compare(0, sample.size(), sample) == 0 &&
        line[sample.size()] == ' ')
      return std::strtod(line.c_str() + sample.size() + 1, nullptr);
  }
  return 0;
}

}  // namespace qim::e2e
