#include "gateway/connection.h"

#include <spdlog/spdlog.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "gateway/ephemeral_requests.h"
#include "gateway/gateway_context.h"
#include "gateway/history_requests.h"
#include "gateway/membership.h"
#include "gateway/message_event_requests.h"
#include "gateway/plain_http.h"
#include "gateway/privacy_requests.h"
#include "gateway/protocol/server_frame.h"
#include "gateway/push_requests.h"
#include "gateway/reply_quotes.h"
#include "gateway/send_request.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

namespace {

constexpr auto kUpgradeTimeout = std::chrono::seconds(10);

}  // namespace

Connection::Connection(net::ip::tcp::socket socket, GatewayContext& ctx, uint64_t id)
    : ctx_(ctx),
      id_(id),
      ws_(std::move(socket), ctx.tls.get()),
      auth_timer_(ws_.get_executor()),
      expiry_timer_(ws_.get_executor()),
      bucket_(ctx.options.max_frames_per_second, ctx.options.max_frames_per_second, Clock::now()),
      group_timer_(ws_.get_executor()) {}

Connection::~Connection() {
  ctx_.blocking.close_lane(id_);
  ctx_.group_ops.close_lane(id_);
  ctx_.registry.remove(principal_ ? &principal_->user : nullptr, id_);
  presence_closed();
  session_closed();
  if (routed_ && ctx_.deps.routes) ctx_.deps.routes->connection_closed(principal_->user);
  if (accepted_) ctx_.metrics.connections.Decrement();
  if (counted_) ctx_.open_connections.fetch_sub(1);
}

void Connection::start() {
  net::dispatch(ws_.get_executor(), [self = shared_from_this()] {
    // Bounded before any work is spent on it (TLS, HTTP): a peer that never authenticates holds a slot of
    // the unauthenticated bound, not one of max_connections.
    beast::error_code ec;
    auto peer = beast::get_lowest_layer(self->ws_).socket().remote_endpoint(ec);
    if (!ec) {
      if (auto slot = self->ctx_.unauthenticated.try_take(peer.address()))
        self->unauthenticated_.emplace(std::move(*slot));
    }
    if (!self->unauthenticated_) {
      self->ctx_.metrics.unauthenticated_refused.Increment();
      beast::get_lowest_layer(self->ws_).socket().close(ec);
      return;
    }
    // One deadline covers the TLS handshake and the upgrade request.
    beast::get_lowest_layer(self->ws_).expires_after(kUpgradeTimeout);
    if (auto* tls = self->ws_.next_layer().next_layer().tls()) {
      // A client that does not speak TLS (a plain ws:// client) fails here and the socket is closed.
      tls->async_handshake(net::ssl::stream_base::server, [self](beast::error_code ec) {
        if (ec) {
          spdlog::debug("gateway: TLS handshake failed: {}", ec.message());
          return;
        }
        self->read_upgrade_request();
      });
      return;
    }
    self->read_upgrade_request();
  });
}

void Connection::read_upgrade_request() {
  upgrade_.emplace();
  upgrade_->header_limit(8 * 1024);
  // Read through the TLS layer when there is one (the lowest layer is the raw TCP stream).
  http::async_read(
      ws_.next_layer().next_layer(), in_, *upgrade_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_upgrade_request(ec); });
}

void Connection::on_upgrade_request(beast::error_code ec) {
  if (ec) return;  // the peer went away or sent no valid request in time
  if (!websocket::is_upgrade(upgrade_->get())) {
    answer_http();
    return;
  }
  if (ctx_.open_connections.fetch_add(1) >= ctx_.options.max_connections) {
    ctx_.open_connections.fetch_sub(1);
    ctx_.metrics.connections_refused.Increment();
    refuse_upgrade(http::status::service_unavailable, "too many connections\n");
    return;
  }
  counted_ = true;
  beast::get_lowest_layer(ws_).expires_never();
  ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  ws_.set_option(websocket::stream_base::decorator(
      [](websocket::response_type& res) { res.set(http::field::server, "qim-gateway"); }));
  // Beast refuses a frame whose header announces more than the limit as soon as the header is read (its
  // bare 1009 gets our reason from CloseReasonStream); do_read also never reads past the limit.
  ws_.read_message_max(ctx_.options.max_frame_bytes);
  ws_.next_layer().set_too_big_reason("frame over " + std::to_string(ctx_.options.max_frame_bytes) +
                                      " bytes");
  ws_.async_accept(upgrade_->release(),
                   [self = shared_from_this()](beast::error_code ec) { self->on_accept(ec); });
}

