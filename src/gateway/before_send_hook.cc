// The HTTP before-send hook (before_send_hook.h): a FairPool of workers, one lane per (sender, device), each
// call a signed POST on a kept-alive connection taken from a small free list.
#include "gateway/before_send_hook.h"

#include <fmt/format.h>
#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <ctime>
#include <mutex>
#include <random>
#include <vector>

#include "gateway/fair_pool.h"
#include "gateway/protocol/json_writer.h"
#include "webhooks/hook_sender.h"
#include "webhooks/signature.h"

namespace qim {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

Result<std::string> before_send_verdict(std::string_view answer, std::string body, size_t max_body_bytes) {
  if (answer.find_first_not_of(" \t\r\n") == std::string_view::npos) return body;  // empty: allow
  simdjson::dom::parser parser;
  simdjson::padded_string padded(answer);
  simdjson::dom::element root;
  if (parser.parse(padded).get(root) != simdjson::SUCCESS || !root.is_object())
    return Error(Errc::kInvalidArgument, "the hook's answer is not a JSON object");
  std::string_view action;
  if (root["action"].get_string().get(action) != simdjson::SUCCESS)
    return Error(Errc::kInvalidArgument, "the hook's answer has no string 'action'");
  if (action == "allow") return body;
  if (action == "reject") {
    std::string_view reason = "rejected by the before-send hook";
    if (auto r = root["reason"]; r.error() == simdjson::SUCCESS) {
      if (r.get_string().get(reason) != simdjson::SUCCESS)
        return Error(Errc::kInvalidArgument, "the hook's 'reason' is not a string");
    }
    return Error(kBeforeSendRejected, std::string(reason.substr(0, 1024)));
  }
  if (action == "replace") {
    std::string_view replaced;
    if (root["body"].get_string().get(replaced) != simdjson::SUCCESS)
      return Error(Errc::kInvalidArgument, "the hook's 'replace' has no string 'body'");
    // Validated as a SEND's body (docs/protocol.md): not empty, within the gateway's limit.
    if (replaced.empty()) return Error(Errc::kInvalidArgument, "the hook's replacement body is empty");
    if (replaced.size() > max_body_bytes)
      return Error(Errc::kInvalidArgument,
                   fmt::format("the hook's replacement body is {} bytes, over the limit of {}",
                               replaced.size(), max_body_bytes));
    return std::string(replaced);
  }
  return Error(Errc::kInvalidArgument, "the hook's 'action' is '" + std::string(action.substr(0, 64)) +
                                           "', not allow, reject or replace");
}

namespace {

// One kept-alive HTTP/1.1 connection to the hook; used by one worker at a time.
class HookConnection {
 public:
  HookConnection(const HookUrl& url, std::chrono::milliseconds timeout) : url_(url), timeout_(timeout) {}

  // The 2xx answer's body; Transport (no connection, another status) or Timeout.
  Result<std::string> post(const std::string& id, int64_t timestamp, const std::string& signature,
                           const std::string& body) {
    auto out = attempt(id, timestamp, signature, body);
    // A kept-alive connection the hook closed while idle fails the first write: one fresh try.
    if (!out.ok() && reused_ && out.code() == Errc::kTransport) out = attempt(id, timestamp, signature, body);
    return out;
  }

 private:
  // Each step is asynchronous on this worker's own io_context, run until it completes: the stream's expiry
  // (beast applies it to asynchronous operations only) then cancels a step that outlives the timeout.
  template <typename Start>
  beast::error_code run(Start start) {
    beast::error_code ec = net::error::would_block;
    start(ec);
    io_.restart();
    io_.run();
    return ec;
  }

