#include "gateway/privacy_requests.h"

#include <spdlog/spdlog.h>

#include "core/conversation.h"
#include "gateway/blocked_by_cache.h"
#include "gateway/protocol/server_frame.h"

namespace qim {

namespace {

std::string refuse(const InboxRequestDeps& deps, const std::string& ref, WireCode code,
                   std::string_view message) {
  return refuse_inbox_request(deps, ref, code, message);
}

std::string failed(const InboxRequestDeps& deps, const std::string& ref, std::string_view what,
                   const Error& error) {
  const WireCode code = wire_code_of(error.code());
  if (code != WireCode::kInternal) return refuse(deps, ref, code, error.message());
  spdlog::error("gateway: {} failed: {}", what, error.to_string());
  return refuse(deps, ref, code, "the write failed on the server (logged)");
}

// To the caller's other connections (every gateway): their devices follow at once.
void push_to_own(const InboxRequestDeps& deps, const InboxCaller& caller, std::string frame) {
  if (deps.signals == nullptr) return;
  const UserId me[] = {caller.user};
  deps.signals->send(me, std::move(frame), caller.connection);
}

// A direct conversation must name the caller; a group id is taken as it is (muting or deleting a group
// one is not in changes nothing anybody can see).
std::optional<std::string> not_a_party(const InboxRequestDeps& deps, const std::string& ref,
                                       const InboxCaller& caller, const ConversationId& c) {
  auto parsed = Conversation::of(c);
  if (!parsed.ok()) return refuse(deps, ref, WireCode::kInvalidArgument, parsed.error().message());
  if (const DirectPair* pair = parsed->direct_pair(); pair != nullptr && !pair->has(caller.user))
    return refuse(deps, ref, WireCode::kForbidden, "you are not a member of conversation '" + c.str() + "'");
  return std::nullopt;
}

std::string answer_block(const InboxRequestDeps& deps, const std::string& ref, const InboxCaller& caller,
                         const BlockFrame& f) {
  Privacy privacy(deps.inbox->backend());
  const int64_t version = deps.inbox->backend().cell_version(deps.clock->now_ms());
  Status s =
      f.blocked ? privacy.block(caller.user, f.user, version) : privacy.unblock(caller.user, f.user, version);
  if (!s.ok()) return failed(deps, ref, (f.blocked ? "BLOCK of " : "UNBLOCK of ") + f.user.str(), s.error());
  // First the gateways drop what they keep of who blocks the target (docs/adr/0166): this one before the
  // answer (on `qim up` the only one: no window), the others by a signal sent ahead of the caller's
  // devices' BLOCK_CHANGED.
  if (deps.blocked_by != nullptr) deps.blocked_by->invalidate(f.user);
  if (deps.signals != nullptr) {
    const UserId target[] = {f.user};
    deps.signals->send(target, encode_blocked_by_signal(f.user));
  }
  push_to_own(deps, caller, encode_block("BLOCK_CHANGED", {}, f.user, f.blocked));
  // The blocker's own watches stop (or resume) showing the user at once (docs/adr/0096).
  if (deps.presence != nullptr) deps.presence->blocks_changed(caller.user);
  return encode_block("BLOCK_OK", ref, f.user, f.blocked);
}

std::string answer_mute(const InboxRequestDeps& deps, const std::string& ref, const InboxCaller& caller,
                        const MuteFrame& f) {
  if (auto refused = not_a_party(deps, ref, caller, f.conversation)) return *refused;
  Privacy privacy(deps.inbox->backend());
  const int64_t version = deps.inbox->backend().cell_version(deps.clock->now_ms());
  Status s = f.muted ? privacy.mute(caller.user, f.conversation, f.until_ms, version)
                     : privacy.unmute(caller.user, f.conversation, version);
  if (!s.ok()) return failed(deps, ref, "MUTE of " + f.conversation.str(), s.error());
  const std::optional<Mute> mute = f.muted ? std::optional(Mute{f.until_ms}) : std::nullopt;
  push_to_own(deps, caller, encode_mute("MUTE_CHANGED", {}, f.conversation, mute));
  return encode_mute("MUTE_OK", ref, f.conversation, mute);
}

std::string answer_delete(const InboxRequestDeps& deps, const std::string& ref, const InboxCaller& caller,
                          const DeleteForMeFrame& f) {
  if (auto refused = not_a_party(deps, ref, caller, f.conversation)) return *refused;
  Privacy privacy(deps.inbox->backend());
  const int64_t version = deps.inbox->backend().cell_version(deps.clock->now_ms());
  // Only what the caller can see can be deleted: the conversation's latest visible entry of their mailbox.
  auto summary = deps.inbox->conversation(caller.user, f.conversation);
  if (!summary.ok()) return failed(deps, ref, "DELETE_FOR_ME of " + f.conversation.str(), summary.error());
  if (f.message) {
    if (*f.message > summary->last.message)
      return refuse(deps, ref, WireCode::kNotFound,
                    "message " + std::to_string(f.message->value) + " is not in your view of '" +
                        f.conversation.str() + "'");
    if (Status s = privacy.hide_message(caller.user, f.conversation, *f.message, version); !s.ok())
      return failed(deps, ref, "DELETE_FOR_ME of " + f.conversation.str(), s.error());
    push_to_own(deps, caller, encode_deleted("DELETED_FOR_ME", {}, f.conversation, f.message, std::nullopt));
    return encode_deleted("DELETE_OK", ref, f.conversation, f.message, std::nullopt);
  }
  const MessageId through = summary->last.message;
  if (Status s = privacy.hide_conversation(caller.user, f.conversation, through, version); !s.ok())
    return failed(deps, ref, "DELETE_FOR_ME of " + f.conversation.str(), s.error());
  // Nothing deleted is left unread: the mark moves to the last entry (READ_STATE follows on other devices
  // through the same push's handling: a client clears the conversation).
  if (auto read = deps.inbox->mark_read(caller.user, f.conversation, summary->last.seq); !read.ok())
    return failed(deps, ref, "DELETE_FOR_ME of " + f.conversation.str(), read.error());
  push_to_own(deps, caller, encode_deleted("DELETED_FOR_ME", {}, f.conversation, std::nullopt, through));
  return encode_deleted("DELETE_OK", ref, f.conversation, std::nullopt, through);
}

}  // namespace

std::string answer_privacy_frame(const InboxRequestDeps& deps, const std::string& ref,
                                 const InboxCaller& caller, const PrivacyFrame& frame) {
  return std::visit(
      [&](const auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, BlockFrame>) {
          return answer_block(deps, ref, caller, f);
        } else if constexpr (std::is_same_v<F, BlocksFrame>) {
          auto users = Privacy(deps.inbox->backend()).blocks(caller.user);
          if (!users.ok()) return failed(deps, ref, "BLOCKS of " + caller.user.str(), users.error());
          return encode_blocks_list(ref, *users);
        } else if constexpr (std::is_same_v<F, MuteFrame>) {
          return answer_mute(deps, ref, caller, f);
        } else {
          return answer_delete(deps, ref, caller, f);
        }
      },
      frame);
}

