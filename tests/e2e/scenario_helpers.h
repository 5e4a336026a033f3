#pragma once
// Small checks the end-to-end scenario files share (scenarios_*_test.cc).

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
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
