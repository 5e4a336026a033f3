#include "api/api_router.h"

#include <spdlog/spdlog.h>

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <future>
#include <thread>

#include "api/problem.h"
#include "api/route_support.h"
#include "auth/token.h"
#include "core/conversation.h"
#include "gateway/attachment_requests.h"
#include "gateway/group_requests.h"
#include "gateway/history_requests.h"
#include "gateway/inbox_requests.h"
#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/server_frame.h"
#include "gateway/send_request.h"
#include "inbox/privacy.h"
#include "outbox/outbox_record.h"

namespace qim::api {

namespace json = boost::json;

namespace {

std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto hexval = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hexval(s[i + 1]) * 16 + hexval(s[i + 2])));
      i += 2;
    } else if (s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

void split_target(std::string_view target, std::vector<std::string>& parts,
                  std::map<std::string, std::string>& query) {
  const size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.push_back(percent_decode(path.substr(start, slash - start)));
    start = slash + 1;
  }
  if (q == std::string_view::npos) return;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    size_t eq = pair.find('=');
    query[percent_decode(pair.substr(0, eq))] =
        eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
}

// A page's query parameters (`before`, `limit`) copied into its frame, which the frame's parser then checks;
// INVALID_ARGUMENT for a `limit` that is no integer or a parameter of another name.
std::optional<ApiResponse> add_paging(const std::map<std::string, std::string>& q, json::object& frame) {
  for (const auto& [k, v] : q) {
    if (k == "before") {
      frame["before"] = v;
    } else if (k == "limit") {
      int64_t limit = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), limit);
      if (ec != std::errc() || end != v.data() + v.size())
        return ApiRouter::problem(WireCode::kInvalidArgument, "query parameter 'limit': expected an integer");
      frame["limit"] = limit;
    } else {
      return ApiRouter::problem(WireCode::kInvalidArgument, "unknown query parameter '" + k + "'");
    }
  }
  return std::nullopt;
}

std::string group_ref(const std::string& group) {
  return group.starts_with("g:") ? group : "g:" + group;
}

}  // namespace

ApiResponse ApiRouter::problem(WireCode code, std::string_view detail, unsigned status) {
  ApiResponse r;
  r.status = status != 0 ? status : http_status_of(code);
  r.content_type = std::string(kProblemMediaType);
  r.body = problem_json(code, detail, r.status);
  return r;
}

ApiRouter::ApiRouter(ApiOptions options, ApiDeps deps)
    : options_(std::move(options)), deps_(std::move(deps)), keys_(options_.keys_file) {}

bool ApiRouter::take_token(const std::string& key_id) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(buckets_mu_);
  auto it = buckets_.find(key_id);
  if (it == buckets_.end())
    it = buckets_.emplace(key_id, TokenBucket(options_.rate_per_second, options_.burst, now)).first;
  return it->second.take(now);
}

