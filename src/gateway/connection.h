#pragma once
// One client's WebSocket connection. Everything it does runs on its own strand: reading frames, answering
// them, and writing its outbound queue one frame at a time, answers before the pushes still waiting
// (outbound_frames.h). Blocking reads (SYNC, HISTORY, group checks and GROUP_* frames) run in this
// connection's lane of the gateway's pools (fair_pool.h) and post their answer back; SEND acknowledgements
// come back from the log's callback the same way, so every write happens on the strand.
//
// Order: the connection's Outbox writes (SENDs and group changes) are appended in the order their frames
// came, whatever their conversation: a write waiting for its group check holds back the ones behind it
// (connection_work.cc). Work on the pools is bounded per connection (max_pending_per_connection: over it a
// frame is answered RATE_LIMITED at once), and work not started by its deadline is answered UNAVAILABLE
// instead of being done late.
//
// Bounds: frame size (read piece by piece up to max_frame_bytes: a larger frame closes with 1009 and a
// reason), frame rate (token bucket: a frame over it gets RATE_LIMITED with its ref), outbound queue (over it
// the connection is closed with 1013 and the client SYNCs from its cursor), AUTH within auth_timeout_ms,
// a slot of the unauthenticated bound from the accept until AUTH (unauthenticated_slots.h), and the token's
// expiry: at that moment (or at the first push or frame after it) the connection leaves the push registry
// and its route, sends nothing more and closes with 1008. A revoked session (sessions/revocation.h) is
// refused at AUTH, and a live one closed the same way with close code 4001 (connection_sessions.cc).

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "auth/token.h"
#include "gateway/close_reason_stream.h"
#include "gateway/group_requests.h"
#include "gateway/outbound_frames.h"
#include "gateway/protocol/client_frame.h"
#include "gateway/send_dedup.h"
#include "gateway/token_bucket.h"
#include "gateway/unauthenticated_slots.h"
#include "sessions/revocation.h"

