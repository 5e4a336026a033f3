// The client port over TLS and its plain-HTTP answers (issue 13): a real `qim up --dev-tls` serving
// wss:// to the C++ client and qimctl, refusing plain ws:// and unverified clients cleanly, refusing bad
// TLS configuration at start; the web page's static files and the development token route.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "auth/token.h"
#include "core/clock.h"
#include "e2e/e2e_env.h"

namespace qim::e2e {
namespace {

namespace fs = std::filesystem;

Env base_env() {
  Env env;
  env["QIM_AUTH_SECRET"] = kSecret;  // token_for() signs with it
  return env;
}

client::ClientOptions tls_options(const QimProcess& qim, std::string ca) {
  client::ClientOptions o;
  o.port = qim.port();
  o.tls = true;
  o.ca_file = std::move(ca);
  o.timeout = 10s;
  return o;
}

std::string dev_ca(const QimProcess& qim) {
  return qim.data_dir() + "/tls/dev-cert.pem";
}

// Runs a command, returns its exit status and output (stdout and stderr).
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(TlsE2E, AuthSendSyncOverWssWithTheDevCertificate) {
  QimProcess qim(QIM_BINARY, make_temp_dir("web-tls"), base_env());
  ASSERT_TRUE(qim.start({{"QIM_DEV_TLS", "1"}}).ok()) << qim.log_tail();
  ASSERT_TRUE(fs::exists(dev_ca(qim)));

  auto alice = Client::connect(tls_options(qim, dev_ca(qim)));
  ASSERT_TRUE(alice.ok()) << alice.error().to_string();
  ASSERT_TRUE((*alice)->auth(token_for("tls_alice", "d1")).ok());
  for (int i = 0; i < 3; ++i) {
    auto ack = (*alice)->send("tls_bob", "c" + std::to_string(i), "over tls " + std::to_string(i));
    ASSERT_TRUE(ack.ok()) << ack.error().to_string();
    EXPECT_EQ(ack->type, "SEND_ACK");
  }
  // qimctl over wss:// with --ca, as a person would.
  const std::string ctl =
      std::string("'") + QIMCTL_BINARY + "' send --url wss://127.0.0.1:" + std::to_string(qim.port()) +
      " --ca '" + dev_ca(qim) + "' --token " + token_for("tls_alice", "d2") + " --to tls_bob 'from qimctl'";
  auto [code, out] = run(ctl);
  EXPECT_EQ(code, 0) << out;
  // The same qimctl without the certificate refuses to talk: verification is never skipped.
  auto [refused, why] =
      run(std::string("'") + QIMCTL_BINARY + "' send --url wss://127.0.0.1:" + std::to_string(qim.port()) +
          " --token " + token_for("tls_alice", "d2") + " --to tls_bob 'unverified'");
  EXPECT_EQ(refused, 1) << why;
  EXPECT_NE(why.find("certificate verify failed"), std::string::npos) << why;

  // A fresh reader on another connection sees the four messages, in order, through SYNC.
  auto bob = Client::connect(tls_options(qim, dev_ca(qim)));
  ASSERT_TRUE(bob.ok()) << bob.error().to_string();
  ASSERT_TRUE((*bob)->auth(token_for("tls_bob", "d1")).ok());
  auto entries = sync_until(**bob, [](const std::vector<Entry>& e) { return e.size() >= 4; });
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].body, "over tls 0");
  EXPECT_EQ(entries[2].body, "over tls 2");
  EXPECT_EQ(entries[3].body, "from qimctl");
  EXPECT_EQ(entries[3].sender, "tls_alice");
}

TEST(TlsE2E, PlainAndUnverifiedClientsFailCleanlyAndTheServerKeepsServing) {
  QimProcess qim(QIM_BINARY, make_temp_dir("web-tls"), base_env());
  ASSERT_TRUE(qim.start({{"QIM_DEV_TLS", "1"}}).ok()) << qim.log_tail();

  client::ClientOptions plain;
  plain.port = qim.port();
  plain.timeout = 10s;
  auto ws = Client::connect(plain);  // ws:// to a wss:// port: the server's TLS handshake fails, it closes
  ASSERT_FALSE(ws.ok());
  EXPECT_EQ(ws.error().code(), Errc::kTransport);
  EXPECT_NE(ws.error().message().find("WebSocket handshake"), std::string::npos) << ws.error().message();

  auto unverified = Client::connect(tls_options(qim, ""));  // the system's trust store: not the dev cert
  ASSERT_FALSE(unverified.ok());
  EXPECT_NE(unverified.error().message().find("certificate verify failed"), std::string::npos)
      << unverified.error().message();

  auto ok = Client::connect(tls_options(qim, dev_ca(qim)));
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  auto auth = (*ok)->auth(token_for("tls_carol", "d1"));
  ASSERT_TRUE(auth.ok()) << auth.error().to_string();
  EXPECT_EQ(auth->user, "tls_carol");
}

