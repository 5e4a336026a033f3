#pragma once
// A small WebSocket client of the QIM protocol, for the e2e suite, the load generator and qimctl.
//
// Frames are written in the order send_*() is called (asynchronously, on the runtime's thread) and every
// received frame is queued; wait_for() takes the first queued frame that matches, leaving the others for
// later waits, so a test can wait for a SEND_ACK while DELIVERs keep arriving. A client created with
// on_frame set hands frames to that callback (on the runtime's thread) instead of queueing them.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "client/frames.h"
#include "core/status.h"

namespace qim::client {

// The threads clients run on. Many clients may share one (the load generator does).
class Runtime {
 public:
  explicit Runtime(unsigned threads = 1);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// The largest frame the client accepts: the largest a client must accept (docs/protocol.md "Limits and
// closes"; the TypeScript SDK's MAX_FRAME_BYTES). A SYNC_PAGE, HISTORY_PAGE or DELIVER is at most 1 MiB.
inline constexpr size_t kMaxServerFrameBytes = 16 << 20;

struct ClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7400;
  std::string target = "/";  // the HTTP path of the upgrade request
  std::chrono::milliseconds timeout{5000};
  // wss://: TLS with the server verified against `ca_file` (PEM; empty: the system's trust store) and
  // the certificate's name checked against `host`. Verification cannot be turned off.
  bool tls = false;
  std::string ca_file;
  // Optional: receive frames here (raw JSON text) instead of the queue.
  std::function<void(std::string_view frame)> on_frame;
  // Optional: told once when the connection ends (close code, reason).
  std::function<void(int code, std::string_view reason)> on_close;
};

using Pred = std::function<bool(const ServerFrame&)>;

class Client {
 public:
  // Connects and completes the TLS handshake (options.tls) and the WebSocket handshake. Transport naming
  // the endpoint on failure (e.g. "certificate verify failed"); Config for a CA file that does not load.
  // With no runtime, the client runs its own one-thread runtime.
  static Result<std::unique_ptr<Client>> connect(const ClientOptions& options,
                                                 std::shared_ptr<Runtime> runtime = nullptr);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // From now on, frames go to `on_frame` (on the runtime's thread) instead of the queue.
  void set_on_frame(std::function<void(std::string_view frame)> on_frame);

  // Queues a raw text (or binary) frame; test code sends malformed frames with these.
  void send_text(std::string text);
  void send_binary(std::string bytes);

  // The first queued frame matching `pred`, waiting up to `timeout`. Timeout if none came; Transport if
  // the connection closed first (the message holds the close code and reason).
  Result<ServerFrame> wait_for(const Pred& pred, std::chrono::milliseconds timeout);
  Result<ServerFrame> wait_type(std::string_view type, std::chrono::milliseconds timeout);
  // The frame answering `ref` (its reply or an ERROR carrying that ref).
  Result<ServerFrame> wait_ref(std::string_view ref, std::chrono::milliseconds timeout);
  // Frames queued and not yet taken.
  size_t queued() const;

  // Request-reply helpers: send with a fresh ref and wait for the answer. An ERROR answer is returned
  // as an Error whose message starts with the wire code ("FORBIDDEN: ...").
  Result<ServerFrame> auth(std::string_view token);
  Result<ServerFrame> send(std::string_view to, std::string_view client_msg_id, std::string_view body);
  Result<ServerFrame> send_to_conversation(std::string_view conversation, std::string_view client_msg_id,
                                           std::string_view body);
  // A SEND replying to `reply_to` (SEND_ACK, or the ERROR UNKNOWN_MESSAGE, ...).
  Result<ServerFrame> reply(std::string_view conversation, std::string_view client_msg_id,
                            std::string_view body, uint64_t reply_to);
  Result<ServerFrame> sync(uint64_t after, uint32_t limit = 100);
  // EDIT_ACK / RECALL_ACK (or the ERROR: UNKNOWN_MESSAGE, WINDOW_PASSED, NOT_ALLOWED, MESSAGE_RECALLED, ...).
  Result<ServerFrame> edit(std::string_view conversation, uint64_t message_id, std::string_view client_msg_id,
                           std::string_view body);
  Result<ServerFrame> recall(std::string_view conversation, uint64_t message_id,
                             std::string_view client_msg_id);
  // REACT_ACK / UNREACT_ACK (or the ERROR: UNKNOWN_MESSAGE, BAD_REACTION, REACTION_LIMIT,
  // REACTION_UNCHANGED, MESSAGE_RECALLED, NOT_A_MEMBER, ...).
  Result<ServerFrame> react(std::string_view conversation, uint64_t message_id,
                            std::string_view client_msg_id, std::string_view emoji, bool remove = false);
  Result<ServerFrame> history(std::string_view conversation, std::optional<uint64_t> before,
                              uint32_t limit = 50);
  // A group frame (frames.h group_frame): GROUP_OK, GROUPS_LIST or GROUP_MEMBERS_LIST; an ERROR as above
  // ("NOT_A_MEMBER: ...").
  Result<ServerFrame> group(std::string_view type, const GroupRequestFields& fields = {});
  // Inbox (docs/protocol.md "Inbox"): READ_OK, CONVERSATIONS_PAGE, RECEIPTS_PAGE, SETTINGS_OK; an ERROR as
  // above ("FORBIDDEN: ...").
  Result<ServerFrame> read(std::string_view conversation, uint64_t seq);
  Result<ServerFrame> conversations(std::optional<uint64_t> before, uint32_t limit = 50);
  Result<ServerFrame> receipts(std::string_view conversation, uint64_t message_id);
  Result<ServerFrame> settings(const SettingsFields& fields = {});
  // Privacy (docs/protocol.md "Blocking", "Mute", "Delete for me"): BLOCK_OK, BLOCKS_LIST, MUTE_OK,
  // DELETE_OK; an ERROR as above ("BLOCKED: ..." is what a SEND to a user who blocks you answers).
  Result<ServerFrame> block(std::string_view user, bool blocked = true);
  Result<ServerFrame> blocks();
  Result<ServerFrame> mute(std::string_view conversation, bool muted = true,
                           std::optional<int64_t> until_ms = std::nullopt);
  Result<ServerFrame> delete_for_me(std::string_view conversation,
                                    std::optional<uint64_t> message_id = std::nullopt);

  bool closed() const;
  int close_code() const;  // 0 until closed by a close frame
  std::string close_reason() const;
  // Sends a normal close and waits (bounded by the timeout) for the server's.
  void close();

  struct Impl;

 private:
  Client(std::shared_ptr<Runtime> runtime, std::shared_ptr<Impl> impl)
      : runtime_(std::move(runtime)), impl_(std::move(impl)) {}
  Result<ServerFrame> request(std::string frame, const std::string& ref);
  std::shared_ptr<Runtime> runtime_;  // declared first: outlives impl_, whose socket lives in its io_context
  std::shared_ptr<Impl> impl_;
};

}  // namespace qim::client
