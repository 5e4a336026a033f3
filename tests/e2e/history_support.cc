#include "e2e/history_support.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "core/conversation.h"

namespace qim::e2e {

std::string history_path(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path();
  if (const char* d = std::getenv("QIM_E2E_HISTORY_DIR"); d && *d) {
    dir = d;
  } else if (const char* g = std::getenv("GTEST_OUTPUT"); g && std::string_view(g).starts_with("xml:")) {
    fs::path out = std::string(g).substr(4);
    dir = out.has_filename() ? out.parent_path() : out;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  return (dir / (name + ".history.jsonl")).string();
}

Result<ServerFrame> recorded_send(checker::HistoryRecorder& h, Client& c, const std::string& label,
                                  const std::string& sender, const std::string& to, const std::string& cmid,
                                  const std::string& body) {
  auto conversation = direct_conversation(*UserId::parse(sender), *UserId::parse(to));
  h.invoke(label, sender, conversation.ok() ? conversation->str() : "", cmid, body);
  auto ack = c.send(to, cmid, body);
  record_answer(h, label, sender, cmid, ack);
  return ack;
}

std::string wire_code_of(const std::string& message) {
  const auto colon = message.find(':');
  if (colon == 0 || colon == std::string::npos) return {};
  for (size_t i = 0; i < colon; ++i)
    if (!(std::isupper(static_cast<unsigned char>(message[i])) || message[i] == '_')) return {};
  return message.substr(0, colon);
}

void record_answer(checker::HistoryRecorder& h, const std::string& label, const std::string& sender,
                   const std::string& cmid, std::optional<uint64_t> acked_id, const std::string& error) {
  if (acked_id) {
    h.ok(label, sender, cmid, *acked_id);
    return;
  }
  // UNAVAILABLE is no definite refusal: on Kafka an append that timed out after reaching the broker may
  // have been stored (docs/protocol.md, "Idempotent send").
  const std::string code = wire_code_of(error);
  if (code.empty() || code == "UNAVAILABLE") {
    h.unknown(label, sender, cmid, error);
  } else {
    h.fail(label, sender, cmid, code);
  }
}

void record_answer(checker::HistoryRecorder& h, const std::string& label, const std::string& sender,
                   const std::string& cmid, const Result<ServerFrame>& ack) {
  // An engaged optional only for a SEND_ACK: a refusal or no answer is no acknowledgement of message id 0.
  record_answer(h, label, sender, cmid, ack.ok() ? std::optional<uint64_t>(ack->message_id) : std::nullopt,
                ack.ok() ? "" : ack.error().message());
}

bool record_final_mailbox(checker::HistoryRecorder& h, Client& c, const std::string& user) {
  auto all = sync_all(c, 0);
  if (!all) return false;
  h.final_mailbox(user, *all);
  return true;
}

void expect_history_ok(const checker::HistoryRecorder& h) {
  auto report = checker::check_history(h.events());
  EXPECT_TRUE(report.ok()) << report.to_string() << "(history: " << h.path() << ")";
  std::cout << "[ history  ] " << h.path() << ": " << report.to_string();
}

}  // namespace qim::e2e
