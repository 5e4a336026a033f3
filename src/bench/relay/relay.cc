#include "bench/relay/relay.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "auth/token.h"
#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/server_frame.h"

namespace qim::relay {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

class Session;

struct Relay::Impl {
  Impl(RelayOptions o, std::shared_ptr<const Clock> c) : options(std::move(o)), clock(std::move(c)) {}

  // One user's in-memory mailbox position and live connections. The sequence is taken and the DELIVER
  // queued under the shard's mutex, so a user's pushes reach each connection in seq order (a
  // connection's strand runs what is posted to it in order).
  struct UserSlot {
    uint64_t seq = 0;
    std::vector<std::pair<uint64_t, std::weak_ptr<Session>>> connections;  // (session id, session)
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, UserSlot> users;
  };
  Shard& shard_of(const UserId& user) { return shards[std::hash<std::string>{}(user.str()) % shards.size()]; }

  void add(const UserId& user, uint64_t id, std::weak_ptr<Session> session) {
    Shard& s = shard_of(user);
    std::lock_guard lock(s.mu);
    s.users[user.str()].connections.emplace_back(id, std::move(session));
  }
  void remove(const UserId& user, uint64_t id) {
    Shard& s = shard_of(user);
    std::lock_guard lock(s.mu);
    auto it = s.users.find(user.str());
    if (it == s.users.end()) return;
    std::erase_if(it->second.connections, [id](const auto& c) { return c.first == id; });
  }
  // Gives `user` the next seq of its mailbox and pushes `message` to each of its live connections.
  void deliver(const UserId& user, const Message& message);

  const RelayOptions options;
  const std::shared_ptr<const Clock> clock;
  std::atomic<uint64_t> next_message_id{1}, next_session_id{1};
  std::atomic<uint64_t> connections{0}, sends{0}, delivers{0};
  // Declared before io: handlers the io_context destroys may still remove their sessions from here.
  std::array<Shard, 16> shards;
  net::io_context io;
  tcp::acceptor acceptor{io};
  std::vector<std::thread> threads;

  void do_accept();
};

// One client connection; everything it does runs on its strand.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Relay::Impl& relay)
      : relay_(relay), id_(relay.next_session_id.fetch_add(1)), ws_(std::move(socket)) {}
  ~Session() {
    if (principal_) relay_.remove(principal_->user, id_);
  }

  void start() {
    net::dispatch(ws_.get_executor(), [self = shared_from_this()] {
      self->ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
      self->ws_.read_message_max(self->relay_.options.max_frame_bytes);
      self->ws_.async_accept([self](beast::error_code ec) {
        if (ec) return;
        self->relay_.connections.fetch_add(1, std::memory_order_relaxed);
        self->do_read();
      });
    });
  }

  // Queues a frame from any thread.
  void push(std::shared_ptr<const std::string> frame) {
    net::post(ws_.get_executor(),
              [self = shared_from_this(), f = std::move(frame)]() mutable { self->enqueue(std::move(f)); });
  }