void Connection::answer_http() {
  beast::error_code ec;
  auto peer = beast::get_lowest_layer(ws_).socket().remote_endpoint(ec).address();
  const bool loopback = !ec && (peer.is_loopback() ||
                                (peer.is_v6() && peer.to_v6().is_v4_mapped() &&
                                 net::ip::make_address_v4(net::ip::v4_mapped, peer.to_v6()).is_loopback()));
  beast::error_code local_ec;
  const auto local = beast::get_lowest_layer(ws_).socket().local_endpoint(local_ec);
  const PlainHttpPeer from{loopback, local_ec ? uint16_t{0} : local.port()};
  PlainHttpAnswer a = answer_plain_http(upgrade_->get(), ctx_.options, from, *ctx_.deps.clock);
  const bool head = upgrade_->get().method() == http::verb::head;
  write_http(a.status, std::move(a.content_type), head ? std::string() : std::move(a.body), a.cacheable);
}

void Connection::refuse_upgrade(http::status status, std::string why) {
  write_http(status, "text/plain; charset=utf-8", std::move(why), false);
}

void Connection::write_http(http::status status, std::string content_type, std::string body, bool cacheable) {
  auto res = std::make_shared<http::response<http::string_body>>(status, 11);
  res->set(http::field::server, "qim-gateway");
  res->set(http::field::content_type, content_type);
  res->set(http::field::cache_control, cacheable ? "no-cache" : "no-store");
  res->set("X-Content-Type-Options", "nosniff");
  res->keep_alive(false);
  res->body() = std::move(body);
  res->prepare_payload();
  // Written through the TLS layer when there is one; one request per connection.
  http::async_write(
      ws_.next_layer().next_layer(), *res, [self = shared_from_this(), res](beast::error_code, size_t) {
        beast::error_code ignored;
        beast::get_lowest_layer(self->ws_).socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
      });
}

void Connection::on_accept(beast::error_code ec) {
  if (ec) return;
  accepted_ = true;
  ws_.next_layer().start_frames();
  ctx_.metrics.connections.Increment();
  ctx_.metrics.connections_total.Increment();
  ctx_.registry.add_open(id_, shared_from_this());
  auth_timer_.expires_after(std::chrono::milliseconds(ctx_.options.auth_timeout_ms));
  auth_timer_.async_wait([weak = weak_from_this()](beast::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->principal_) return;
    self->send_error("", WireCode::kUnauthenticated, "no AUTH frame within the allowed time");
    self->close_after_flush(websocket::close_code::policy_error, "authentication timeout");
  });
  do_read();
}

