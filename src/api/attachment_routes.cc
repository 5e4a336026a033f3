// The server API's attachment routes (docs/api.md "Attachments", docs/adr/0165): the second door onto the
// ATTACH and ATTACHMENT_URL frames (docs/protocol.md "Attachments"). The request becomes the frame, is
// checked by the protocol's parser and answered by the functions the frames call (answer_attach,
// answer_attachment_url in gateway/attachment_requests.h) over the gateway's own AttachmentService, so the
// membership, block, type, size and daily budget rules, the client_upload_id claims and the codes are the
// frames' whichever door. A message referencing the upload is sent with POST /v1/messages `attachments`.
#include "api/api_router.h"
#include "api/route_support.h"
#include "gateway/attachment_requests.h"
#include "inbox/inbox.h"

namespace qim::api {

ApiResponse ApiRouter::attach(const ApiRequest& r) {
  auto body = body_object(r.body);
  if (auto* p = std::get_if<ApiResponse>(&body)) return std::move(*p);
  const json::object& in = std::get<json::object>(body);
  // Who uploads: "from" (a user), else the system user, as POST /v1/messages names its sender.
  auto uploader = acting_user(in, options_.system_user);
  if (auto* p = std::get_if<ApiResponse>(&uploader)) return std::move(*p);
  json::object frame;
  frame["type"] = "ATTACH";
  frame["ref"] = kRef;
  for (const auto& [k, v] : in) {
    if (k == "from") {
      continue;
    } else if (k == "conversation" || k == "name" || k == "content_type" || k == "size" || k == "sha256" ||
               k == "client_upload_id") {
      frame[k] = v;  // checked by the ATTACH frame's parser
    } else {
      return problem(WireCode::kInvalidArgument, "unknown field '" + std::string(k) + "'");
    }
  }
  auto parsed = parse_frame(frame, deps_.max_body_bytes);
  if (auto* p = std::get_if<ApiResponse>(&parsed)) return std::move(*p);
  const auto& f = std::get<AttachFrame>(std::get<AttachmentFrame>(std::get<ClientFrame>(parsed).body));
  InboxBackend* privacy = deps_.inbox != nullptr ? &deps_.inbox->backend() : nullptr;
  return from_frame(answer_attach(deps_.attachments, deps_.groups, privacy, std::string(kRef),
                                  std::get<UserId>(uploader), f),
                    201);
}

ApiResponse ApiRouter::attachment_url(const std::map<std::string, std::string>& q,
                                      const std::vector<std::string>& parts) {
  // /v1/conversations/{conversation}/messages/{message_id}/attachments/{attachment}?user=&thumbnail=
  json::object frame;
  frame["type"] = "ATTACHMENT_URL";
  frame["ref"] = kRef;
  frame["conversation"] = parts[2];
  frame["message_id"] = parts[4];
  frame["attachment"] = parts[6];
  std::optional<std::string> reader;
  for (const auto& [k, v] : q) {
    if (k == "user") {
      reader = v;
    } else if (k == "thumbnail" && (v == "true" || v == "false")) {
      frame["thumbnail"] = v == "true";
    } else if (k == "thumbnail") {
      return problem(WireCode::kInvalidArgument, "query parameter 'thumbnail': true or false");
    } else {
      return problem(WireCode::kInvalidArgument, "unknown query parameter '" + k + "'");
    }
  }
  if (!reader)
    return problem(WireCode::kInvalidArgument, "query parameter 'user' (the member who reads) is missing");
  auto who = user_field(*reader, "user");
  if (auto* p = std::get_if<ApiResponse>(&who)) return std::move(*p);
  auto parsed = parse_frame(frame, deps_.max_body_bytes);
  if (auto* p = std::get_if<ApiResponse>(&parsed)) return std::move(*p);
  const auto& f = std::get<AttachmentUrlFrame>(std::get<AttachmentFrame>(std::get<ClientFrame>(parsed).body));
  return from_frame(answer_attachment_url(deps_.attachments, deps_.history, deps_.groups, deps_.messages,
                                          std::string(kRef), std::get<UserId>(who), f));
}

}  // namespace qim::api