  Result<std::string> attempt(const std::string& id, int64_t timestamp, const std::string& signature,
                              const std::string& body) {
    beast::error_code ec;
    reused_ = stream_.has_value();
    if (!stream_) {
      stream_.emplace(io_);
      net::ip::tcp::resolver resolver(io_);
      auto endpoints = resolver.resolve(url_.host, std::to_string(url_.port), ec);
      if (ec) return fail(ec, "cannot resolve the hook");
      stream_->expires_after(timeout_);
      ec = run([&](beast::error_code& out) {
        stream_->async_connect(endpoints, [&out](beast::error_code e, const auto&) { out = e; });
      });
      if (ec) return fail(ec, "cannot connect to the hook");
    }
    stream_->expires_after(timeout_);
    http::request<http::string_body> req(http::verb::post, url_.target, 11);
    req.set(http::field::host, url_.host + ":" + std::to_string(url_.port));
    req.set(http::field::content_type, "application/json");
    req.set(http::field::user_agent, "qim-before-send/1");
    req.set("webhook-id", id);
    req.set("webhook-timestamp", std::to_string(timestamp));
    req.set("webhook-signature", signature);
    req.keep_alive(true);
    req.body() = body;
    req.prepare_payload();
    ec = run([&](beast::error_code& out) {
      http::async_write(*stream_, req, [&out](beast::error_code e, size_t) { out = e; });
    });
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    if (!ec) {
      ec = run([&](beast::error_code& out) {
        http::async_read(*stream_, buffer, res, [&out](beast::error_code e, size_t) { out = e; });
      });
    }
    if (ec) return fail(ec, "the hook did not answer");
    reused_ = false;
    if (!res.keep_alive()) stream_.reset();
    const unsigned status = res.result_int();
    if (status < 200 || status > 299)
      return Error(Errc::kTransport, fmt::format("the hook answered {}", status));
    return std::move(res.body());
  }

  Error fail(const beast::error_code& ec, const std::string& what) {
    stream_.reset();
    return Error(ec == beast::error::timeout ? Errc::kTimeout : Errc::kTransport, what + ": " + ec.message());
  }

  const HookUrl& url_;
  std::chrono::milliseconds timeout_;
  net::io_context io_;
  std::optional<beast::tcp_stream> stream_;
  bool reused_ = false;
};

class HttpBeforeSendHook final : public BeforeSendHook {
 public:
  HttpBeforeSendHook(BeforeSendConfig config, HookUrl url)
      : config_(std::move(config)), url_(std::move(url)), pool_("before-send", config_.workers) {
    std::random_device rd;
    id_prefix_ = fmt::format("bs_{:08x}{:08x}_", rd(), rd());
  }
  ~HttpBeforeSendHook() override { pool_.stop(); }

  void check(BeforeSendCall call, BeforeSendDone done) override {
    if (pending_.fetch_add(1) >= config_.max_pending) {
      pending_.fetch_sub(1);
      done(Error(Errc::kResourceExhausted,
                 fmt::format("over {} SENDs wait for the before-send hook (QIM_BEFORE_SEND_MAX_PENDING); "
                             "nothing was stored, retry later",
                             config_.max_pending)));
      return;
    }
    const uint64_t lane = std::hash<std::string>{}(call.sender.str() + '\0' + call.device.str());
    auto shared =
        std::make_shared<std::pair<BeforeSendCall, BeforeSendDone>>(std::move(call), std::move(done));
    FairPool::Task task;
    // A call that waited its timeout for a worker is the hook's failure too (the policy decides): the
    // client's SEND_ACK deadline would pass otherwise.
    task.deadline = FairPool::Clock::now() + config_.timeout;
    task.run = [this, shared] {
      auto outcome = decide(shared->first, ask(shared->first));
      pending_.fetch_sub(1);
      shared->second(std::move(outcome));
    };
    task.expired = [this, shared] {
      auto outcome = decide(shared->first, Error(Errc::kTimeout, "no worker was free for the hook in time"));
      pending_.fetch_sub(1);
      shared->second(std::move(outcome));
    };
    if (!pool_.submit(lane, std::move(task))) {
      pending_.fetch_sub(1);
      shared->second(Error(Errc::kTransport, "the gateway is stopping"));
    }
  }

  void stop() override { pool_.stop(); }
  // A worker within the timeout, then the call's own timeout (connect, send, answer; a retry on a stale
  // kept-alive connection is a fresh connect), with room for the answer's trip back.
  std::chrono::milliseconds bound() const override { return 3 * config_.timeout; }

 private:
  // The hook's answer to `call`: the body to append, Rejected, or the hook's failure.
  Result<std::string> ask(const BeforeSendCall& call) {
    JsonWriter w;
    w.begin_object();
    w.field("version", int64_t{1});
    w.field("type", "message.before_send");
    w.field("conversation", call.conversation.str());
    w.field("sender", call.sender.str());
    w.field("sender_device", call.device.str());
    w.field("client_msg_id", call.client_msg_id);
    w.field("body", call.body);
    w.end_object();
    const std::string payload = w.take();
    const std::string id = id_prefix_ + std::to_string(serial_.fetch_add(1));
    const int64_t ts = static_cast<int64_t>(std::time(nullptr));
    const std::string signature = webhook_signature(config_.key, id, ts, payload);
    std::unique_ptr<HookConnection> conn = take_connection();
    Result<std::string> answer = conn->post(id, ts, signature, payload);
    give_back(std::move(conn));
    if (!answer.ok()) return answer.error();
    return before_send_verdict(*answer, call.body, config_.max_body_bytes);
  }