void Connection::do_read() {
  // One message is read piece by piece, never more than one byte over the frame limit: then it is refused
  // with a reason (Beast's read_message_max would close with a bare 1009).
  const size_t room = ctx_.options.max_frame_bytes + 1 - std::min(in_.size(), ctx_.options.max_frame_bytes);
  ws_.async_read_some(in_, room,
                      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
}

void Connection::on_read(beast::error_code ec) {
  if (ec) {
    // Closed by the peer, by us, or by Beast after a protocol error (its close frame got a reason from
    // CloseReasonStream). Its work queued on the pools is dropped: nobody reads the answers.
    auth_timer_.cancel();
    expiry_timer_.cancel();
    ctx_.blocking.close_lane(id_);
    ctx_.group_ops.close_lane(id_);
    return;
  }
  if (input_closed_) return;
  if (in_.size() > ctx_.options.max_frame_bytes) {
    in_.consume(in_.size());
    ctx_.metrics.frames_in.Increment();
    close_after_flush(websocket::close_code::too_big,
                      "frame over " + std::to_string(ctx_.options.max_frame_bytes) + " bytes");
    return;
  }
  if (!ws_.is_message_done()) {
    do_read();
    return;
  }
  std::string text = beast::buffers_to_string(in_.data());
  in_.consume(in_.size());
  handle_message(std::move(text));
  if (!input_closed_) do_read();
}

void Connection::handle_message(std::string text) {
  ctx_.metrics.frames_in.Increment();
  if (!bucket_.take(Clock::now())) {
    // Dropped unread but for its ref: one pass over a frame already within the frame limit.
    send_error(
        ws_.got_text() ? ctx_.parsers.take()->peek_ref(text) : std::string(), WireCode::kRateLimited,
        "over " + std::to_string(ctx_.options.max_frames_per_second) + " frames per second; frame dropped");
  } else if (!ws_.got_text()) {
    if (!principal_) {
      refuse_before_auth("", "a binary frame");
    } else {
      send_error("", WireCode::kBadFrame,
                 "binary frames are not part of the protocol; send JSON text frames");
    }
  } else {
    handle_frame(text);
  }
}

void Connection::refuse_before_auth(const std::string& ref, std::string_view what) {
  send_error(ref, WireCode::kUnauthenticated, "the first frame must be AUTH, not " + std::string(what));
  close_after_flush(websocket::close_code::policy_error, "the first frame must be AUTH");
}

void Connection::handle_frame(std::string_view text) {
  auto parsed = ctx_.parsers.take()->parse(text, FrameLimits{ctx_.options.max_body_bytes});
  if (auto* err = std::get_if<FrameError>(&parsed)) {
    // Before AUTH only a refused AUTH frame hears its own error; anything else is UNAUTHENTICATED.
    if (!principal_ && !err->auth) {
      refuse_before_auth(err->ref, "a refused frame (" + err->message + ")");
      return;
    }
    // The push frames have a parser and a door of their own (push_requests.h), on the inbox's lane.
    if (principal_ && err->code == WireCode::kUnknownType && ctx_.deps.inbox != nullptr) {
      if (auto push = parse_push_request(text)) {
        run_pooled(ctx_.blocking, err->ref,
                   [backend = &ctx_.deps.inbox->backend(), clock = ctx_.deps.clock, user = principal_->user,
                    device = principal_->device, ref = err->ref, request = std::move(*push),
                    metrics = &ctx_.metrics] {
                     return answer_push_request(*backend, *clock, user, device, ref, request, metrics);
                   });
        return;
      }
    }
    send_error(err->ref, err->code, err->message);
    if (!principal_) close_after_flush(websocket::close_code::policy_error, "the first frame must be AUTH");
    return;
  }
  auto& frame = std::get<ClientFrame>(parsed);
  if (auto* auth = std::get_if<AuthFrame>(&frame.body)) {
    handle_auth(frame.ref, *auth);
    return;
  }
  if (!principal_) {
    refuse_before_auth(frame.ref, "another frame");
    return;
  }
  if (token_expired()) {
    end_at_expiry(frame.ref);
    return;
  }
  std::visit(
      [&](auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, SendFrame>) {
          handle_send(frame.ref, std::move(f));
        } else if constexpr (std::is_same_v<F, SyncFrame>) {
          handle_sync(frame.ref, f);
        } else if constexpr (std::is_same_v<F, HistoryFrame>) {
          handle_history(frame.ref, f);
        } else if constexpr (std::is_same_v<F, GroupFrame>) {
          handle_group(frame.ref, f);
        } else if constexpr (std::is_same_v<F, TypingFrame>) {
          handle_typing(frame.ref, f);
        } else if constexpr (std::is_same_v<F, PresenceSubscribeFrame>) {
          handle_presence_subscribe(frame.ref, std::move(f));
        } else if constexpr (std::is_same_v<F, InboxFrame>) {
          handle_inbox(frame.ref, f);
        } else if constexpr (std::is_same_v<F, MessageEventFrame>) {
          handle_message_event(frame.ref, std::move(f));
        } else if constexpr (std::is_same_v<F, AttachmentFrame>) {
          handle_attachment(frame.ref, f);
        } else if constexpr (std::is_same_v<F, PingFrame>) {
          enqueue(std::make_shared<const std::string>(encode_pong(frame.ref)));
        }
      },
      frame.body);
}

void Connection::handle_auth(const std::string& ref, const AuthFrame& f) {
  if (principal_) {
    send_error(ref, WireCode::kInvalidArgument, "already authenticated; one AUTH per connection");
    return;
  }
  auto who = verify_token(ctx_.options.auth_secret, f.token, *ctx_.deps.clock);
  if (!who.ok()) {
    send_error(ref, WireCode::kUnauthenticated, who.error().message());
    close_after_flush(websocket::close_code::policy_error, "authentication failed");
    return;
  }
  if (!check_session_at_auth(ref, *who)) return;
  principal_ = std::move(who).value();
  auth_timer_.cancel();
  unauthenticated_.reset();  // from now on the connection counts only against max_connections
  arm_expiry(std::chrono::milliseconds(principal_->expires_at_ms - ctx_.deps.clock->now_ms()));
  // The route first (see route_registrar.h), so that pushes for this user reach this gateway.
  if (ctx_.deps.routes) ctx_.deps.routes->connection_authenticated(principal_->user);
  routed_ = true;
  // Registered before AUTH_OK is queued: a push posted from now on lands behind it on this strand.
  ctx_.registry.add_user(principal_->user, id_, shared_from_this());
  session_opened();
  presence_connected();
  enqueue(
      std::make_shared<const std::string>(encode_auth_ok(ref, *principal_, delivery_mode_name(ctx_.mode))));
}

