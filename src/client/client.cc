#include "client/client.h"

#include "client/privacy_fields.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "tls/maybe_tls_stream.h"
#include "tls/tls_context.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace qim::client {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

struct Runtime::Impl {
  net::io_context io;
  net::executor_work_guard<net::io_context::executor_type> work = net::make_work_guard(io);
  std::vector<std::thread> threads;
};

Runtime::Runtime(unsigned threads) : impl_(std::make_unique<Impl>()) {
  for (unsigned i = 0; i < std::max(1u, threads); ++i)
    impl_->threads.emplace_back([this] { impl_->io.run(); });
}

Runtime::~Runtime() {
  impl_->work.reset();
  impl_->io.stop();
  for (auto& t : impl_->threads) t.join();
}

struct Client::Impl : std::enable_shared_from_this<Client::Impl> {
  Impl(Runtime& runtime, ClientOptions o, std::shared_ptr<net::ssl::context> tls_context)
      : options(std::move(o)),
        tls(std::move(tls_context)),
        ws(net::make_strand(runtime.impl().io), tls.get()) {
    if (options.on_frame) on_frame = std::make_shared<const FrameCallback>(options.on_frame);
  }
  using FrameCallback = std::function<void(std::string_view)>;
  std::shared_ptr<const FrameCallback> on_frame;  // guarded by mu

  ClientOptions options;
  std::shared_ptr<net::ssl::context> tls;  // before ws: the TLS stream refers to it
  websocket::stream<tls::MaybeTlsStream> ws;
  beast::flat_buffer in;
  std::deque<std::pair<std::string, bool>> out;  // (bytes, is_text)
  bool writing = false;
  bool close_sent = false;

  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<ServerFrame> frames;
  bool ended = false;
  int code = 0;
  std::string reason;
  std::string end_error;
  std::atomic<uint64_t> next_ref{1};

  void read() {
    ws.async_read(in, [self = shared_from_this()](beast::error_code ec, size_t n) { self->on_read(ec, n); });
  }

  void on_read(beast::error_code ec, size_t n) {
    if (ec) {
      end(ec);
      return;
    }
    std::string text = beast::buffers_to_string(in.data());
    in.consume(n);
    std::shared_ptr<const FrameCallback> callback;
    {
      std::lock_guard lock(mu);
      callback = on_frame;
    }
    if (callback) {
      (*callback)(text);
    } else {
      auto frame = parse_server_frame(text);
      std::lock_guard lock(mu);
      if (frame.ok()) {
        frames.push_back(std::move(frame).value());
      } else {
        ServerFrame bad;
        bad.type = "UNPARSEABLE";
        bad.raw = text;
        frames.push_back(std::move(bad));
      }
      cv.notify_all();
    }
    read();
  }

  void end(beast::error_code ec) {
    int c = 0;
    std::string r;
    {
      std::lock_guard lock(mu);
      if (ended) return;
      ended = true;
      code = ws.reason().code;
      reason = std::string(ws.reason().reason.c_str());
      end_error = ec.message();
      c = code;
      r = reason;
      cv.notify_all();
    }
    if (options.on_close) options.on_close(c, r);
  }

  void enqueue(std::string bytes, bool text) {
    net::post(ws.get_executor(), [self = shared_from_this(), bytes = std::move(bytes), text]() mutable {
      if (self->close_sent) return;
      self->out.emplace_back(std::move(bytes), text);
      if (!self->writing) self->write_next();
    });
  }

  void write_next() {
    if (out.empty()) {
      writing = false;
      return;
    }
    writing = true;
    ws.text(out.front().second);
    ws.async_write(net::buffer(out.front().first), [self = shared_from_this()](beast::error_code ec, size_t) {
      self->out.pop_front();
      if (ec) {
        self->out.clear();
        self->writing = false;
        return;
      }
      self->write_next();
    });
  }

  void start_close() {
    net::post(ws.get_executor(), [self = shared_from_this()] {
      if (self->close_sent || self->ended_locked()) return;
      self->close_sent = true;
      self->ws.async_close(websocket::close_code::normal, [self](beast::error_code) {});
    });
  }

  bool ended_locked() {
    std::lock_guard lock(mu);
    return ended;
  }

  Error closed_error() const {
    return Error(Errc::kTransport, "connection closed (close code " + std::to_string(code) + ", reason '" +
                                       reason + "', " + end_error + ")");
  }
};