Result<ReaderPrivacy> reader_privacy(InboxBackend& backend, const UserId& reader) {
  Privacy privacy(backend);
  ReaderPrivacy out;
  QIM_ASSIGN_OR_RETURN(auto blocks, privacy.blocks(reader));
  out.blocks.insert(blocks.begin(), blocks.end());
  QIM_ASSIGN_OR_RETURN(out.hidden, privacy.hidden(reader));
  return out;
}

ReaderMarks reader_marks(const ReaderPrivacy& p) {
  ReaderMarks marks;
  if (!p.hidden.empty())
    marks.deleted = [&p](const Message& m) { return p.hidden.hides(m.conversation, m.id); };
  if (!p.blocks.empty()) marks.from_blocked = [&p](const Message& m) { return p.blocks.contains(m.sender); };
  return marks;
}

void drop_deleted(HistoryPage& page, const ReaderPrivacy& p) {
  if (p.hidden.empty() || page.messages.empty()) return;
  const MessageId oldest = page.messages.back().id;  // newest first
  const size_t before = page.messages.size();
  std::erase_if(page.messages, [&](const Message& m) { return p.hidden.hides(m.conversation, m.id); });
  if (page.messages.size() != before && page.more && !page.next_before) page.next_before = oldest;
}

}  // namespace qim