void Connection::handle_send(const std::string& ref, SendFrame f) {
  SendTarget target = resolve_send_target(principal_->user, f, ctx_.deps.users);
  if (!target.ok) {
    send_error(ref, target.code, target.message);
    return;
  }
  if (target.group && ctx_.deps.groups == nullptr) {
    send_error(ref, WireCode::kUnavailable, "groups are not served by this gateway");
    return;
  }
  // A SEND with attachments or reply_to waits for their check (attachment_requests.h, send_request.h) in
  // its place in the order.
  std::shared_ptr<AttachmentCheck> attach;
  if (!f.attachments.empty() || f.reply_to) {
    if (writes_full(ref)) return;
    attach = start_attachment_check(ref, f, target.conversation);
    if (!attach) return;
  }
  if (target.group) {
    queue_group_send(ref, std::move(f), std::move(target.conversation), *target.group, std::move(attach));
    return;
  }
  if (privacy_backend() != nullptr) {
    // A direct SEND to another user waits for its block check (docs/adr/0096); a note to self does not.
    auto c = Conversation::of(target.conversation);
    const DirectPair* pair = c.ok() ? c->direct_pair() : nullptr;
    if (pair != nullptr && pair->low != pair->high) {
      queue_direct_send(ref, std::move(f), std::move(target.conversation), std::move(attach));
      return;
    }
  }
  if (!writes_.empty() || attach) {
    // Behind a SEND or group change still being checked, or its own attachment check: appended after it
    // (connection.h, "Order").
    if (!attach && writes_full(ref)) return;
    writes_.push_back(
        OutboxWrite{ref, std::move(f), std::move(target.conversation), nullptr, nullptr, std::move(attach)});
    drain_writes();
    return;
  }
  append_send(ref, std::move(f), std::move(target.conversation));
}

void Connection::append_send(const std::string& ref, SendFrame f, ConversationId conversation) {
  const std::optional<MessageId> reply_to = f.reply_to;
  const uint64_t fingerprint = send_fingerprint(conversation, f.body, reply_to);
  const auto started = Clock::now();
  auto answer = std::make_shared<SendAnswer>();  // decided once: the outcome or the deadline (decision 105)
  auto reply = [self = shared_from_this(), ref, id = f.client_msg_id, fingerprint, started, answer](
                   const Result<SentMessage>& sent, bool duplicate) {
    net::post(self->ws_.get_executor(), [self, ref, id, fingerprint, started, sent, duplicate, answer] {
      if (!answer->take()) return;  // refused at its deadline already; a retry learns the outcome
      self->answer_send(ref, id, fingerprint, started, sent, duplicate);
    });
  };
  GatewayContext* ctx = &ctx_;
  SendDoor door{ctx_.deps.outbox,
                ctx_.dedup,
                ctx_.deps.clock.get(),
                [ctx] { ctx->send_started(); },
                [ctx] { ctx->send_answered(); },
                ctx_.deps.before_send};
  auto done = submit_send(door, principal_->user, principal_->device, f.client_msg_id, conversation,
                          std::move(f.body), reply_to, reply);
  if (done) {
    answer_send(ref, f.client_msg_id, fingerprint, started, *done, true);
    return;
  }
  // After the append started: the reply is posted to this strand, so it runs after this returns.
  arm_send_deadline(ref, f.client_msg_id, started, answer);  // also while waiting for the first's append
}