Result<std::unique_ptr<Client>> Client::connect(const ClientOptions& options,
                                                std::shared_ptr<Runtime> runtime) {
  if (!runtime) runtime = std::make_shared<Runtime>(1);
  std::shared_ptr<net::ssl::context> tls_context;
  if (options.tls) {
    auto made = tls::client_context(options.ca_file);
    if (!made.ok()) return made.error();
    tls_context = std::move(made).value();
  }
  auto impl = std::make_shared<Impl>(*runtime, options, std::move(tls_context));
  const std::string where = options.host + ":" + std::to_string(options.port);
  beast::error_code ec;
  auto ip = net::ip::make_address(options.host, ec);
  if (ec) return Error(Errc::kInvalidArgument, "client: host '" + options.host + "' is not an IP address");
  // The handshake runs on the caller's thread before any asynchronous operation exists on the stream.
  auto& tcp = beast::get_lowest_layer(impl->ws);
  tcp.socket().connect(net::ip::tcp::endpoint(ip, options.port), ec);
  if (ec) return Error(Errc::kTransport, "client: connect to " + where + ": " + ec.message());
  tcp.socket().set_option(net::ip::tcp::no_delay(true), ec);
  if (Status s = impl->ws.next_layer().client_handshake(options.host); !s.ok())
    return Error(Errc::kTransport, "client: " + where + ": " + s.error().message());
  impl->ws.handshake(where, options.target, ec);
  if (ec) return Error(Errc::kTransport, "client: WebSocket handshake with " + where + ": " + ec.message());
  impl->ws.read_message_max(kMaxServerFrameBytes);
  net::post(impl->ws.get_executor(), [impl] { impl->read(); });
  return std::unique_ptr<Client>(new Client(std::move(runtime), std::move(impl)));
}

Client::~Client() {
  impl_->start_close();
  // Give the close handshake a moment, so the server sees a clean close rather than a reset.
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait_for(lock, std::chrono::milliseconds(500), [this] { return impl_->ended; });
  lock.unlock();
  net::post(impl_->ws.get_executor(), [impl = impl_] {
    beast::error_code ignored;
    beast::get_lowest_layer(impl->ws).socket().close(ignored);
  });
  // Handlers hold the Impl; wait (bounded) until they have let go, so it dies before a runtime we own.
  for (int i = 0; i < 200 && impl_.use_count() > 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

void Client::set_on_frame(std::function<void(std::string_view frame)> on_frame) {
  std::lock_guard lock(impl_->mu);
  impl_->on_frame = std::make_shared<const Impl::FrameCallback>(std::move(on_frame));
}

void Client::send_text(std::string text) {
  impl_->enqueue(std::move(text), true);
}
void Client::send_binary(std::string bytes) {
  impl_->enqueue(std::move(bytes), false);
}

Result<ServerFrame> Client::wait_for(const Pred& pred, std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->mu);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    for (auto it = impl_->frames.begin(); it != impl_->frames.end(); ++it) {
      if (pred(*it)) {
        ServerFrame f = std::move(*it);
        impl_->frames.erase(it);
        return f;
      }
    }
    if (impl_->ended) return impl_->closed_error();
    if (impl_->cv.wait_until(lock, deadline) == std::cv_status::timeout) {
      for (auto it = impl_->frames.begin(); it != impl_->frames.end(); ++it) {
        if (pred(*it)) {
          ServerFrame f = std::move(*it);
          impl_->frames.erase(it);
          return f;
        }
      }
      return Error(Errc::kTimeout, "no matching frame within " + std::to_string(timeout.count()) + " ms");
    }
  }
}

Result<ServerFrame> Client::wait_type(std::string_view type, std::chrono::milliseconds timeout) {
  std::string t(type);
  return wait_for([t](const ServerFrame& f) { return f.type == t; }, timeout);
}

Result<ServerFrame> Client::wait_ref(std::string_view ref, std::chrono::milliseconds timeout) {
  std::string r(ref);
  return wait_for([r](const ServerFrame& f) { return f.ref == r; }, timeout);
}

size_t Client::queued() const {
  std::lock_guard lock(impl_->mu);
  return impl_->frames.size();
}

Result<ServerFrame> Client::request(std::string frame, const std::string& ref) {
  send_text(std::move(frame));
  auto reply = wait_ref(ref, impl_->options.timeout);
  if (!reply.ok()) return reply;
  if (reply->type == "ERROR") {
    Errc errc = reply->code == "UNAUTHENTICATED"  ? Errc::kUnauthenticated
                : reply->code == "FORBIDDEN"      ? Errc::kPermissionDenied
                : reply->code == "EXPIRED_CURSOR" ? Errc::kExpiredCursor
                                                  : Errc::kInvalidArgument;
    return Error(errc, reply->code + ": " + reply->message);
  }
  return reply;
}

namespace {
std::string ref_of(std::atomic<uint64_t>& next) {
  return "r" + std::to_string(next.fetch_add(1));
}
}  // namespace