ApiResponse ApiRouter::handle(const ApiRequest& r) {
  // Who asks: a Bearer key, checked before anything else is looked at.
  constexpr std::string_view kBearer = "Bearer ";
  if (r.authorization.empty())
    return problem(WireCode::kUnauthenticated,
                   "no Authorization header: send 'Authorization: Bearer <API key>'");
  if (!r.authorization.starts_with(kBearer))
    return problem(WireCode::kUnauthenticated, "the Authorization header is not 'Bearer <API key>'");
  auto key = keys_.verify(std::string_view(r.authorization).substr(kBearer.size()));
  if (!key.ok()) {
    if (key.code() != Errc::kUnauthenticated) {
      spdlog::error("api: the key file {} cannot be read: {}", keys_.path(), key.error().to_string());
      return problem(WireCode::kUnavailable, "the API key file cannot be read (logged)");
    }
    return problem(WireCode::kUnauthenticated, key.error().message());
  }
  if (!take_token(key->id)) {
    ApiResponse out =
        problem(WireCode::kRateLimited, "API key " + key->id + " is over its rate (" +
                                            std::to_string(static_cast<int64_t>(options_.rate_per_second)) +
                                            " requests per second, QIM_API_RATE); retry later");
    out.headers.emplace_back("Retry-After", "1");
    return out;
  }

  std::vector<std::string> parts;
  std::map<std::string, std::string> q;
  split_target(r.target, parts, q);
  const size_t n = parts.size();
  // The route: its methods and scope, then the call.
  struct Match {
    std::vector<std::string> methods;
    Scope scope = Scope::kRead;
  };
  std::optional<Match> m;
  auto is = [&](std::initializer_list<std::string_view> shape) {
    if (shape.size() != n) return false;
    size_t i = 0;
    for (std::string_view s : shape) {
      if (s != "*" && parts[i] != s) return false;
      ++i;
    }
    return true;
  };
  if (is({"v1", "messages"})) {
    m = Match{{"POST"}, Scope::kSend};
  } else if (is({"v1", "users"})) {
    m = Match{{"GET", "POST"}, Scope::kUsers};
  } else if (is({"v1", "users", "*"})) {
    m = Match{{"GET", "PATCH", "DELETE"}, Scope::kUsers};
  } else if (is({"v1", "groups"})) {
    m = Match{{"POST"}, Scope::kGroups};
  } else if (is({"v1", "groups", "*"})) {
    m = Match{{"PATCH"}, Scope::kGroups};
  } else if (is({"v1", "groups", "*", "members"})) {
    m = Match{{"GET", "POST"}, Scope::kGroups};
  } else if (is({"v1", "groups", "*", "members", "*"})) {
    m = Match{{"DELETE"}, Scope::kGroups};
  } else if (is({"v1", "users", "*", "groups"})) {
    m = Match{{"GET"}, Scope::kGroups};
  } else if (is({"v1", "users", "*", "conversations"})) {
    m = Match{{"GET"}, Scope::kRead};
  } else if (is({"v1", "conversations", "*", "history"})) {
    m = Match{{"GET"}, Scope::kRead};
  } else if (is({"v1", "conversations", "*", "messages", "*", "edit"}) ||
             is({"v1", "conversations", "*", "messages", "*", "recall"})) {
    m = Match{{"POST"}, Scope::kSend};
  } else if (is({"v1", "conversations", "*", "messages", "*", "reactions"})) {
    m = Match{{"POST", "DELETE"}, Scope::kSend};
  } else if (is({"v1", "conversations", "*", "messages", "*", "attachments", "*"})) {
    m = Match{{"GET"}, Scope::kRead};
  } else if (is({"v1", "attachments"})) {
    m = Match{{"POST"}, Scope::kSend};
  } else if (is({"v1", "tokens"})) {
    m = Match{{"POST"}, Scope::kTokens};
  } else if (is({"v1", "users", "*", "devices"})) {
    m = Match{{"GET"}, Scope::kTokens};
  } else if (is({"v1", "users", "*", "sessions"}) || is({"v1", "users", "*", "devices", "*", "sessions"})) {
    m = Match{{"DELETE"}, Scope::kTokens};
  } else if (is({"v1", "users", "*", "push-targets"})) {
    m = Match{{"GET"}, Scope::kTokens};
  } else if (is({"v1", "users", "*", "push-targets", "*"})) {
    m = Match{{"PUT", "DELETE"}, Scope::kTokens};
  }
  const std::string path = r.target.substr(0, r.target.find('?'));
  if (!m) return problem(WireCode::kNotFound, "no route " + path + " (docs/api.md lists them)");
  if (std::find(m->methods.begin(), m->methods.end(), r.method) == m->methods.end()) {
    std::string allow;
    for (const auto& method : m->methods) allow += (allow.empty() ? "" : ", ") + method;
    ApiResponse out = problem(WireCode::kNotFound, path + " takes " + allow + ", not " + r.method, 405);
    out.headers.emplace_back("Allow", allow);
    return out;
  }
  if ((key->scopes & static_cast<Scopes>(m->scope)) == 0)
    return problem(WireCode::kForbidden, "API key " + key->id + " lacks the scope '" +
                                             std::string(scope_name(m->scope)) +
                                             "' (it has: " + format_scopes(key->scopes) + ")");

  if (parts[1] == "messages") return post_message(r, q, parts);
  if (parts[1] == "tokens") return mint(r);
  if (parts[1] == "attachments") return attach(r);
  if (parts[1] == "conversations" && n == 7) return attachment_url(q, parts);
  if (parts[1] == "conversations" && n == 6) return message_event(r, parts);
  if (parts[1] == "conversations") return history(q, parts[2]);
  if (parts[1] == "users" && n <= 3) return users(r, q, parts);
  if (parts[1] == "users") {
    if (parts[3] == "conversations") return conversations(q, parts[2]);
    if (parts[3] == "push-targets") return push_targets(r, parts);
    if (parts[3] == "devices" && n == 4) return devices(parts[2]);
    if (parts[3] == "sessions") return revoke(parts[2], std::nullopt);
    if (n == 6) return revoke(parts[2], parts[4]);
    return group_read("GROUPS", parts[2], "");
  }
  // groups
  if (deps_.groups == nullptr)
    return problem(WireCode::kUnavailable, "groups are not served by this gateway");
  if (n == 2) return group_change(r, parts, "GROUP_CREATE", "");
  if (n == 3) return group_change(r, parts, "GROUP_RENAME", "");
  if (n == 4 && r.method == "GET") {
    auto it = q.find("actor");
    if (it == q.end())
      return problem(WireCode::kInvalidArgument, "query parameter 'actor' (the member who asks) is missing");
    return group_read("GROUP_MEMBERS", it->second, parts[2]);
  }
  if (n == 4) return group_change(r, parts, "GROUP_ADD", "");
  auto it = q.find("actor");
  if (it == q.end())
    return problem(WireCode::kInvalidArgument, "query parameter 'actor' (the member who removes) is missing");
  return group_change(r, parts, "GROUP_REMOVE", it->second);
}