void Connection::answer_send(const std::string& ref, const std::string& client_msg_id, uint64_t fingerprint,
                             Clock::time_point started, const Result<SentMessage>& sent, bool duplicate) {
  if (!sent.ok() && sent.code() == kBeforeSendRejected) {  // the hook's verdict: its reason, as it gave it
    send_error(ref, WireCode::kRejected, sent.error().message());
    return;
  }
  if (!sent.ok()) {
    ctx_.metrics.sends_failed.Increment();
    spdlog::warn("gateway: SEND {} of {} failed: {}", client_msg_id, principal_->user.str(),
                 sent.error().to_string());
    send_error(ref, wire_code_of(sent.code()),
               "SEND '" + client_msg_id + "' was not stored: " + sent.error().message());
    return;
  }
  if (auto refusal = send_refusal(client_msg_id, fingerprint, *sent)) {
    send_error(ref, refusal->code, refusal->message);
    return;
  }
  const auto took = Clock::now() - started;
  if (past_send_deadline(took)) {  // the outcome reached the strand after the deadline: still late
    refuse_late_send(ref, client_msg_id);
    return;
  }
  (duplicate ? ctx_.metrics.sends_duplicate : ctx_.metrics.sends_acked).Increment();
  ctx_.metrics.send_ack_seconds.Observe(std::chrono::duration<double>(took).count());
  SendAck ack{client_msg_id, sent->id, sent->conversation, sent->server_time_ms, duplicate};
  enqueue(std::make_shared<const std::string>(encode_send_ack(ref, ack)));
}

void Connection::handle_sync(const std::string& ref, const SyncFrame& f) {
  if (ctx_.mode == DeliveryMode::kPush) {
    send_error(ref, WireCode::kInvalidArgument, "SYNC is disabled: this gateway runs delivery mode push");
    return;
  }
  MailboxQuery query{principal_->user, f.after, f.limit};  // the authenticated user's mailbox only
  MailboxStore* store = ctx_.deps.mailbox;
  GatewayMetrics* metrics = &ctx_.metrics;
  run_pooled(ctx_.blocking, ref,
             [store, metrics, query, ref, privacy = privacy_backend(), history = ctx_.deps.history,
              messages = ctx_.deps.messages] {
               auto page = store->read_mailbox(query);
               if (!page.ok())
                 return read_error_frame(metrics, ref, "SYNC of " + query.user.str(), page.error());
               // The replies' quotes (reply_quotes.h): none read for a page without replies.
               auto quotes = quote_entries(history, messages, page->entries);
               if (!quotes.ok())
                 return read_error_frame(metrics, ref, "SYNC of " + query.user.str(), quotes.error());
               ReaderMarks marks;
               if (!quotes->empty()) marks.quotes = &*quotes;
               if (privacy == nullptr || page->entries.empty())
                 return encode_sync_page(ref, *page, kMaxMessageFrameBytes, marks.quotes ? &marks : nullptr);
               // The reader's deletions and blocks (privacy_requests.h), read after the page: never a deleted
               // body.
               auto mine = reader_privacy(*privacy, query.user);
               if (!mine.ok())
                 return read_error_frame(metrics, ref, "privacy of " + query.user.str(), mine.error());
               marks = reader_marks(*mine);
               if (!quotes->empty()) marks.quotes = &*quotes;
               return encode_sync_page(ref, *page, kMaxMessageFrameBytes, &marks);
             });
}

void Connection::handle_history(const std::string& ref, const HistoryFrame& f) {
  if (auto c = Conversation::of(f.conversation); c.ok() && c->group_id() != nullptr) {
    handle_group_history(ref, f, *c->group_id());
    return;
  }
  if (!is_member(principal_->user, f.conversation)) {
    send_error(ref, WireCode::kForbidden,
               "you are not a member of conversation '" + f.conversation.str() + "'");
    return;
  }
  HistoryStore* history = ctx_.deps.history;
  if (history == nullptr) {
    send_error(ref, WireCode::kUnavailable, "history is not served by this gateway");
    return;
  }
  HistoryQuery query{f.conversation, f.before, f.limit};
  GatewayMetrics* metrics = &ctx_.metrics;
  run_pooled(ctx_.blocking, ref,
             [history, metrics, query, ref, privacy = privacy_backend(), messages = ctx_.deps.messages,
              outbox = ctx_.deps.outbox, user = principal_->user] {
               return answer_history(history, nullptr, metrics, ref, user, query, privacy, messages, outbox);
             });
}

void Connection::handle_group_history(const std::string& ref, const HistoryFrame& f,
                                      const GroupId& /*group*/) {
  GroupStore* groups = ctx_.deps.groups;
  HistoryStore* history = ctx_.deps.history;
  if (groups == nullptr || history == nullptr) {
    send_error(ref, WireCode::kUnavailable, "group history is not served by this gateway");
    return;
  }
  HistoryQuery query{f.conversation, f.before, f.limit};
  GatewayMetrics* metrics = &ctx_.metrics;
  run_pooled(ctx_.blocking, ref,
             [groups, history, metrics, query, ref, privacy = privacy_backend(),
              messages = ctx_.deps.messages, outbox = ctx_.deps.outbox, user = principal_->user] {
               return answer_history(history, groups, metrics, ref, user, query, privacy, messages, outbox);
             });
}