 private:
  void do_read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) return;  // closed, or Beast refused the frame (over the size: 1009)
    std::string text = beast::buffers_to_string(in_.data());
    in_.consume(in_.size());
    if (!ws_.got_text()) {
      if (!principal_) return refuse_before_auth("", "a binary frame");
      reply_error("", WireCode::kBadFrame,
                  "binary frames are not part of the protocol; send JSON text frames");
    } else {
      handle_frame(text);
    }
    if (!closing_) do_read();
  }

  void handle_frame(std::string_view text) {
    auto parsed = parser_.parse(text, FrameLimits{relay_.options.max_body_bytes});
    if (auto* err = std::get_if<FrameError>(&parsed)) {
      if (!principal_ && !err->auth)
        return refuse_before_auth(err->ref, "a refused frame (" + err->message + ")");
      reply_error(err->ref, err->code, err->message);
      if (!principal_) close_after_flush(websocket::close_code::policy_error, "the first frame must be AUTH");
      return;
    }
    auto& frame = std::get<ClientFrame>(parsed);
    if (auto* auth = std::get_if<AuthFrame>(&frame.body)) return handle_auth(frame.ref, *auth);
    if (!principal_) return refuse_before_auth(frame.ref, "another frame");
    if (relay_.clock->now_ms() >= principal_->expires_at_ms) {
      reply_error(frame.ref, WireCode::kUnauthenticated, "token expired; reconnect with a new token");
      return close_after_flush(websocket::close_code::policy_error, "token expired");
    }
    if (auto* send = std::get_if<SendFrame>(&frame.body)) return handle_send(frame.ref, std::move(*send));
    if (std::holds_alternative<PingFrame>(frame.body)) {
      enqueue(std::make_shared<const std::string>(encode_pong(frame.ref)));
      return;
    }
    // SYNC and HISTORY need storage, which the relay does not have (it announced delivery "push").
    reply_error(frame.ref, WireCode::kInvalidArgument,
                "the relay stores nothing: delivery mode push, no SYNC or HISTORY");
  }

  void handle_auth(const std::string& ref, const AuthFrame& f) {
    if (principal_)
      return reply_error(ref, WireCode::kInvalidArgument, "already authenticated; one AUTH per connection");
    auto who = verify_token(relay_.options.auth_secret, f.token, *relay_.clock);
    if (!who.ok()) {
      reply_error(ref, WireCode::kUnauthenticated, who.error().message());
      return close_after_flush(websocket::close_code::policy_error, "authentication failed");
    }
    principal_ = std::move(who).value();
    // Registered before AUTH_OK is queued: a push posted from now on lands behind it on this strand.
    relay_.add(principal_->user, id_, weak_from_this());
    enqueue(std::make_shared<const std::string>(encode_auth_ok(ref, *principal_, "push")));
  }

  void handle_send(const std::string& ref, SendFrame f) {
    const UserId& me = principal_->user;
    std::optional<UserId> peer;
    ConversationId conversation;
    if (f.to) {
      auto c = direct_conversation(me, *f.to);
      if (!c.ok()) return reply_error(ref, WireCode::kInvalidArgument, c.error().message());
      conversation = std::move(c).value();
      peer = *f.to;
    } else {
      auto parsed = Conversation::of(*f.conversation);
      if (parsed.ok() && parsed->direct_pair()) peer = parsed->direct_pair()->peer_of(me);
      if (!peer)
        return reply_error(ref, WireCode::kForbidden,
                           "you are not a member of conversation '" + f.conversation->str() + "'");
      conversation = std::move(*f.conversation);
    }
    Message m;
    m.id = MessageId{relay_.next_message_id.fetch_add(1, std::memory_order_relaxed)};
    m.conversation = conversation;
    m.sender = me;
    m.sender_device = principal_->device;
    m.client_msg_id = f.client_msg_id;
    m.server_time_ms = relay_.clock->now_ms();
    m.body = std::move(f.body);
    enqueue(std::make_shared<const std::string>(
        encode_send_ack(ref, SendAck{m.client_msg_id, m.id, m.conversation, m.server_time_ms, false})));
    relay_.sends.fetch_add(1, std::memory_order_relaxed);
    // As fanout does for a direct conversation: the recipient's mailbox and the sender's own, once each.
    relay_.deliver(*peer, m);
    if (*peer != me) relay_.deliver(me, m);
  }

  void reply_error(const std::string& ref, WireCode code, std::string_view message) {
    enqueue(std::make_shared<const std::string>(encode_error(ref, code, message)));
  }
  void refuse_before_auth(const std::string& ref, std::string_view what) {
    reply_error(ref, WireCode::kUnauthenticated, "the first frame must be AUTH, not " + std::string(what));
    close_after_flush(websocket::close_code::policy_error, "the first frame must be AUTH");
  }

  void enqueue(std::shared_ptr<const std::string> frame) {
    if (closing_) return;
    if (out_.size() >= relay_.options.max_outbound_frames) {
      // As the gateway: a consumer this far behind is closed rather than buffered without bound.
      return close_after_flush(websocket::close_code::try_again_later, "too far behind");
    }
    out_.push_back(std::move(frame));
    if (!writing_) write_next();
  }

  void write_next() {
    if (out_.empty()) {
      if (close_) do_close();
      return;
    }
    writing_ = true;
    ws_.text(true);
    ws_.async_write(net::buffer(*out_.front()), [self = shared_from_this()](beast::error_code ec, size_t) {
      self->writing_ = false;
      self->out_.pop_front();
      if (ec) {
        self->closing_ = true;
        self->out_.clear();
        return;
      }
      self->write_next();
    });
  }

  // What is queued goes out first, then the close frame; frames after this are not processed.
  void close_after_flush(websocket::close_code code, std::string reason) {
    if (closing_) return;
    closing_ = true;
    close_ = websocket::close_reason(code, reason);
    if (!writing_) write_next();
  }
  void do_close() {
    ws_.async_close(*close_, [self = shared_from_this()](beast::error_code) {});
  }

  Relay::Impl& relay_;
  const uint64_t id_;
  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer in_;
  FrameParser parser_;
  std::optional<Principal> principal_;
  std::deque<std::shared_ptr<const std::string>> out_;
  bool writing_ = false;
  bool closing_ = false;
  std::optional<websocket::close_reason> close_;
};