ApiResponse ApiRouter::post_message(const ApiRequest& r, const std::map<std::string, std::string>&,
                                    const std::vector<std::string>&) {
  auto body = body_object(r.body);
  if (auto* p = std::get_if<ApiResponse>(&body)) return std::move(*p);
  const json::object& in = std::get<json::object>(body);
  // Who sends: "from" (a user), else the system user.
  auto sender = acting_user(in, options_.system_user);
  if (auto* p = std::get_if<ApiResponse>(&sender)) return std::move(*p);
  std::string device_text = "api";
  if (const json::value* d = in.if_contains("device")) {
    if (!d->is_string())
      return problem(WireCode::kInvalidArgument, "field 'device': expected a device id string");
    device_text = std::string(d->as_string());
  }
  auto device = DeviceId::parse(device_text);
  if (!device.ok()) return problem(WireCode::kInvalidArgument, "field 'device': " + device.error().message());
  for (const auto& [k, v] : in) {
    if (k != "from" && k != "device" && k != "to" && k != "conversation" && k != "body" &&
        k != "attachments" && k != "reply_to")
      return problem(WireCode::kInvalidArgument, "unknown field '" + std::string(k) + "'");
  }
  // The SEND frame of the request, checked by the protocol's parser (client_msg_id, to / conversation, body).
  json::object frame;
  frame["type"] = "SEND";
  frame["ref"] = kRef;
  std::string client_msg_id = r.idempotency_key;
  if (!r.has_idempotency_key) {
    // Not idempotent: a fresh id per request (a retry sends the message again).
    client_msg_id = "api-" + mint_group_id().str();
  }
  frame["client_msg_id"] = client_msg_id;
  copy_field(in, frame, "to");
  copy_field(in, frame, "conversation");
  copy_field(in, frame, "body");
  copy_field(in, frame, "reply_to");
  copy_field(in, frame, "attachments");
  auto parsed = parse_frame(frame, deps_.max_body_bytes);
  if (auto* p = std::get_if<ApiResponse>(&parsed)) {
    if (!r.has_idempotency_key || p->body.find("client_msg_id") == std::string::npos) return std::move(*p);
    return problem(WireCode::kInvalidArgument, "header 'Idempotency-Key': 1.." +
                                                   std::to_string(kMaxClientMsgIdBytes) +
                                                   " bytes of a client_msg_id (docs/protocol.md)");
  }
  SendFrame send = std::get<SendFrame>(std::get<ClientFrame>(std::move(parsed)).body);
  const UserId& who = std::get<UserId>(sender);

  SendTarget target = resolve_send_target(who, send, deps_.users);
  if (!target.ok) return problem(target.code, target.message);
  // The frames' block rule (docs/protocol.md "Blocking"): a direct message to a user who blocks the sender
  // is refused and nothing is appended, whichever door it comes through.
  // The blockers are read only for a direct conversation (a group's SEND has no block rule).
  if (auto c = Conversation::of(target.conversation); c.ok() && c->direct_pair() != nullptr && deps_.inbox) {
    auto blockers = Privacy(deps_.inbox->backend()).blocked_by(who);
    if (!blockers.ok())
      return problem(wire_code_of(blockers.code()), "the block check failed: " + blockers.error().message());
    if (auto refused = blocked_send(who, target.conversation, *blockers))
      return problem(refused->code, refused->message);
  }
  if (target.group) {
    if (deps_.groups == nullptr)
      return problem(WireCode::kUnavailable, "groups are not served by this gateway");
    GroupCheck check = check_group_member(*deps_.groups, *target.group, who);
    if (!check.member) return problem(check.code, check.message);
  }
  // The frames' attachment rule (attachment_requests.h): each upload checked, the body then the attachments
  // body with `body` as its caption; refused (ATTACHMENTS_DISABLED without an object store), nothing
  // appended.
  if (!send.attachments.empty()) {
    auto checked = checked_send_body(deps_.attachments, who, target.conversation, send, deps_.max_body_bytes);
    if (auto* refusal = std::get_if<attachments::Refusal>(&checked))
      return problem(refusal->code, refusal->message);
    send.body = std::get<std::string>(std::move(checked));
  }
  // The frames' reply rule (send_request.h): the same check, nothing appended when refused.
  const std::optional<MessageId> reply_to = send.reply_to;
  if (reply_to && deps_.outbox != nullptr) {
    if (auto refusal = check_reply_target(*deps_.outbox, target.conversation, *reply_to))
      return problem(refusal->code, refusal->message);
  }
  const uint64_t fingerprint = send_fingerprint(target.conversation, send.body, reply_to);
  std::promise<std::pair<Result<SentMessage>, bool>> promise;
  auto future = promise.get_future();
  SendDoor door{deps_.outbox, deps_.dedup, deps_.clock.get(), nullptr, nullptr, deps_.before_send};
  auto at_once =
      submit_send(door, who, *device, send.client_msg_id, target.conversation, std::move(send.body), reply_to,
                  [&promise](const Result<SentMessage>& sent, bool duplicate) {
                    promise.set_value({sent, duplicate});
                  });
  auto [sent, duplicate] = at_once ? std::pair<Result<SentMessage>, bool>(*at_once, true) : future.get();
  if (!sent.ok() && sent.code() == kBeforeSendRejected)
    return problem(WireCode::kRejected, sent.error().message());
  if (!sent.ok())
    return problem(wire_code_of(sent.code()),
                   "message '" + client_msg_id + "' was not stored: " + sent.error().message());
  if (auto refusal = send_refusal(client_msg_id, fingerprint, *sent)) {
    return problem(refusal->code, refusal->message + " (Idempotency-Key)", 409);
  }
  SendAck ack{client_msg_id, sent->id, sent->conversation, sent->server_time_ms, duplicate};
  return from_frame(encode_send_ack(kRef, ack), duplicate ? 200 : 201);
}