void Connection::send_error(const std::string& ref, WireCode code, std::string_view message) {
  ctx_.metrics.errors(code).Increment();
  enqueue(std::make_shared<const std::string>(encode_error(ref, code, message)));
}

void Connection::push(std::shared_ptr<const std::string> frame) {
  net::post(ws_.get_executor(), [self = shared_from_this(), frame = std::move(frame)] {
    if (!self->accepted_) return;
    // The timer may not have fired yet (or the clock runs ahead of it): a push never outlives the token.
    if (self->principal_ && self->token_expired()) {
      self->end_at_expiry();
      return;
    }
    self->enqueue(frame, OutboundFrames::Kind::kPush);
  });
}

void Connection::arm_expiry(std::chrono::milliseconds after) {
  expiry_timer_.expires_after(std::max(after, std::chrono::milliseconds(0)));
  expiry_timer_.async_wait([weak = weak_from_this()](beast::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->close_) return;
    if (self->token_expired()) {
      self->end_at_expiry();
      return;
    }
    // The steady clock ran ahead of the gateway's clock: look again when the rest is due, at least every
    // second, so a clock that catches up (a test clock, a stepped wall clock) is noticed.
    const int64_t rest = self->principal_->expires_at_ms - self->ctx_.deps.clock->now_ms();
    self->arm_expiry(std::chrono::milliseconds(std::clamp<int64_t>(rest, 1, 1000)));
  });
}

bool Connection::token_expired() const {
  return ctx_.deps.clock->now_ms() >= principal_->expires_at_ms;
}

void Connection::end_at_expiry(const std::string& ref) {
  if (close_) return;
  ctx_.metrics.token_expiry_closes.Increment();
  leave_before_close();
  const std::string when = std::to_string(principal_->expires_at_ms);
  send_error(ref, WireCode::kUnauthenticated,
             "token expired at " + when + " (ms since the epoch); reconnect with a new token");
  close_after_flush(websocket::close_code::policy_error, "token expired at " + when);
}

void Connection::shutdown(std::string reason) {
  net::post(ws_.get_executor(), [self = shared_from_this(), reason = std::move(reason)] {
    if (self->accepted_) self->close_after_flush(websocket::close_code::going_away, reason);
  });
}

void Connection::enqueue(std::shared_ptr<const std::string> frame, OutboundFrames::Kind kind) {
  if (close_) return;  // closing: nothing more is sent
  // One frame is always taken (a full SYNC_PAGE may alone exceed the byte bound); a queue is bounded.
  if (out_.would_exceed(frame->size(), ctx_.options.max_outbound_frames, ctx_.options.max_outbound_bytes)) {
    // A consumer this slow would hold memory without bound. Drop what it has not received and close;
    // the mailbox still has everything, and the client resumes with SYNC from its cursor.
    ctx_.metrics.slow_consumer_closes.Increment();
    out_.drop_waiting();
    close_after_flush(websocket::close_code::try_again_later,
                      "slow consumer: over " + std::to_string(ctx_.options.max_outbound_frames) +
                          " frames or " + std::to_string(ctx_.options.max_outbound_bytes) +
                          " bytes queued; reconnect and SYNC");
    return;
  }
  out_.add(kind, std::move(frame));
  if (!out_.writing()) write_next();
}

void Connection::write_next() {
  const OutboundFrames::Frame& next = out_.start_next();
  if (next == nullptr) {
    if (close_) {
      ws_.async_close(*close_, [self = shared_from_this()](beast::error_code) {});
    }
    return;
  }
  ws_.text(true);
  ws_.async_write(net::buffer(*next), [self = shared_from_this()](beast::error_code ec, size_t) {
    if (ec) {
      self->out_.clear();
      self->input_closed_ = true;
      return;
    }
    self->out_.written();
    self->write_next();
  });
}

void Connection::close_after_flush(websocket::close_code code, std::string reason) {
  if (close_) return;
  input_closed_ = true;
  // A close reason travels in a control frame: at most 123 bytes.
  if (reason.size() > 123) reason.resize(123);
  close_ = websocket::close_reason(code, reason);
  if (!out_.writing()) write_next();
}

}  // namespace qim
