#pragma once
// Recording a client history in an e2e or fault test and judging it with the one checker
// (src/checker/checker.h, issue 42 item 4). The history is written next to the test output (the directory
// of GTEST_OUTPUT, or QIM_E2E_HISTORY_DIR, or the temporary directory) as <name>.history.jsonl, so a run
// can be checked again with `qim-history-check FILE`.

#include <optional>
#include <string>
#include <vector>

#include "checker/checker.h"
#include "checker/op_history.h"
#include "e2e/e2e_env.h"

namespace qim::e2e {

// Where the history of `name` is written.
std::string history_path(const std::string& name);

// A SEND to user `to` recorded as invoke, then ok (SEND_ACK), fail (an ERROR: its wire code) or unknown
// (no answer: the connection's error; or UNAVAILABLE, which may follow an append that was stored). Returns
// what Client::send returned.
Result<ServerFrame> recorded_send(checker::HistoryRecorder& h, Client& c, const std::string& label,
                                  const std::string& sender, const std::string& to, const std::string& cmid,
                                  const std::string& body);

// The wire code an ERROR answer's message starts with ("FORBIDDEN: ..." -> "FORBIDDEN"); empty for the
// client's own errors (a timeout, a closed connection), which leave a SEND's outcome unknown.
std::string wire_code_of(const std::string& message);

// Records the answer to a SEND already recorded as invoked: ok, fail (a definite refusal) or unknown (no
// answer, or UNAVAILABLE, which may follow an append that was stored).
void record_answer(checker::HistoryRecorder& h, const std::string& label, const std::string& sender,
                   const std::string& cmid, const Result<ServerFrame>& ack);
// The same from a stored outcome: `acked_id` if it was acknowledged, else the error's message.
void record_answer(checker::HistoryRecorder& h, const std::string& label, const std::string& sender,
                   const std::string& cmid, std::optional<uint64_t> acked_id, const std::string& error);

// Reads `user`'s whole mailbox (SYNC from 0 to the end, every copy as stored) and records it as the
// user's final read. False (with a test failure) if the read failed.
bool record_final_mailbox(checker::HistoryRecorder& h, Client& c, const std::string& user);

// Checks the history recorded so far; a failure prints the report (with the excerpts) and the file.
void expect_history_ok(const checker::HistoryRecorder& h);

}  // namespace qim::e2e