TEST(TlsE2E, BadTlsConfigurationRefusesToStartNamingTheVariable) {
  const std::string dir = make_temp_dir("web-tls-bad");
  const std::string garbage = dir + "/garbage.pem";
  std::ofstream(garbage) << "not a certificate\n";
  struct Case {
    Env env;
    std::string expect;
  } cases[] = {
      {{{"QIM_TLS_CERT", garbage}}, "QIM_TLS_CERT is set but QIM_TLS_KEY is not"},
      {{{"QIM_TLS_CERT", garbage}, {"QIM_TLS_KEY", garbage}}, "QIM_TLS_CERT='" + garbage + "': not a PEM"},
      {{{"QIM_TLS_CERT", dir + "/none.pem"}, {"QIM_TLS_KEY", garbage}}, "no such file"},
      {{{"QIM_DEV_TLS", "1"}, {"QIM_TLS_CERT", garbage}, {"QIM_TLS_KEY", garbage}}, "--dev-tls"},
  };
  for (const auto& c : cases) {
    QimProcess qim(QIM_BINARY, make_temp_dir("web-tls-bad"), base_env());
    EXPECT_EQ(qim.run_expecting_exit(c.env, 30s), 2) << c.expect;
    EXPECT_NE(qim.log_tail().find(c.expect), std::string::npos) << qim.log_tail();
  }
  fs::remove_all(dir);
}

TEST(WebE2E, ThePageIsServedOnTheClientPortAndDevTokensOnlyWhenAsked) {
  const std::string web = make_temp_dir("web-files");
  std::ofstream(web + "/index.html") << "<!doctype html><title>QIM</title>";
  fs::create_directories(web + "/sdk");
  std::ofstream(web + "/sdk/index.js") << "export const x = 1;\n";
  std::ofstream(web + "/.secret") << "hidden";
  {
    QimProcess qim(QIM_BINARY, make_temp_dir("web-page"), base_env());
    ASSERT_TRUE(qim.start({{"QIM_WEB_DIR", web}}).ok()) << qim.log_tail();
    EXPECT_EQ(http_request(qim.port(), "GET", "/"), "200 <!doctype html><title>QIM</title>");
    EXPECT_EQ(http_request(qim.port(), "GET", "/sdk/index.js"), "200 export const x = 1;\n");
    EXPECT_EQ(http_request(qim.port(), "GET", "/.secret").substr(0, 3), "404");
    EXPECT_EQ(http_request(qim.port(), "GET", "/sdk/../.secret").substr(0, 3), "404");
    EXPECT_EQ(http_request(qim.port(), "GET", "/nothing.html").substr(0, 3), "404");
    // No token route unless asked for: the request falls through to the static files.
    EXPECT_EQ(http_request(qim.port(), "GET", "/dev/token?user=alice").substr(0, 3), "404");
    // The WebSocket still works on the same port.
    auto c = login_at(qim.port(), "web_dave");
    ASSERT_NE(c, nullptr);
  }
  {
    QimProcess qim(QIM_BINARY, make_temp_dir("web-page"), base_env());
    ASSERT_TRUE(qim.start({{"QIM_WEB_DEV_TOKENS", "1"}}).ok()) << qim.log_tail();
    EXPECT_EQ(http_request(qim.port(), "GET", "/").substr(0, 3), "426");  // no web dir: as before
    const std::string answer = http_request(qim.port(), "GET", "/dev/token?user=web%40erin&device=tab1");
    ASSERT_EQ(answer.substr(0, 4), "200 ") << answer;
    const size_t at = answer.find("\"token\":\"");
    ASSERT_NE(at, std::string::npos) << answer;
    const std::string token = answer.substr(at + 9, answer.find('"', at + 9) - at - 9);
    SystemClock clock;
    auto principal = verify_token(kSecret, token, clock);  // signed with the instance's secret
    ASSERT_TRUE(principal.ok()) << principal.error().to_string();
    EXPECT_EQ(principal->user.str(), "web@erin");
    EXPECT_EQ(principal->device.str(), "tab1");
    EXPECT_EQ(http_request(qim.port(), "GET", "/dev/token?user=bad:name").substr(0, 3), "400");
    EXPECT_EQ(http_request(qim.port(), "POST", "/dev/token?user=alice").substr(0, 3), "405");
  }
  fs::remove_all(web);
}

}  // namespace
}  // namespace qim::e2e
