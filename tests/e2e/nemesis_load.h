#pragma once
// The load the nemesis tests (issue 42, items 2 and 3) run while they inject a fault: senders that keep
// sending, one SEND at a time, to recipients in turn, every SEND recorded into one history for the checker
// (src/checker/checker.h). A sender whose connection fails (no answer in time, closed) reconnects to the
// next gateway, as a client does; after healing, every SEND it was not acknowledged is sent again with the
// same client_msg_id and body until acknowledged (docs/protocol.md, "Idempotent send"). Then the final
// mailboxes are read and the history is judged.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "checker/checker.h"
#include "checker/op_history.h"
#include "e2e/e2e_env.h"

namespace qim::e2e {

using NemesisClock = std::chrono::steady_clock;

// What one SEND of the load got.
struct SendOutcome {
  std::string recipient, cmid;
  NemesisClock::time_point started, answered;
  bool acked = false;
  uint64_t message_id = 0;
  std::string error;  // "<WIRE CODE>: message" for an ERROR answer; the client's own error otherwise
};

// A connected and authenticated client, or null; unlike login_at, a failure is no test failure (the
// gateway may be paused on purpose).
std::unique_ptr<Client> connect_quietly(uint16_t port, const std::string& user,
                                        std::chrono::milliseconds timeout, const std::string& device = "d1");

class NemesisSender {
 public:
  // Starts sending at once through ports[first], moving to the next port after a failed connection.
  NemesisSender(checker::HistoryRecorder& h, std::vector<uint16_t> ports, size_t first, std::string name,
                std::vector<std::string> recipients);
  ~NemesisSender() { stop(); }
  NemesisSender(const NemesisSender&) = delete;
  NemesisSender& operator=(const NemesisSender&) = delete;

  void stop();
  const std::string& name() const { return name_; }
  std::vector<SendOutcome> outcomes() const;
  size_t acked_since(NemesisClock::time_point since) const;
  // When the first SEND started at or after `since` was acknowledged.
  std::optional<NemesisClock::time_point> first_ack_after(NemesisClock::time_point since) const;
  size_t reconnects() const { return reconnects_; }
  // The longest time between two acknowledgements of this sender's load (from its first to its last): how
  // long its client went without service.
  NemesisClock::duration longest_ack_gap() const;

  // Sends every SEND that was not acknowledged again (same key and body, through any gateway) until it is,
  // recording each attempt; stop() first. The number sent again, or the last error of one that was still
  // not acknowledged after `within`.
  Result<size_t> retry_unacknowledged(std::chrono::seconds within);

  static constexpr const char* kBody = "nemesis load";

 private:
  void run();
  void reconnect();

  checker::HistoryRecorder& h_;
  const std::vector<uint16_t> ports_;
  size_t next_port_;
  const std::string name_;
  const std::vector<std::string> recipients_;
  std::unique_ptr<Client> client_;  // the sender thread's
  mutable std::mutex mu_;
  std::vector<SendOutcome> outcomes_;  // guarded by mu_
  std::atomic<size_t> reconnects_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A device of `user` ("watch") running the client loop of docs/protocol.md ("Delivery":
// client/mailbox_feed.h) while the faults are injected: every DELIVER and SYNC_PAGE it receives is recorded
// as a frame, and what the loop showed is recorded as shown when it stops, so the checker judges frontiers,
// pages and messages shown twice, not only the final mailboxes. A connection that fails (a paused or cut
// gateway, a SYNC left without an answer for 5 s) is replaced on the next gateway, the loop going on from its
// cursor and the message ids it remembers, as a client keeps them.
class NemesisWatcher {
 public:
  NemesisWatcher(checker::HistoryRecorder& h, std::vector<uint16_t> ports, std::string user);
  ~NemesisWatcher() { stop(); }
  NemesisWatcher(const NemesisWatcher&) = delete;
  NemesisWatcher& operator=(const NemesisWatcher&) = delete;

  // Stops the loop and records what it showed (once).
  void stop();
  size_t frames() const { return frames_; }

 private:
  void run();

  checker::HistoryRecorder& h_;
  const std::vector<uint16_t> ports_;
  const std::string user_;
  std::vector<Entry> shown_;  // the loop thread's until stop() joined it
  std::atomic<size_t> frames_{0};
  std::atomic<bool> stop_{false};
  bool recorded_ = false;
  std::thread thread_;
};

// Waits until every sender has `n` acknowledgements of SENDs started at or after `since`.
bool wait_for_acks(const std::vector<std::unique_ptr<NemesisSender>>& senders, NemesisClock::time_point since,
                   size_t n, std::chrono::seconds within);

// Stops every sender's load, then retries each SEND of it that was not acknowledged, with its key, as a
// client does after a fault; the number retried. A retry that is never acknowledged fails the test.
size_t stop_and_retry(std::vector<std::unique_ptr<NemesisSender>>& senders);

// After the senders stopped and retried: reads the mailbox of every recipient and sender (until each holds
// what it was acknowledged), records them as final, and judges the history (a test failure on a
// violation). Returns the checker's report (its stats are the figures of docs/reliability.md).
checker::CheckReport judge(checker::HistoryRecorder& h, const Deployment& qim,
                           const std::vector<std::unique_ptr<NemesisSender>>& senders);

// Prints the figures of one scenario as docs/reliability.md's table has them.
void print_figures(const std::string& scenario, const checker::CheckReport& report, size_t retried,
                   double recover_s, double took_s);

}  // namespace qim::e2e
