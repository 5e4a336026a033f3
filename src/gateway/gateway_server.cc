// make_gateway: the acceptor, the io threads, the admin server, and start/stop around the connections.
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <filesystem>
#include <thread>

#include "core/cpu_placement.h"
#include "core/thread_name.h"
#include "gateway/admin_server.h"
#include "gateway/connection.h"
#include "gateway/gateway_context.h"
#include "outbox/outbox_record.h"
#include "sessions/revocation_watcher.h"
#include "tls/tls_context.h"

namespace qim {

namespace net = boost::asio;

std::string_view delivery_mode_name(DeliveryMode mode) {
  switch (mode) {
    case DeliveryMode::kHybrid:
      return "hybrid";
    case DeliveryMode::kPush:
      return "push";
    case DeliveryMode::kPull:
      return "pull";
  }
  return "hybrid";
}

namespace {

Result<DeliveryMode> parse_delivery_mode(const std::string& s) {
  if (s == "hybrid") return DeliveryMode::kHybrid;
  if (s == "push") return DeliveryMode::kPush;
  if (s == "pull") return DeliveryMode::kPull;
  return Error(Errc::kConfig, "QIM_DELIVERY_MODE='" + s + "': expected hybrid, push or pull");
}

Status check_options(const GatewayOptions& o, const GatewayDeps& d) {
  if (o.auth_secret.empty()) return Error(Errc::kConfig, "QIM_AUTH_SECRET is required and must not be empty");
  if (d.outbox == nullptr || d.mailbox == nullptr || !d.clock)
    return Error(Errc::kConfig, "the gateway needs an Outbox log, a mailbox store and a clock");
  if (o.max_body_bytes == 0 || o.max_body_bytes > kMaxBodyBytes)
    return Error(Errc::kConfig, "max body bytes must be 1.." + std::to_string(kMaxBodyBytes));
  if (o.max_frame_bytes < 1024) return Error(Errc::kConfig, "max frame bytes must be at least 1024");
  if (o.max_frames_per_second == 0 || o.max_connections == 0 || o.threads == 0 || o.threads > 64 ||
      o.blocking_threads == 0 || o.blocking_threads > 64 || o.max_outbound_frames == 0 ||
      o.max_outbound_bytes < o.max_frame_bytes || o.auth_timeout_ms <= 0 || o.dedup_capacity == 0 ||
      o.dedup_window_ms <= 0 || o.max_pending_per_connection == 0 || o.pending_deadline_ms <= 0 ||
      o.group_apply_wait_ms <= 0)
    return Error(Errc::kConfig,
                 "gateway limits must be positive (threads and blocking threads at most 64, outbound bytes "
                 "at least a frame)");
  return {};
}

class GatewayServer final : public Gateway {
 public:
  GatewayServer(GatewayOptions options, GatewayDeps deps)
      : options_(std::move(options)), deps_(std::move(deps)) {
    // The context (and its notifier) exists from construction, so the node can be wired before start();
    // a bad mode is reported by start().
    auto mode = parse_delivery_mode(options_.delivery_mode);
    ctx_ = std::make_unique<GatewayContext>(options_, deps_, mode.ok() ? *mode : DeliveryMode::kHybrid);
  }
  ~GatewayServer() override { stop(); }

  Status start() override {
    if (started_) return Error(Errc::kInvariant, "gateway already started");
    QIM_RETURN_IF_ERROR(check_options(options_, deps_));
    QIM_RETURN_IF_ERROR(parse_delivery_mode(options_.delivery_mode));
    if (!options_.tls_cert_file.empty() || !options_.tls_key_file.empty()) {
      QIM_ASSIGN_OR_RETURN(ctx_->tls, tls::server_context(options_.tls_cert_file, options_.tls_key_file));
    }
    if (!options_.web_dir.empty()) {
      std::error_code ec;
      if (!std::filesystem::is_directory(options_.web_dir, ec))
        return Error(Errc::kConfig, "QIM_WEB_DIR='" + options_.web_dir + "': no such directory");
    }
    QIM_RETURN_IF_ERROR(rebuild_dedup());
    QIM_RETURN_IF_ERROR(bind_acceptor(acceptor_, options_.listen_address, options_.port, "gateway"));
    port_ = acceptor_.local_endpoint().port();
    GatewayContext* ctx = ctx_.get();
    auto extra = deps_.extra_metrics;
    admin_ = std::make_unique<AdminServer>(
        io_,
        [ctx, extra] {
          std::string text = ctx->metrics.serialize();
          if (ctx->own_signals) text += ctx->own_signals->metrics_text();
          text += ctx->presence->metrics_text();
          if (extra) text += extra();
          return text;
        },
        deps_.admin_routes);
    QIM_RETURN_IF_ERROR(admin_->listen(options_.admin_address, options_.admin_port));
    if (deps_.sessions != nullptr) {
      // The catch-up on revocations whose push this gateway missed (sessions/revocation_watcher.h).
      watcher_ = std::make_unique<RevocationWatcher>(
          *deps_.sessions,
          [ctx](const UserId& user, const RevocationMarks& marks) {
            ctx->registry.apply_revocation(user, marks);
          },
          [ctx] { return ctx->registry.users(); }, std::chrono::milliseconds(options_.session_recheck_ms));
      watcher_->start();
    }
    do_accept();
    for (uint32_t i = 0; i < options_.threads; ++i) {
      threads_.emplace_back([this, i] {
        set_thread_name("gateway-io" + std::to_string(i));
        if (Status s = pin_current_thread(options_.io_cpus); !s.ok())
          spdlog::warn("gateway: I/O thread {} runs unplaced: {}", i, s.error().to_string());
        io_.run();
      });
    }
    started_ = true;
    spdlog::info("gateway: listening on {}:{} ({}; admin {}:{}), delivery {}", options_.listen_address, port_,
                 ctx_->tls ? "wss:// only" : "ws://", options_.admin_address, admin_->port(),
                 options_.delivery_mode);
    return {};
  }

