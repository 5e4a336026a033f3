#pragma once
// Small checks the end-to-end scenario files share (scenarios_*_test.cc).

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/conversation.h"
#include "e2e/e2e_env.h"

namespace qim::e2e {

// The direct conversation of two users, as the string the protocol carries.
inline std::string conv(const std::string& a, const std::string& b) {
  return direct_conversation(*UserId::parse(a), *UserId::parse(b))->str();
}

inline bool has_cmid(const std::vector<Entry>& entries, const std::string& cmid) {
  return std::any_of(entries.begin(), entries.end(), [&](const Entry& e) { return e.client_msg_id == cmid; });
}

// A request's answer as its code: the frame's type, or the error's code (the message's text before ':').
inline std::string code(const Result<ServerFrame>& r) {
  if (r.ok()) return r->type;
  const std::string& m = r.error().message();
  return m.substr(0, m.find(':'));
}

// Message `id` of `conversation` as `c` reads it in HISTORY, once `ready` holds or kWait passed (the
// archiver lags).
template <typename Ready>
std::optional<Entry> history_entry(Client& c, const std::string& conversation, uint64_t id, Ready ready) {
  std::optional<Entry> found;
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (true) {
    auto page = c.history(conversation, std::nullopt, 50);
    if (!page.ok()) {
      ADD_FAILURE() << "HISTORY: " << page.error().to_string();
      return std::nullopt;
    }
    found.reset();
    for (const Entry& e : page->entries) {
      if (e.message_id == id) found = e;
    }
    if ((found && ready(*found)) || std::chrono::steady_clock::now() >= deadline) return found;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// The first and the last gateway of a deployment (the same one on `qim up`).
inline uint16_t first_gateway(const Deployment& qim) {
  return qim.gateway_ports().front();
}
inline uint16_t last_gateway(const Deployment& qim) {
  return qim.gateway_ports().back();
}

// The next frame of `type` whose text contains `text`, within `wait`.
inline Result<ServerFrame> next(Client& c, std::string_view type, std::string_view text,
                                std::chrono::milliseconds wait = kWait) {
  return c.wait_for(
      [&](const ServerFrame& f) { return f.type == type && f.raw.find(text) != std::string::npos; }, wait);
}

inline void expect_strictly_increasing(const std::vector<Entry>& entries) {
  for (size_t i = 1; i < entries.size(); ++i) {
    EXPECT_LT(entries[i - 1].seq, entries[i].seq) << "at " << i;
  }
}

}  // namespace qim::e2e
