#include "checker/op_history.h"

#include <simdjson.h>

#include <chrono>

#include "gateway/protocol/json_fields.h"
#include "gateway/protocol/json_writer.h"

namespace qim::checker {

namespace {

constexpr std::string_view kKindNames[] = {"invoke",  "ok",    "fail",  "unknown",
                                           "members", "frame", "shown", "final"};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

using simdjson::dom::element;
using simdjson::dom::object;

using json_fields::str;
using json_fields::u64;

}  // namespace

std::string_view event_kind_name(EventKind kind) {
  return kKindNames[static_cast<size_t>(kind)];
}

HistoryEntry to_history_entry(const client::Entry& e) {
  return HistoryEntry{e.seq, e.message_id, e.conversation, e.sender, e.client_msg_id};
}

std::string encode_event(const HistoryEvent& e) {
  JsonWriter w;
  w.begin_object().field("kind", event_kind_name(e.kind)).key("t").int64(e.time_ms);
  if (!e.client.empty()) w.field("client", e.client);
  if (!e.user.empty()) w.field("user", e.user);
  if (!e.conversation.empty()) w.field("conversation", e.conversation);
  if (!e.client_msg_id.empty()) w.field("client_msg_id", e.client_msg_id);
  if (e.kind == EventKind::kInvoke) w.field("body", e.body);
  // Message id 0 is a real id (partition 0, offset 0): an ok always carries its id.
  if (e.kind == EventKind::kOk) w.key("message_id").uint64_as_string(e.message_id);
  if (!e.code.empty()) w.field("code", e.code);
  if (e.kind == EventKind::kMembers) {
    w.key("members").begin_array();
    for (const auto& m : e.members) w.string(m);
    w.end_array();
  }
  if (!e.frame_type.empty()) w.field("frame", e.frame_type);
  if (e.from) w.key("from").uint64_as_string(*e.from);
  if (e.kind == EventKind::kFrame) w.key("frontier").uint64_as_string(e.frontier);
  if (e.kind == EventKind::kFrame || e.kind == EventKind::kShown || e.kind == EventKind::kFinal) {
    w.key("entries").begin_array();
    for (const auto& x : e.entries) {
      w.begin_object()
          .key("seq")
          .uint64_as_string(x.seq)
          .key("message_id")
          .uint64_as_string(x.message_id)
          .field("conversation", x.conversation)
          .field("sender", x.sender)
          .field("client_msg_id", x.client_msg_id)
          .end_object();
    }
    w.end_array();
  }
  return w.end_object().take();
}

Result<HistoryEvent> parse_event(std::string_view line) {
  simdjson::dom::parser parser;
  object o;
  if (parser.parse(line.data(), line.size()).get_object().get(o) != simdjson::SUCCESS)
    return Error(Errc::kCorruptEntry, "not a JSON object");
  HistoryEvent e;
  const std::string kind = str(o, "kind");
  bool known = false;
  for (size_t i = 0; i < std::size(kKindNames); ++i) {
    if (kind == kKindNames[i]) {
      e.kind = static_cast<EventKind>(i);
      known = true;
    }
  }
  if (!known) return Error(Errc::kCorruptEntry, "unknown event kind '" + kind + "'");
  int64_t t = 0;
  if (o.at_key("t").get_int64().get(t) == simdjson::SUCCESS) e.time_ms = t;
  e.client = str(o, "client");
  e.user = str(o, "user");
  e.conversation = str(o, "conversation");
  e.client_msg_id = str(o, "client_msg_id");
  e.body = str(o, "body");
  const auto message_id = u64(o, "message_id");
  e.message_id = message_id.value_or(0);
  e.code = str(o, "code");
  e.frame_type = str(o, "frame");
  e.from = u64(o, "from");
  e.frontier = u64(o, "frontier").value_or(0);
  simdjson::dom::array list;
  if (o.at_key("members").get_array().get(list) == simdjson::SUCCESS) {
    for (element m : list) {
      std::string_view s;
      if (m.get_string().get(s) != simdjson::SUCCESS)
        return Error(Errc::kCorruptEntry, "a member is not a string");
      e.members.emplace_back(s);
    }
  }
  if (o.at_key("entries").get_array().get(list) == simdjson::SUCCESS) {
    for (element item : list) {
      object x;
      if (item.get_object().get(x) != simdjson::SUCCESS)
        return Error(Errc::kCorruptEntry, "an entry is not an object");
      auto seq = u64(x, "seq");
      auto id = u64(x, "message_id");
      if (!seq || !id) return Error(Errc::kCorruptEntry, "an entry without seq or message_id");
      e.entries.push_back(
          HistoryEntry{*seq, *id, str(x, "conversation"), str(x, "sender"), str(x, "client_msg_id")});
    }
  }
  if (e.kind == EventKind::kOk && !message_id)
    return Error(Errc::kCorruptEntry, "an ok event without message_id");
  if ((e.kind == EventKind::kInvoke || e.kind == EventKind::kOk || e.kind == EventKind::kFail ||
       e.kind == EventKind::kUnknown) &&
      (e.user.empty() || e.client_msg_id.empty()))
    return Error(Errc::kCorruptEntry,
                 std::string(event_kind_name(e.kind)) + " event without user or client_msg_id");
  if (e.kind == EventKind::kInvoke && e.conversation.empty())
    return Error(Errc::kCorruptEntry, "an invoke event without conversation");
  if (e.kind == EventKind::kFinal && e.user.empty())
    return Error(Errc::kCorruptEntry, "a final event without user");
  return e;
}

Result<std::vector<HistoryEvent>> load_history(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error(Errc::kIo, "cannot read history file " + path);
  std::vector<HistoryEvent> out;
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    auto e = parse_event(line);
    if (!e.ok())
      return Error(Errc::kCorruptEntry, path + ":" + std::to_string(n) + ": " + e.error().message());
    out.push_back(std::move(*e));
  }
  return out;
}