void Relay::Impl::deliver(const UserId& user, const Message& message) {
  Shard& s = shard_of(user);
  std::lock_guard lock(s.mu);
  auto it = s.users.find(user.str());
  if (it == s.users.end()) return;  // never connected: no mailbox to keep
  UserSlot& slot = it->second;
  const uint64_t seq = ++slot.seq;
  if (slot.connections.empty()) return;
  MailboxEntry entry{user, MailboxSeq::from_raw(seq), message};
  auto frame = std::make_shared<const std::string>(
      encode_deliver(std::span(&entry, 1), MailboxSeq::from_raw(seq - 1), MailboxSeq::from_raw(seq)));
  for (auto& [id, weak] : slot.connections) {
    if (auto session = weak.lock()) {
      delivers.fetch_add(1, std::memory_order_relaxed);  // before the push: whoever saw it sees it counted
      session->push(frame);
    }
  }
}

void Relay::Impl::do_accept() {
  acceptor.async_accept(net::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
    if (!ec) {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<Session>(std::move(socket), *this)->start();
    }
    do_accept();
  });
}

Result<std::unique_ptr<Relay>> Relay::start(RelayOptions options, std::shared_ptr<const Clock> clock) {
  if (options.auth_secret.empty())
    return Error(Errc::kConfig, "the relay needs the token secret (QIM_AUTH_SECRET)");
  if (!clock) return Error(Errc::kConfig, "the relay needs a clock");
  if (options.threads == 0 || options.threads > 64)
    return Error(Errc::kConfig, "relay threads must be 1..64");
  if (options.max_frame_bytes < 1024 || options.max_body_bytes == 0 ||
      options.max_body_bytes > kMaxBodyBytes || options.max_outbound_frames == 0)
    return Error(Errc::kConfig, "relay limits: frame at least 1024 bytes, body 1.." +
                                    std::to_string(kMaxBodyBytes) + ", outbound frames positive");
  auto impl = std::make_unique<Impl>(std::move(options), std::move(clock));
  beast::error_code ec;
  auto address = net::ip::make_address(impl->options.listen_address, ec);
  if (ec)
    return Error(Errc::kConfig,
                 "relay listen address '" + impl->options.listen_address + "': " + ec.message());
  const tcp::endpoint at(address, impl->options.port);
  impl->acceptor.open(at.protocol(), ec);
  if (!ec) impl->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(at, ec);
  if (!ec) impl->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return Error(Errc::kIo, "relay: cannot listen on " + impl->options.listen_address + ":" +
                                std::to_string(impl->options.port) + ": " + ec.message());
  impl->do_accept();
  for (uint32_t i = 0; i < impl->options.threads; ++i)
    impl->threads.emplace_back([p = impl.get()] { p->io.run(); });
  return std::unique_ptr<Relay>(new Relay(std::move(impl)));
}

Relay::Relay(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Relay::~Relay() {
  net::post(impl_->io, [p = impl_.get()] {
    beast::error_code ignored;
    p->acceptor.close(ignored);
  });
  impl_->io.stop();
  for (auto& t : impl_->threads) t.join();
  // The io_context's destructor (with Impl) destroys the pending handlers and so the sessions.
}

uint16_t Relay::port() const {
  return impl_->acceptor.local_endpoint().port();
}

RelayStats Relay::stats() const {
  return {impl_->connections.load(), impl_->sends.load(), impl_->delivers.load()};
}

}  // namespace qim::relay