ApiResponse ApiRouter::group_change(const ApiRequest& r, const std::vector<std::string>& parts,
                                    std::string_view type, const std::string& actor_from_query) {
  json::object frame;
  frame["type"] = type;
  frame["ref"] = kRef;
  std::string actor = actor_from_query;
  if (type != "GROUP_REMOVE") {
    auto body = body_object(r.body);
    if (auto* p = std::get_if<ApiResponse>(&body)) return std::move(*p);
    const json::object& in = std::get<json::object>(body);
    for (const auto& [k, v] : in) {
      if (k == "actor") {
        if (!v.is_string())
          return problem(WireCode::kInvalidArgument, "field 'actor': expected a user id string");
        actor = std::string(v.as_string());
      } else if (k == "name" || k == "members") {
        frame[k] = v;
      } else {
        return problem(WireCode::kInvalidArgument, "unknown field '" + std::string(k) + "'");
      }
    }
  } else {
    frame["members"] = json::array{json::value(parts[4])};
  }
  if (actor.empty())
    return problem(WireCode::kInvalidArgument, "field 'actor' (the member who acts) is missing");
  auto who = user_field(actor, "actor");
  if (auto* p = std::get_if<ApiResponse>(&who)) return std::move(*p);
  if (type != "GROUP_CREATE") frame["group"] = group_ref(parts[2]);
  auto parsed = parse_frame(frame, deps_.max_body_bytes);
  if (auto* p = std::get_if<ApiResponse>(&parsed)) return std::move(*p);
  const GroupFrame group_frame = std::get<GroupFrame>(std::get<ClientFrame>(std::move(parsed)).body);

  GroupRequestDeps gdeps{deps_.groups, deps_.outbox, deps_.clock.get(), deps_.group_max_members,
                         deps_.group_apply_wait_ms};
  gdeps.users = deps_.users;
  Principal principal{std::get<UserId>(who), DeviceId::unchecked("api"), 0};
  GroupPlan plan = plan_group_frame(gdeps, std::string(kRef), principal, group_frame);
  if (!plan.answer.empty()) return from_frame(plan.answer);
  // Appended as the connection does, then fanout's decision is polled (2 ms doubling to 50 ms).
  std::promise<Result<Offset>> appended;
  auto offset_future = appended.get_future();
  const OutboxRecord& record = *plan.record;
  deps_.outbox->append(plan.partition, record.conversation.str(), encode_outbox_record(record),
                       [&appended](Result<Offset> offset) { appended.set_value(std::move(offset)); });
  Result<Offset> offset = offset_future.get();
  if (!offset.ok()) return from_frame(group_append_failed(std::string(kRef), offset.error()));
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(deps_.group_apply_wait_ms);
  auto pause = std::chrono::milliseconds(2);
  while (true) {
    if (auto answer = group_outcome_answer(*deps_.groups, std::string(kRef), plan, *offset))
      return from_frame(*answer, type == "GROUP_CREATE" ? 201 : 200);
    if (std::chrono::steady_clock::now() >= deadline) return from_frame(group_not_applied(std::string(kRef)));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

ApiResponse ApiRouter::group_read(const std::string& frame_type, const std::string& actor,
                                  const std::string& group) {
  if (deps_.groups == nullptr)
    return problem(WireCode::kUnavailable, "groups are not served by this gateway");
  auto who = user_field(actor, frame_type == "GROUPS" ? "user" : "actor");
  if (auto* p = std::get_if<ApiResponse>(&who)) return std::move(*p);
  json::object frame;
  frame["type"] = frame_type;
  frame["ref"] = kRef;
  if (!group.empty()) frame["group"] = group_ref(group);
  auto parsed = parse_frame(frame, deps_.max_body_bytes);
  if (auto* p = std::get_if<ApiResponse>(&parsed)) return std::move(*p);
  GroupRequestDeps gdeps{deps_.groups, deps_.outbox, deps_.clock.get(), deps_.group_max_members,
                         deps_.group_apply_wait_ms};
  Principal principal{std::get<UserId>(who), DeviceId::unchecked("api"), 0};
  return from_frame(plan_group_frame(gdeps, std::string(kRef), principal,
                                     std::get<GroupFrame>(std::get<ClientFrame>(std::move(parsed)).body))
                        .answer);
}

ApiResponse ApiRouter::history(const std::map<std::string, std::string>& q, const std::string& conversation) {
  json::object frame;
  frame["type"] = "HISTORY";
  frame["ref"] = kRef;
  frame["conversation"] = conversation;
  if (auto refused = add_paging(q, frame)) return std::move(*refused);
  auto parsed = parse_frame(frame, deps_.max_body_bytes);
  if (auto* p = std::get_if<ApiResponse>(&parsed)) return std::move(*p);
  const HistoryFrame f = std::get<HistoryFrame>(std::get<ClientFrame>(std::move(parsed)).body);
  // The server reads as itself (reader nullopt): any conversation, a group's whole delivered history.
  return from_frame(answer_history(deps_.history, deps_.groups, nullptr, std::string(kRef), std::nullopt,
                                   HistoryQuery{f.conversation, f.before, f.limit}, nullptr, deps_.messages,
                                   deps_.outbox));
}

ApiResponse ApiRouter::conversations(const std::map<std::string, std::string>& q, const std::string& user) {
  if (deps_.inbox == nullptr)
    return problem(WireCode::kUnavailable, "the inbox is not served by this gateway");
  auto who = user_field(user, "user");
  if (auto* p = std::get_if<ApiResponse>(&who)) return std::move(*p);
  json::object frame;
  frame["type"] = "CONVERSATIONS";
  frame["ref"] = kRef;
  if (auto refused = add_paging(q, frame)) return std::move(*refused);
  auto parsed = parse_frame(frame, deps_.max_body_bytes);
  if (auto* p = std::get_if<ApiResponse>(&parsed)) return std::move(*p);
  InboxRequestDeps ideps{deps_.inbox, deps_.groups, nullptr,    deps_.clock.get(),
                         nullptr,     nullptr,      deps_.users};
  return from_frame(answer_inbox_frame(ideps, std::string(kRef), InboxCaller{std::get<UserId>(who), 0},
                                       std::get<InboxFrame>(std::get<ClientFrame>(std::move(parsed)).body)));
}

ApiResponse ApiRouter::mint(const ApiRequest& r) {
  auto body = body_object(r.body);
  if (auto* p = std::get_if<ApiResponse>(&body)) return std::move(*p);
  const json::object& in = std::get<json::object>(body);
  std::string user_text, device_text = "d1";
  int64_t ttl_s = 3600;
  for (const auto& [k, v] : in) {
    if ((k == "user" || k == "device") && v.is_string()) {
      (k == "user" ? user_text : device_text) = std::string(v.as_string());
    } else if (k == "ttl_seconds" && v.is_int64()) {
      ttl_s = v.as_int64();
    } else if (k == "user" || k == "device" || k == "ttl_seconds") {
      return problem(WireCode::kInvalidArgument, "field '" + std::string(k) + "': wrong type");
    } else {
      return problem(WireCode::kInvalidArgument, "unknown field '" + std::string(k) + "'");
    }
  }
  if (user_text.empty()) return problem(WireCode::kInvalidArgument, "field 'user' is missing");
  auto user = user_field(user_text, "user");
  if (auto* p = std::get_if<ApiResponse>(&user)) return std::move(*p);
  auto device = DeviceId::parse(device_text);
  if (!device.ok()) return problem(WireCode::kInvalidArgument, "field 'device': " + device.error().message());
  if (ttl_s < 1 || ttl_s > options_.max_token_ttl_s)
    return problem(WireCode::kInvalidArgument,
                   "field 'ttl_seconds': 1.." + std::to_string(options_.max_token_ttl_s));
  auto token = mint_token(deps_.auth_secret, std::get<UserId>(user), *device, ttl_s * 1000, *deps_.clock);
  if (!token.ok()) return problem(wire_code_of(token.code()), token.error().message());
  auto principal = verify_token(deps_.auth_secret, *token, *deps_.clock);
  json::object out;
  out["token"] = *token;
  out["user"] = user_text;
  out["device"] = device_text;
  out["expires_at"] = principal.ok() ? principal->expires_at_ms : 0;
  return json_response(201, json::serialize(out));
}

}  // namespace qim::api