namespace qim {

class PresenceWatch;

struct GatewayContext;
class InboxBackend;
class FairPool;
struct EphemeralState;

class ConnectionRegistry;

// Reads `user`'s block list and hands it to `registry` (connection_registry.h set_blocks); nothing
// without an inbox (`privacy` null); a read error is logged and the old list kept. Blocking.
void load_blocks(InboxBackend* privacy, ConnectionRegistry& registry, const UserId& user);

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, GatewayContext& ctx, uint64_t id);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // With TLS, does the server handshake first. Reads the HTTP upgrade and accepts it, or refuses it (503
  // over the bound); a request that is no upgrade gets plain_http.h's answer (the page, 426, ...).
  void start();
  // Queues a frame (a DELIVER) from any thread.
  void push(std::shared_ptr<const std::string> frame);
  // Closes with "going away" after what is queued, from any thread.
  void shutdown(std::string reason);
  // From any thread: this connection was pushed entries of direct conversations with `peers`, which
  // presence then counts as its direct peers (PresenceHub::peer_seen: a conversation begun after AUTH).
  void direct_peers_seen(std::span<const UserId> peers);

  // Ends the connection (ERROR, close 4001) if `marks` revoke its token; from any thread.
  void revoke_if(RevocationMarks marks);

  // The close code of a revoked session (docs/protocol.md "Session revocation").
  static constexpr uint16_t kRevokedCloseCode = 4001;

 private:
  using Ws = boost::beast::websocket::stream<CloseReasonStream>;
  using Clock = std::chrono::steady_clock;

  void read_upgrade_request();
  void on_upgrade_request(boost::beast::error_code ec);
  void answer_http();
  void refuse_upgrade(boost::beast::http::status status, std::string why);
  void write_http(boost::beast::http::status status, std::string content_type, std::string body,
                  bool cacheable);
  void on_accept(boost::beast::error_code ec);
  void do_read();
  void on_read(boost::beast::error_code ec);
  void handle_message(std::string text);
  void handle_frame(std::string_view text);
  void handle_auth(const std::string& ref, const AuthFrame& f);
  void handle_send(const std::string& ref, SendFrame f);
  // The SEND after its checks: dedup, the Outbox append, the answer.
  void append_send(const std::string& ref, SendFrame f, ConversationId conversation);
  void handle_group(const std::string& ref, const GroupFrame& f);
  void handle_group_history(const std::string& ref, const HistoryFrame& f, const GroupId& group);
  void handle_sync(const std::string& ref, const SyncFrame& f);
  void handle_history(const std::string& ref, const HistoryFrame& f);
  // EDIT and RECALL (message_event_requests.cc).
  void handle_message_event(const std::string& ref, MessageEventFrame f);
  // READ, CONVERSATIONS, RECEIPTS, SETTINGS (inbox_requests.cc).
  void handle_inbox(const std::string& ref, const InboxFrame& f);
  // send_ack_deadline_ms, plus the before-send hook's bound when there is one (0: no deadline).
  int64_t send_deadline_ms() const;
  // A SEND_ACK only within the SEND's deadline (send_deadline_ms; past it, refuse_late_send).
  void answer_send(const std::string& ref, const std::string& client_msg_id, uint64_t fingerprint,
                   Clock::time_point started, const Result<SentMessage>& sent, bool duplicate);
  // A SEND's deadline (connection_send_deadline.cc, decision 105). The answer of one SEND waiting for its
  // append, on the strand only: take() is true once, for the first of the outcome and the deadline.
  struct SendAnswer {
    bool take();
    bool answered = false;
    std::unique_ptr<boost::asio::steady_timer> deadline;  // armed with a deadline, cancelled by take()
  };
  // Arms the deadline of a SEND started at `started` (nothing without one).
  void arm_send_deadline(const std::string& ref, const std::string& client_msg_id, Clock::time_point started,
                         const std::shared_ptr<SendAnswer>& answer);
  bool past_send_deadline(Clock::duration took) const;
  // UNAVAILABLE, "deadline exceeded": the SEND was not durable within its deadline (it may be later).
  void refuse_late_send(const std::string& ref, const std::string& client_msg_id);
  // Typing and presence (ephemeral_requests.cc).
  void handle_typing(const std::string& ref, const TypingFrame& f);
  void handle_presence_subscribe(const std::string& ref, PresenceSubscribeFrame f);
  // At AUTH: the user is counted online here, the connection watches its direct peers.
  void presence_connected();
  // At the close or the token's expiry (once): no longer counted, nothing watched.
  void presence_closed();

  // Runs `read` in this connection's lane of `pool` and queues the frame it returns (none if empty); answers
  // `ref` with RATE_LIMITED at once over the pending bound, UNAVAILABLE if it did not start by its deadline.
  // Work the gateway starts itself (an empty `ref`: the block list and the peers' presence after AUTH, a
  // reload after a block change) is not charged against that bound: a few tasks per connection or per
  // change of the user's own list, and a client's first requests after AUTH must not find slots taken.
  void run_pooled(FairPool& pool, const std::string& ref, std::function<std::string()> read);
  // Counts one more piece of work of this connection on the pools; false (and `ref` answered
  // RATE_LIMITED naming `what`) when it is at its bound.
  bool take_pending(const std::string& ref, std::string_view what);
  // The deadline of work submitted now.
  std::chrono::steady_clock::time_point work_deadline() const;

  // Ordered Outbox writes (connection_work.cc).
  struct SendCheck;
  struct GroupChangeWork;
  struct AttachmentCheck;
  struct OutboxWrite {
    std::string ref;
    std::optional<SendFrame> send;  // a SEND to `conversation`, after `check` when it is a group's
    ConversationId conversation;
    std::shared_ptr<SendCheck> check;
    std::shared_ptr<GroupChangeWork> change;  // or a group change
    // A SEND with attachments or reply_to: their check (attachment_requests.h, send_request.h)
    std::shared_ptr<AttachmentCheck> attach;
  };
  // ATTACH and ATTACHMENT_URL (connection_attachments.cc).
  void handle_attachment(const std::string& ref, const AttachmentFrame& f);
  // Starts the check of a SEND's attachments and reply_to on the blocking pool; null (and `ref` answered)
  // when refused at once (attachments without an object store, over the pending bound).
  std::shared_ptr<AttachmentCheck> start_attachment_check(const std::string& ref, const SendFrame& f,
                                                          const ConversationId& conversation);
  // Queues a SEND to a group behind its membership check (shared with the SENDs to that group that come
  // before the check starts).
  void queue_group_send(const std::string& ref, SendFrame f, ConversationId conversation,
                        const GroupId& group, std::shared_ptr<AttachmentCheck> attach = nullptr);
  // Queues a direct SEND behind a block check (inbox/privacy.h: who blocks the caller), shared with the
  // direct SENDs that come before it starts; refused BLOCKED when the peer is among them.
  void queue_direct_send(const std::string& ref, SendFrame f, ConversationId conversation,
                         std::shared_ptr<AttachmentCheck> attach = nullptr);
  // The inbox backend holding privacy cells; null without an inbox (nothing is checked).
  InboxBackend* privacy_backend() const;
  void check_done(const std::shared_ptr<SendCheck>& check);

 public:
  // A BLOCK_CHANGED signal reached this connection (any thread): the presence hub re-reads its user's block
  // list here, on the blocking pool (docs/adr/0096).
  void block_list_changed();

 private:
  // Appends the writes at the front whose checks are done, in order.
  void drain_writes();
  // Whether a write's attachment check (if any) has answered; appends a SEND whose check passed with its
  // checked body, or answers its refusal.
  static bool attachment_check_done(const OutboxWrite& w);
  void append_checked_send(OutboxWrite& w);
  bool writes_full(const std::string& ref);
  void start_next_group_change();
  void append_group_change(const std::shared_ptr<GroupChangeWork>& change);
  void poll_group_outcome(const std::shared_ptr<GroupChangeWork>& change);
  void group_change_answered(const std::shared_ptr<GroupChangeWork>& change, std::string frame);

  void send_error(const std::string& ref, WireCode code, std::string_view message);
  // UNAUTHENTICATED naming what came instead of AUTH, then a close (1008).
  void refuse_before_auth(const std::string& ref, std::string_view what);
  // Queues a frame; answers (the default) go out before the pushes still waiting (outbound_frames.h).
  void enqueue(std::shared_ptr<const std::string> frame,
               OutboundFrames::Kind kind = OutboundFrames::Kind::kAnswer);
  void write_next();
  void close_after_flush(boost::beast::websocket::close_code code, std::string reason);
  // Arms the timer that ends the connection at its token's expiry (by the gateway's clock).
  void arm_expiry(std::chrono::milliseconds after);
  // Whether the token has expired by the gateway's clock.
  bool token_expired() const;
  // The token expired: no more pushes (registry and route dropped now), nothing more sent, close 1008.
  void end_at_expiry(const std::string& ref = {});
  // Session revocation (connection_sessions.cc). Whether AUTH of `who` may go on: false when the session
  // store refuses it (revoked: UNAUTHENTICATED and close 4001) or cannot be read (UNAVAILABLE, close 1013).
  bool check_session_at_auth(const std::string& ref, const Principal& who);
  // The token was revoked: like end_at_expiry, with close 4001 naming the revocation.
  void end_revoked(int64_t not_before_ms);
  // Before a close that ends the session: out of the registry, presence and route; nothing waiting is sent.
  void leave_before_close();
  // Tells the session store of the AUTH (once) and of its end (once).
  void session_opened();
  void session_closed();

  GatewayContext& ctx_;
  const uint64_t id_;
  Ws ws_;
  boost::beast::flat_buffer in_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::empty_body>> upgrade_;
  boost::asio::steady_timer auth_timer_;
  boost::asio::steady_timer expiry_timer_;
  std::optional<UnauthenticatedSlots::Slot> unauthenticated_;  // held from the accept until AUTH
  bool routed_ = false;        // connection_authenticated was called and connection_closed not yet
  bool session_open_ = false;  // the session store was told of the AUTH and not yet of the close
  TokenBucket bucket_;
  std::optional<Principal> principal_;

  OutboundFrames out_;
  uint32_t pending_ = 0;            // work on the pools not answered yet (take_pending)
  std::deque<OutboxWrite> writes_;  // Outbox writes waiting for an earlier one's check, in frame order
  std::map<GroupId, std::shared_ptr<SendCheck>> open_checks_;  // group checks of SENDs not started yet
  std::shared_ptr<SendCheck> open_direct_check_;  // the block check of direct SENDs, not started yet
  std::deque<std::shared_ptr<GroupChangeWork>> group_changes_;  // waiting for the one in progress
  std::shared_ptr<GroupChangeWork> group_change_;               // checked, appended or polled now
  boost::asio::steady_timer group_timer_;                       // the pause between outcome polls
  bool counted_ = false;                                        // holds a slot of max_connections
  bool accepted_ = false;                                       // the WebSocket handshake completed
  bool input_closed_ = false;                                   // no more frames are processed
  std::optional<boost::beast::websocket::close_reason> close_;
  std::unique_ptr<EphemeralState> ephemeral_;  // typing buckets, the presence watch (after AUTH)
  // The presence watch again, for direct_peers_seen on the registry's thread (ephemeral_ is the strand's).
  std::mutex peer_watch_mu_;
  std::weak_ptr<PresenceWatch> peer_watch_;
};

}  // namespace qim
