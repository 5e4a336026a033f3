// The server API's edit, recall and reaction routes (docs/api.md "Editing and recalling", docs/adr/0167): the
// second door onto the EDIT, RECALL, REACT and UNREACT frames (docs/protocol.md "Editing and recalling",
// "Reactions"). The request becomes the
// frame, is checked by the protocol's parser and answered by the functions the frames call
// (gateway/message_event_requests.h: message_event_precheck, append_message_event) over the gateway's
// idempotency table, so the lifecycle rules, the Outbox record, fanout's decision and the codes are the
// frames' whichever door. The actor is `from`, else the system user, as POST /v1/messages names its sender;
// the system user is no moderator (it edits and recalls its own messages only; decision 167).
#include <future>

#include "api/api_router.h"
#include "api/route_support.h"
#include "gateway/group_requests.h"
#include "gateway/message_event_requests.h"
#include "gateway/protocol/client_frame.h"

namespace qim::api {

ApiResponse ApiRouter::message_event(const ApiRequest& r, const std::vector<std::string>& parts) {
  // /v1/conversations/{conversation}/messages/{message_id}/{edit|recall|reactions}
  const bool edit = parts[5] == "edit";
  const bool reaction = parts[5] == "reactions";
  auto body = body_object(r.body);
  if (auto* p = std::get_if<ApiResponse>(&body)) return std::move(*p);
  const json::object& in = std::get<json::object>(body);
  auto actor = acting_user(in, options_.system_user);
  if (auto* p = std::get_if<ApiResponse>(&actor)) return std::move(*p);
  json::object frame;
  frame["type"] = edit ? "EDIT" : !reaction ? "RECALL" : r.method == "POST" ? "REACT" : "UNREACT";
  frame["ref"] = kRef;
  for (const auto& [k, v] : in) {
    if (k == "from") {
      continue;
    } else if (k == "body" && edit) {
      frame[k] = v;  // checked by the EDIT frame's parser
    } else if (k == "reaction" && reaction) {
      frame["emoji"] = v;  // the REACT / UNREACT frame's field, checked by its parser
    } else {
      return problem(WireCode::kInvalidArgument, "unknown field '" + std::string(k) + "'");
    }
  }
  // Idempotent with an Idempotency-Key (the event's client_msg_id, in SEND's table, as for POST
  // /v1/messages); without one, a fresh id per request.
  frame["client_msg_id"] = r.has_idempotency_key ? r.idempotency_key : "api-" + mint_group_id().str();
  frame["conversation"] = parts[2];
  frame["message_id"] = parts[4];
  auto parsed = parse_frame(frame, deps_.max_body_bytes);
  if (auto* p = std::get_if<ApiResponse>(&parsed)) {
    if (!r.has_idempotency_key || p->body.find("client_msg_id") == std::string::npos) return std::move(*p);
    return problem(WireCode::kInvalidArgument, "header 'Idempotency-Key': 1.." +
                                                   std::to_string(kMaxClientMsgIdBytes) +
                                                   " bytes of a client_msg_id, not starting with '~' "
                                                   "(docs/protocol.md)");
  }
  const MessageEventFrame f = std::get<MessageEventFrame>(std::get<ClientFrame>(std::move(parsed)).body);
  const UserId& who = std::get<UserId>(actor);

  const MessageEventDeps events{deps_.outbox,
                                deps_.messages,
                                deps_.groups,
                                deps_.history,
                                deps_.dedup,
                                deps_.lifecycle,
                                deps_.max_body_bytes,
                                deps_.group_apply_wait_ms,
                                {}};
  if (auto refused = message_event_precheck(events, who, f)) return problem(refused->code, refused->message);
  if (deps_.dedup == nullptr) return problem(WireCode::kUnavailable, "the idempotency table is not served");
  const uint64_t fingerprint = message_event_fingerprint(f);
  const std::string key = SendDedup::key_of(who, f.client_msg_id);
  std::promise<Result<SentMessage>> first;
  auto first_done = first.get_future();
  const int64_t now = deps_.clock->now_ms();
  auto begin =
      deps_.dedup->begin(key, now, [&first](const Result<SentMessage>& sent) { first.set_value(sent); });
  if (begin.kind == SendDedup::Kind::kFirst) {
    return from_frame(
        append_message_event(events, std::string(kRef), who, DeviceId::unchecked("api"), f, now, key), 201);
  }
  // The key was used before (or is being used by another request): that event's answer.
  const Result<SentMessage> sent =
      begin.kind == SendDedup::Kind::kDone ? Result<SentMessage>(*begin.sent) : first_done.get();
  if (sent.ok() && sent->fingerprint != fingerprint) {
    return problem(WireCode::kInvalidArgument,
                   "client_msg_id '" + f.client_msg_id +
                       "' was already used for another message or event (Idempotency-Key)",
                   409);
  }
  return from_frame(message_event_answer(std::string(kRef), f, fingerprint, sent));
}

}  // namespace qim::api