  // The policy applied to a failed call (Rejected is the hook's verdict, not a failure).
  Result<std::string> decide(const BeforeSendCall& call, Result<std::string> outcome) {
    if (outcome.ok() || outcome.code() == kBeforeSendRejected) return outcome;
    failures_.fetch_add(1);
    if (config_.policy == BeforeSendPolicy::kOpen) {
      spdlog::warn("before-send hook failed for {} of {} ({}); allowed (QIM_BEFORE_SEND_POLICY=open)",
                   call.client_msg_id, call.sender.str(), outcome.error().message());
      return call.body;
    }
    const Errc code = outcome.code() == Errc::kTimeout ? Errc::kTimeout : Errc::kTransport;
    return Error(code, "the before-send hook failed (" + outcome.error().message() +
                           ") and QIM_BEFORE_SEND_POLICY=closed: nothing was stored, retry later");
  }

  std::unique_ptr<HookConnection> take_connection() {
    std::lock_guard lock(mu_);
    if (free_.empty()) return std::make_unique<HookConnection>(url_, config_.timeout);
    auto c = std::move(free_.back());
    free_.pop_back();
    return c;
  }
  void give_back(std::unique_ptr<HookConnection> c) {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(c));
  }

  const BeforeSendConfig config_;
  const HookUrl url_;
  std::string id_prefix_;
  std::atomic<uint64_t> serial_{0};
  std::atomic<size_t> pending_{0};
  std::atomic<uint64_t> failures_{0};
  std::mutex mu_;
  std::vector<std::unique_ptr<HookConnection>> free_;
  FairPool pool_;  // last: stopped (joined) first, while the members its tasks use still live
};

Result<int64_t> int_var(const char* var, const std::string& value, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi)
    return Error(Errc::kConfig, fmt::format("{}='{}': expected an integer in {}..{}", var, value, lo, hi));
  return v;
}

}  // namespace

Result<std::optional<BeforeSendConfig>> before_send_config_from_env(const EnvLookup& getenv) {
  auto url = getenv("QIM_BEFORE_SEND_URL");
  if (!url || url->empty()) return std::optional<BeforeSendConfig>{};
  BeforeSendConfig c;
  c.url = *url;
  auto secret = getenv("QIM_BEFORE_SEND_SECRET");
  if (!secret || secret->empty())
    return Error(Errc::kConfig,
                 "QIM_BEFORE_SEND_SECRET is required with QIM_BEFORE_SEND_URL (whsec_<base64>)");
  auto key = decode_webhook_secret(*secret);
  if (!key.ok()) return Error(Errc::kConfig, "QIM_BEFORE_SEND_SECRET: " + key.error().message());
  c.key = *key;
  if (auto v = getenv("QIM_BEFORE_SEND_TIMEOUT_MS")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, int_var("QIM_BEFORE_SEND_TIMEOUT_MS", *v, 1, 60'000));
    c.timeout = std::chrono::milliseconds(n);
  }
  if (auto v = getenv("QIM_BEFORE_SEND_POLICY")) {
    if (*v == "open") {
      c.policy = BeforeSendPolicy::kOpen;
    } else if (*v == "closed") {
      c.policy = BeforeSendPolicy::kClosed;
    } else {
      return Error(Errc::kConfig, "QIM_BEFORE_SEND_POLICY='" + *v + "': expected open or closed");
    }
  }
  if (auto v = getenv("QIM_BEFORE_SEND_WORKERS")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, int_var("QIM_BEFORE_SEND_WORKERS", *v, 1, 256));
    c.workers = static_cast<uint32_t>(n);
  }
  if (auto v = getenv("QIM_BEFORE_SEND_MAX_PENDING")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, int_var("QIM_BEFORE_SEND_MAX_PENDING", *v, 1, 1'000'000));
    c.max_pending = static_cast<size_t>(n);
  }
  return std::optional<BeforeSendConfig>(std::move(c));
}

Result<std::unique_ptr<BeforeSendHook>> make_http_before_send_hook(BeforeSendConfig config) {
  auto url = parse_hook_url(config.url, "QIM_BEFORE_SEND_URL");
  if (!url.ok()) return url.error();
  return std::unique_ptr<BeforeSendHook>(
      std::make_unique<HttpBeforeSendHook>(std::move(config), *std::move(url)));
}

}  // namespace qim
