#include "gateway/attachment_requests.h"

#include <spdlog/spdlog.h>

#include "gateway/group_history.h"
#include "gateway/group_requests.h"
#include "gateway/membership.h"
#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/server_frame.h"
#include "gateway/send_request.h"
#include "inbox/privacy.h"

namespace qim {

namespace {

constexpr uint64_t kOffsetMask = (uint64_t{1} << 48) - 1;

std::string refusal_frame(const std::string& ref, const attachments::Refusal& r) {
  return encode_error(ref, r.code, r.message);
}

}  // namespace

attachments::Refusal attachments_disabled() {
  return {WireCode::kAttachmentsDisabled, "attachments are not configured on this deployment"};
}

std::string answer_attach(attachments::AttachmentService* service, GroupStore* groups, InboxBackend* privacy,
                          const std::string& ref, const UserId& user, const AttachFrame& f) {
  if (service == nullptr) return refusal_frame(ref, attachments_disabled());
  auto c = Conversation::of(f.conversation);
  if (!c.ok()) return encode_error(ref, WireCode::kInvalidArgument, c.error().message());
  if (const GroupId* group = c->group_id()) {
    if (groups == nullptr)
      return encode_error(ref, WireCode::kUnavailable, "groups are not served by this gateway");
    GroupCheck check = check_group_member(*groups, *group, user);
    if (!check.member) return encode_error(ref, check.code, check.message);
  } else {
    if (!is_member(user, f.conversation))
      return encode_error(ref, WireCode::kForbidden,
                          "you are not a member of conversation '" + f.conversation.str() + "'");
    const DirectPair* pair = c->direct_pair();
    if (privacy != nullptr && pair != nullptr && pair->low != pair->high) {
      auto blockers = Privacy(*privacy).blocked_by(user);
      if (!blockers.ok())
        return encode_error(ref, wire_code_of(blockers.code()),
                            "the block check failed: " + blockers.error().message());
      if (auto refused = blocked_send(user, f.conversation, *blockers))  // SEND's rule (send_request.h)
        return encode_error(ref, refused->code, refused->message);
    }
  }
  auto grant = service->grant_upload(user, f.conversation, f.request);
  if (auto* r = std::get_if<attachments::Refusal>(&grant)) return refusal_frame(ref, *r);
  const auto& g = std::get<attachments::UploadGrant>(grant);
  return encode_attach_ok(ref, f.conversation, g.attachment, g.upload_url, g.method, g.headers,
                          g.expires_at_ms);
}

std::string answer_attachment_url(attachments::AttachmentService* service, HistoryStore* history,
                                  GroupStore* groups, MessageStateStore* messages, const std::string& ref,
                                  const UserId& reader, const AttachmentUrlFrame& f) {
  if (service == nullptr) return refusal_frame(ref, attachments_disabled());
  const std::string unknown_message = "no such attachment in a message you may see";
  auto unknown = [&] { return encode_error(ref, WireCode::kUnknownAttachment, unknown_message); };
  auto failed = [&](const Error& e) {
    spdlog::warn("gateway: ATTACHMENT_URL of {}: {}", reader.str(), e.to_string());
    return encode_error(ref, WireCode::kUnavailable, "the message could not be read now; retry later");
  };
  if (history == nullptr)
    return encode_error(ref, WireCode::kUnavailable, "history is not served by this gateway");
  auto c = Conversation::of(f.conversation);
  if (!c.ok() || f.message_id.value == UINT64_MAX) return unknown();
  HistoryQuery query{f.conversation, MessageId{f.message_id.value + 1}, 1};
  std::optional<Message> message;
  if (const GroupId* group = c->group_id()) {
    if (groups == nullptr)
      return encode_error(ref, WireCode::kUnavailable, "groups are not served by this gateway");
    // A current member, who was a member at the message's offset and joined (last) before it: the
    // messages HISTORY shows them (group_history.h).
    GroupCheck check = check_group_member(*groups, *group, reader);
    if (!check.member) {
      if (check.code == WireCode::kUnavailable) return encode_error(ref, check.code, check.message);
      return unknown();  // no such group, or not a member now: nothing is revealed
    }
    if (!check.member->member_at(f.message_id.value & kOffsetMask)) return unknown();
    auto page = read_group_history(*history, *groups, *group, query, *check.member->joined_at());
    if (!page.ok()) return failed(page.error());
    if (!page->messages.empty()) message = page->messages.front();
  } else {
    if (!is_member(reader, f.conversation)) return unknown();
    auto page = history->read(query);
    if (!page.ok()) return failed(page.error());
    if (!page->messages.empty()) message = page->messages.front();
  }
  if (!message || message->id.value != f.message_id.value) return unknown();
  if (messages != nullptr) {
    auto state = messages->load(message->id);
    if (!state.ok()) return failed(state.error());
    if (*state && (*state)->recalled()) return unknown();
  }
  auto grant = service->grant_download(message->sender, f.conversation, message->server_time_ms,
                                       message->body, f.attachment, f.thumbnail);
  if (auto* r = std::get_if<attachments::Refusal>(&grant)) return refusal_frame(ref, *r);
  const auto& g = std::get<attachments::DownloadGrant>(grant);
  return encode_attachment_url_ok(ref, f, g.url, g.expires_at_ms);
}

attachments::Decided<std::string> checked_send_body(attachments::AttachmentService* service,
                                                    const UserId& sender, const ConversationId& conversation,
                                                    const SendFrame& f, size_t max_body_bytes) {
  if (f.attachments.empty()) return f.body;
  if (service == nullptr) return attachments_disabled();
  auto checked = service->check_references(sender, conversation, f.attachments);
  if (auto* r = std::get_if<attachments::Refusal>(&checked)) return *r;
  std::string body = attachments::encode_message_body(attachments::MessageBody{
      f.body, std::get<std::vector<attachments::StoredAttachment>>(std::move(checked))});
  if (body.size() > max_body_bytes)
    return attachments::Refusal{WireCode::kTooLarge,
                                "the body with its attachments is " + std::to_string(body.size()) +
                                    " bytes, over the limit of " + std::to_string(max_body_bytes)};
  return body;
}

}  // namespace qim