HistoryRecorder::HistoryRecorder(std::string path) : path_(std::move(path)), start_ms_(now_ms()) {
  out_.open(path_, std::ios::out | std::ios::trunc);
  open_ = static_cast<bool>(out_);
}

Status HistoryRecorder::status() const {
  std::lock_guard lock(mu_);
  if (!open_) return Error(Errc::kIo, "cannot write history file " + path_ + "; recording in memory only");
  return {};
}

void HistoryRecorder::record(HistoryEvent e) {
  std::lock_guard lock(mu_);
  e.time_ms = now_ms() - start_ms_;
  if (open_) {
    out_ << encode_event(e) << '\n';
    out_.flush();
  }
  events_.push_back(std::move(e));
}

namespace {
HistoryEvent send_event(EventKind kind, std::string_view client, std::string_view user,
                        std::string_view cmid) {
  HistoryEvent e;
  e.kind = kind;
  e.client = client;
  e.user = user;
  e.client_msg_id = cmid;
  return e;
}
std::vector<HistoryEntry> to_history(const std::vector<client::Entry>& entries) {
  std::vector<HistoryEntry> out;
  out.reserve(entries.size());
  for (const auto& x : entries) out.push_back(to_history_entry(x));
  return out;
}
}  // namespace

void HistoryRecorder::invoke(std::string_view client, std::string_view user, std::string_view conversation,
                             std::string_view client_msg_id, std::string_view body) {
  auto e = send_event(EventKind::kInvoke, client, user, client_msg_id);
  e.conversation = conversation;
  e.body = body;
  record(std::move(e));
}

void HistoryRecorder::ok(std::string_view client, std::string_view user, std::string_view client_msg_id,
                         uint64_t message_id) {
  auto e = send_event(EventKind::kOk, client, user, client_msg_id);
  e.message_id = message_id;
  record(std::move(e));
}

void HistoryRecorder::fail(std::string_view client, std::string_view user, std::string_view client_msg_id,
                           std::string_view code) {
  auto e = send_event(EventKind::kFail, client, user, client_msg_id);
  e.code = code;
  record(std::move(e));
}

void HistoryRecorder::unknown(std::string_view client, std::string_view user, std::string_view client_msg_id,
                              std::string_view why) {
  auto e = send_event(EventKind::kUnknown, client, user, client_msg_id);
  e.code = why;
  record(std::move(e));
}

void HistoryRecorder::members(std::string_view conversation, std::vector<std::string> members) {
  HistoryEvent e;
  e.kind = EventKind::kMembers;
  e.conversation = conversation;
  e.members = std::move(members);
  record(std::move(e));
}

void HistoryRecorder::frame(std::string_view client, std::string_view user, const client::ServerFrame& f) {
  if (f.type != "DELIVER" && f.type != "SYNC_PAGE") return;
  HistoryEvent e;
  e.kind = EventKind::kFrame;
  e.client = client;
  e.user = user;
  e.frame_type = f.type;
  if (f.type == "DELIVER") e.from = f.from;
  e.frontier = f.frontier;
  e.entries = to_history(f.entries);
  record(std::move(e));
}

void HistoryRecorder::shown(std::string_view client, std::string_view user,
                            const std::vector<client::Entry>& entries) {
  if (entries.empty()) return;
  HistoryEvent e;
  e.kind = EventKind::kShown;
  e.client = client;
  e.user = user;
  e.entries = to_history(entries);
  record(std::move(e));
}

void HistoryRecorder::final_mailbox(std::string_view user, const std::vector<client::Entry>& entries) {
  HistoryEvent e;
  e.kind = EventKind::kFinal;
  e.user = user;
  e.entries = to_history(entries);
  record(std::move(e));
}

std::vector<HistoryEvent> HistoryRecorder::events() const {
  std::lock_guard lock(mu_);
  return events_;
}

}  // namespace qim::checker