  void stop() override {
    if (!started_ || stopped_) return;
    stopped_ = true;
    net::post(acceptor_.get_executor(), [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
    });
    admin_->close();
    if (watcher_) watcher_->stop();
    {
      // Every SEND whose append is in flight gets its answer before the connections close.
      std::unique_lock lock(ctx_->drain_mu);
      ctx_->drained.wait_for(lock, std::chrono::seconds(30),
                             [this] { return ctx_->in_flight_sends.load() == 0; });
    }
    for (auto& c : ctx_->registry.all_open()) c->shutdown("server shutting down");
    for (int i = 0; i < 200 && ctx_->open_connections.load() > 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    // Every pool stops (what is queued is dropped, what runs finishes) while the io_context its tasks post
    // their answers to still exists: it goes before ctx_ (members are destroyed in reverse order).
    ctx_->blocking.stop();
    ctx_->group_ops.stop();
    io_.stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  uint16_t port() const override { return port_; }
  uint16_t admin_port() const override { return admin_ ? admin_->port() : 0; }
  DeliveryNotifier& notifier() override { return ctx_->registry; }
  SignalSink& signal_sink() override { return ctx_->registry; }
  SignalBus& signals() override { return *ctx_->signals; }
  attachments::AttachmentService* attachments() override { return ctx_->attachments.get(); }

 private:
  // Refills the idempotency table from the Outbox tail, so a retry after a restart still finds its
  // original message (see send_dedup.h).
  Status rebuild_dedup() {
    Log& log = *deps_.outbox;
    const uint32_t partitions = log.partition_count();
    const uint64_t per_partition = std::max<uint64_t>(1, options_.dedup_capacity / std::max(1u, partitions));
    const int64_t oldest = deps_.clock->now_ms() - options_.dedup_window_ms;
    size_t restored = 0;
    for (uint32_t p = 0; p < partitions; ++p) {
      QIM_ASSIGN_OR_RETURN(Offset end, log.end_offset(p));
      Offset next{end.value > per_partition ? end.value - per_partition : 0};
      while (next < end) {
        QIM_ASSIGN_OR_RETURN(auto batch, log.read(p, next, 1024, std::chrono::milliseconds(0)));
        if (batch.empty()) break;
        for (const auto& rec : batch) {
          next = Offset{rec.offset.value + 1};
          auto r = decode_outbox_record(rec.value);
          if (!r.ok()) {
            spdlog::warn("gateway: Outbox {}@{} does not decode, skipped for dedup: {}", p, rec.offset.value,
                         r.error().message());
            continue;
          }
          if (r->server_time_ms < oldest || r->client_msg_id.empty() || r->group_op) continue;
          ctx_->dedup->record(SendDedup::key_of(r->sender, r->client_msg_id),
                              SentMessage{message_id_of(p, rec.offset), r->conversation, r->server_time_ms,
                                          send_fingerprint(r->conversation, r->body)});
          ++restored;
        }
      }
    }
    if (restored > 0) spdlog::info("gateway: {} SEND idempotency keys restored from the Outbox", restored);
    return {};
  }

  void do_accept() {
    acceptor_.async_accept(
        net::make_strand(io_), [this](boost::system::error_code ec, net::ip::tcp::socket s) {
          if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
          if (ec) {
            // E.g. out of file descriptors: back off briefly instead of spinning.
            spdlog::warn("gateway: accept failed: {}", ec.message());
            auto timer = std::make_shared<net::steady_timer>(io_, std::chrono::milliseconds(50));
            timer->async_wait([this, timer](boost::system::error_code) { do_accept(); });
            return;
          }
          // Small frames (SEND_ACK, DELIVER) must not wait for Nagle behind the client's delayed ACK.
          boost::system::error_code nodelay_ec;
          s.set_option(net::ip::tcp::no_delay(true), nodelay_ec);
          std::make_shared<Connection>(std::move(s), *ctx_, next_id_++)->start();
          do_accept();
        });
  }

  GatewayOptions options_;
  GatewayDeps deps_;
  std::unique_ptr<GatewayContext> ctx_;  // declared before io_: connections in io_'s queue refer to it
  net::io_context io_;
  net::ip::tcp::acceptor acceptor_{net::make_strand(io_)};
  std::unique_ptr<AdminServer> admin_;
  std::unique_ptr<RevocationWatcher> watcher_;  // with deps.sessions
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  uint64_t next_id_ = 1;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace

std::unique_ptr<Gateway> make_gateway(GatewayOptions options, GatewayDeps deps) {
  return std::make_unique<GatewayServer>(std::move(options), std::move(deps));
}

}  // namespace qim
