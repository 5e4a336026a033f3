// libFuzzer target: the gateway's frame parser (the one place untrusted client bytes are decoded).
// Properties checked on every input: the parser returns (never crashes, never throws); an error carries a
// known wire code and a message; and whatever text the parser echoes back (messages, refs, fields) is
// written by JsonWriter as valid JSON, so the server's reply can never be malformed.
#include <simdjson.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/json_writer.h"

namespace {

void must_be_valid_json(const std::string& text) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  if (p.parse(text).get(e) != simdjson::SUCCESS) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static qim::FrameParser parser;  // reused across inputs, as a connection reuses its parser
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = parser.parse(text, qim::FrameLimits{1024});

  qim::JsonWriter w;
  w.begin_object();
  if (auto* err = std::get_if<qim::FrameError>(&parsed)) {
    if (err->message.empty() || qim::wire_code_name(err->code).empty()) std::abort();
    w.field("code", qim::wire_code_name(err->code)).field("message", err->message).field("ref", err->ref);
  } else {
    auto& frame = std::get<qim::ClientFrame>(parsed);
    w.field("ref", frame.ref);
    if (auto* send = std::get_if<qim::SendFrame>(&frame.body)) {
      if (send->to.has_value() == send->conversation.has_value()) std::abort();
      if (send->body.size() > 1024 || send->body.empty()) std::abort();
      w.field("client_msg_id", send->client_msg_id).field("body", send->body);
    } else if (auto* auth = std::get_if<qim::AuthFrame>(&frame.body)) {
      w.field("token", auth->token);
    } else if (auto* sync = std::get_if<qim::SyncFrame>(&frame.body)) {
      if (sync->limit < 1 || sync->limit > qim::kMaxSyncLimit) std::abort();
    } else if (auto* history = std::get_if<qim::HistoryFrame>(&frame.body)) {
      if (history->limit < 1 || history->limit > qim::kMaxHistoryLimit) std::abort();
      w.field("conversation", history->conversation.str());
    }
  }
  w.end_object();
  must_be_valid_json(w.text());

  // The escaper alone, on the raw bytes: any byte string becomes a valid JSON string.
  std::string raw;
  qim::append_json_string(raw, text);
  must_be_valid_json(raw);
  return 0;
}