Result<ServerFrame> Client::auth(std::string_view token) {
  auto ref = ref_of(impl_->next_ref);
  return request(auth_frame(token, ref), ref);
}

Result<ServerFrame> Client::send(std::string_view to, std::string_view client_msg_id, std::string_view body) {
  auto ref = ref_of(impl_->next_ref);
  return request(send_frame(to, client_msg_id, body, ref), ref);
}

Result<ServerFrame> Client::send_to_conversation(std::string_view conversation,
                                                 std::string_view client_msg_id, std::string_view body) {
  auto ref = ref_of(impl_->next_ref);
  return request(send_to_conversation_frame(conversation, client_msg_id, body, ref), ref);
}

Result<ServerFrame> Client::reply(std::string_view conversation, std::string_view client_msg_id,
                                  std::string_view body, uint64_t reply_to) {
  auto ref = ref_of(impl_->next_ref);
  return request(reply_frame(conversation, client_msg_id, body, reply_to, ref), ref);
}

Result<ServerFrame> Client::edit(std::string_view conversation, uint64_t message_id,
                                 std::string_view client_msg_id, std::string_view body) {
  auto ref = ref_of(impl_->next_ref);
  return request(edit_frame(conversation, message_id, client_msg_id, body, ref), ref);
}

Result<ServerFrame> Client::recall(std::string_view conversation, uint64_t message_id,
                                   std::string_view client_msg_id) {
  auto ref = ref_of(impl_->next_ref);
  return request(recall_frame(conversation, message_id, client_msg_id, ref), ref);
}

Result<ServerFrame> Client::react(std::string_view conversation, uint64_t message_id,
                                  std::string_view client_msg_id, std::string_view emoji, bool remove) {
  auto ref = ref_of(impl_->next_ref);
  return request(react_frame(conversation, message_id, client_msg_id, emoji, remove, ref), ref);
}

Result<ServerFrame> Client::sync(uint64_t after, uint32_t limit) {
  auto ref = ref_of(impl_->next_ref);
  return request(sync_frame(after, limit, ref), ref);
}

Result<ServerFrame> Client::history(std::string_view conversation, std::optional<uint64_t> before,
                                    uint32_t limit) {
  auto ref = ref_of(impl_->next_ref);
  return request(history_frame(conversation, before, limit, ref), ref);
}

Result<ServerFrame> Client::group(std::string_view type, const GroupRequestFields& fields) {
  auto ref = ref_of(impl_->next_ref);
  return request(group_frame(type, fields, ref), ref);
}

Result<ServerFrame> Client::read(std::string_view conversation, uint64_t seq) {
  auto ref = ref_of(impl_->next_ref);
  return request(read_frame(conversation, seq, ref), ref);
}

Result<ServerFrame> Client::conversations(std::optional<uint64_t> before, uint32_t limit) {
  auto ref = ref_of(impl_->next_ref);
  return request(conversations_frame(before, limit, ref), ref);
}

Result<ServerFrame> Client::receipts(std::string_view conversation, uint64_t message_id) {
  auto ref = ref_of(impl_->next_ref);
  return request(receipts_frame(conversation, message_id, ref), ref);
}

Result<ServerFrame> Client::settings(const SettingsFields& fields) {
  auto ref = ref_of(impl_->next_ref);
  return request(settings_frame(fields, ref), ref);
}

Result<ServerFrame> Client::block(std::string_view user, bool blocked) {
  auto ref = ref_of(impl_->next_ref);
  return request(block_frame(user, blocked, ref), ref);
}

Result<ServerFrame> Client::blocks() {
  auto ref = ref_of(impl_->next_ref);
  return request(blocks_frame(ref), ref);
}

Result<ServerFrame> Client::mute(std::string_view conversation, bool muted, std::optional<int64_t> until_ms) {
  auto ref = ref_of(impl_->next_ref);
  return request(mute_frame(conversation, muted, until_ms, ref), ref);
}

Result<ServerFrame> Client::delete_for_me(std::string_view conversation, std::optional<uint64_t> message_id) {
  auto ref = ref_of(impl_->next_ref);
  return request(delete_for_me_frame(conversation, message_id, ref), ref);
}

bool Client::closed() const {
  std::lock_guard lock(impl_->mu);
  return impl_->ended;
}

int Client::close_code() const {
  std::lock_guard lock(impl_->mu);
  return impl_->code;
}

std::string Client::close_reason() const {
  std::lock_guard lock(impl_->mu);
  return impl_->reason;
}

void Client::close() {
  impl_->start_close();
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait_for(lock, impl_->options.timeout, [this] { return impl_->ended; });
}

}  // namespace qim::client
