#include "gateway/inbox_requests.h"

#include <spdlog/spdlog.h>

#include <map>
#include <vector>

#include "core/conversation.h"
#include "gateway/connection.h"
#include "gateway/gateway_context.h"
#include "gateway/group_requests.h"
#include "gateway/history_requests.h"
#include "gateway/privacy_requests.h"
#include "gateway/protocol/server_frame.h"
#include "outbox/outbox_record.h"

namespace qim {

std::string refuse_inbox_request(const InboxRequestDeps& deps, const std::string& ref, WireCode code,
                                 std::string_view message) {
  if (deps.metrics) deps.metrics->errors(code).Increment();
  return encode_error(ref, code, message);
}

namespace {

std::string refuse(const InboxRequestDeps& deps, const std::string& ref, WireCode code,
                   std::string_view message) {
  return refuse_inbox_request(deps, ref, code, message);
}

// A failed store or inbox read. Internal errors are logged, not shown (as SYNC's: history_requests.h).
std::string failed(const InboxRequestDeps& deps, const std::string& ref, std::string_view what,
                   const Error& error) {
  return read_error_frame(deps.metrics, ref, std::string(what), error);
}

std::string forbidden(const InboxRequestDeps& deps, const std::string& ref, const ConversationId& c) {
  return refuse(deps, ref, WireCode::kForbidden, "you are not a member of conversation '" + c.str() + "'");
}

// The current members of `group`, from its state (a group's whole row set, as GROUP_MEMBERS reads it).
Result<std::vector<UserId>> current_members(GroupStore& groups, const GroupId& group) {
  QIM_ASSIGN_OR_RETURN(auto state, groups.load(group));
  std::vector<UserId> out;
  if (!state) return out;
  for (const auto& [user, m] : state->members()) {
    if (m.current()) out.push_back(user);
  }
  return out;
}

// Whether `user` sends receipts ("receipts" is not "off"). A store error is treated as "off": a receipt
// not pushed is pulled later (RECEIPTS, CONVERSATIONS); one pushed against the user's choice cannot be
// taken back.
bool receipts_on(Inbox& inbox, const UserId& user) {
  auto settings = inbox.backend().settings(user);
  if (!settings.ok()) {
    spdlog::warn("gateway: settings of {} unreadable, no RECEIPT pushed: {}", user.str(),
                 settings.error().to_string());
    return false;
  }
  return effective_settings(*settings)[std::string(kSettingReceipts)] != "off";
}

// Who hears `reader`'s RECEIPT in `c`: the peer of a direct conversation, the other current members of a
// group up to kReceiptPushMaxMembers; nobody else (a note to self, a larger group, a group unreadable now).
std::vector<UserId> receipt_audience(const InboxRequestDeps& deps, const Conversation& c,
                                     const UserId& reader) {
  if (const DirectPair* pair = c.direct_pair()) {
    auto peer = pair->peer_of(reader);
    if (!peer || *peer == reader) return {};
    return {*peer};
  }
  const GroupId* group = c.group_id();
  if (group == nullptr || deps.groups == nullptr) return {};
  auto meta = deps.groups->meta(*group);
  if (!meta.ok() || !*meta || (*meta)->member_count > kReceiptPushMaxMembers) return {};
  auto members = current_members(*deps.groups, *group);
  if (!members.ok()) {
    spdlog::warn("gateway: members of {} unreadable, no RECEIPT pushed: {}", c.id().str(),
                 members.error().to_string());
    return {};
  }
  std::vector<UserId> out;
  bool reader_is_member = false;
  for (auto& u : *members) {
    if (u == reader) {
      reader_is_member = true;
    } else {
      out.push_back(std::move(u));
    }
  }
  if (!reader_is_member) return {};  // a former member's late read tells the current members nothing
  return out;
}

// Appends the read receipt of `caller` through `read_through` to the conversation's Outbox partition (the
// event webhook's message.read). A failure is logged: the READ itself is done (the mark is written).
void append_read_receipt(Log& outbox, const Clock& clock, const InboxCaller& caller, const ConversationId& c,
                         MessageId read_through) {
  OutboxRecord record;
  record.conversation = c;
  record.sender = caller.user;
  record.sender_device = caller.device;
  record.server_time_ms = clock.now_ms();
  record.read_through = read_through;
  const uint32_t partition = outbox_partition_of(c, outbox.partition_count());
  if (auto appended = outbox.append_sync(partition, c.str(), encode_outbox_record(record)); !appended.ok()) {
    spdlog::warn("gateway: read receipt of {} in {} through {} not appended to the Outbox: {}",
                 caller.user.str(), c.str(), read_through.value, appended.error().to_string());
  }
}

std::string answer_read(const InboxRequestDeps& deps, const std::string& ref, const InboxCaller& caller,
                        const ReadFrame& f) {
  auto conversation = Conversation::of(f.conversation);
  if (!conversation.ok())
    return refuse(deps, ref, WireCode::kInvalidArgument, conversation.error().message());
  auto outcome = deps.inbox->mark_read(caller.user, f.conversation, f.seq);
  if (!outcome.ok()) return failed(deps, ref, "READ of " + f.conversation.str(), outcome.error());
  auto unread = deps.inbox->unread(caller.user, f.conversation);
  if (!unread.ok()) return failed(deps, ref, "unread of " + f.conversation.str(), unread.error());
  const UnreadState state{f.conversation, outcome->read_seq, unread->first, unread->second};
  if (outcome->moved && deps.signals != nullptr) {
    const UserId me[] = {caller.user};
    deps.signals->send(me, encode_read_state(state), caller.connection);
  }
  if (outcome->moved && outcome->read_through && (deps.signals != nullptr || deps.outbox != nullptr) &&
      receipts_on(*deps.inbox, caller.user)) {
    // The Outbox record first: the hook's receipt does not depend on who is online.
    if (deps.outbox != nullptr)
      append_read_receipt(*deps.outbox, *deps.clock, caller, f.conversation, *outcome->read_through);
    if (deps.signals != nullptr) {
      auto audience = receipt_audience(deps, *conversation, caller.user);
      if (!audience.empty())
        deps.signals->send(audience, encode_receipt(f.conversation, caller.user, *outcome->read_through));
    }
  }
  return encode_read_ok(ref, state);
}

std::string answer_conversations(const InboxRequestDeps& deps, const std::string& ref,
                                 const InboxCaller& caller, const ConversationsFrame& f) {
  // With the caller's privacy: mutes (no badge) and conversations deleted for them (privacy.h).
  auto page = deps.inbox->conversations(caller.user, f.before, f.limit, deps.clock->now_ms());
  if (!page.ok()) return failed(deps, ref, "CONVERSATIONS of " + caller.user.str(), page.error());
  std::vector<ConversationLabel> labels;
  labels.reserve(page->items.size());
  std::map<GroupId, std::optional<std::string>> names;  // a page names a group once
  for (const ConversationSummary& s : page->items) {
    ConversationLabel label;
    auto c = Conversation::of(s.conversation);
    if (c.ok() && c->direct_pair() != nullptr) {
      label.kind = "direct";
      const UserId peer = c->direct_pair()->peer_of(caller.user).value_or(caller.user);
      label.peer = peer.str();
      if (deps.users != nullptr) {
        if (auto u = deps.users->get(peer); u && !u->display_name.empty()) label.peer_name = u->display_name;
      }
    } else if (c.ok() && c->group_id() != nullptr) {
      label.kind = "group";
      const GroupId& g = *c->group_id();
      if (auto it = names.find(g); it != names.end()) {
        label.name = it->second;
      } else if (deps.groups != nullptr) {
        auto meta = deps.groups->meta(g);
        if (!meta.ok()) return failed(deps, ref, "the name of " + s.conversation.str(), meta.error());
        if (*meta) label.name = (*meta)->name;
        names.emplace(g, label.name);
      }
    } else {
      label.kind = "unknown";  // never written by this server; shown rather than hidden
    }
    labels.push_back(std::move(label));
  }
  return encode_conversations_page(ref, *page, labels);
}

std::string answer_receipts(const InboxRequestDeps& deps, const std::string& ref, const InboxCaller& caller,
                            const ReceiptsFrame& f) {
  auto c = Conversation::of(f.conversation);
  if (!c.ok()) return refuse(deps, ref, WireCode::kInvalidArgument, c.error().message());
  std::vector<UserId> members;
  if (const DirectPair* pair = c->direct_pair()) {
    if (!pair->has(caller.user)) return forbidden(deps, ref, f.conversation);
    members.push_back(pair->low);
    if (pair->high != pair->low) members.push_back(pair->high);
  } else {
    const GroupId& group = *c->group_id();
    if (deps.groups == nullptr)
      return refuse(deps, ref, WireCode::kUnavailable, "groups are not served by this gateway");
    GroupCheck check = check_group_member(*deps.groups, group, caller.user);
    if (!check.member) {
      // Whether the group exists is no business of a non-member: both answers are FORBIDDEN.
      if (check.code == WireCode::kNotAMember || check.code == WireCode::kUnknownGroup)
        return forbidden(deps, ref, f.conversation);
      return refuse(deps, ref, check.code, check.message);
    }
    auto current = current_members(*deps.groups, group);
    if (!current.ok()) return failed(deps, ref, "members of " + f.conversation.str(), current.error());
    members = std::move(current).value();
  }
  auto receipts = deps.inbox->message_receipts(f.conversation, f.message, members);
  if (!receipts.ok()) return failed(deps, ref, "RECEIPTS of " + f.conversation.str(), receipts.error());
  return encode_receipts_page(ref, f.conversation, f.message, *receipts);
}

std::string answer_settings(const InboxRequestDeps& deps, const std::string& ref, const InboxCaller& caller,
                            const SettingsFrame& f) {
  InboxBackend& backend = deps.inbox->backend();
  // Last writer wins by the gateway's clock (a cell per setting, inbox_backend.h).
  const int64_t version = backend.cell_version(deps.clock->now_ms());
  for (const auto& [key, value] :
       {std::pair{kSettingReceipts, f.receipts}, std::pair{kSettingPresence, f.presence}}) {
    if (!value) continue;
    if (Status s = backend.put_setting(caller.user, std::string(key), *value, version); !s.ok())
      return failed(deps, ref, "SETTINGS of " + caller.user.str(), s.error());
  }
  // Watchers lose (or gain) sight at once, not at the user's next change (docs/adr/0083).
  // SETTINGS_OK once the exchange has it (flush: the hub's thread announced it), so a watcher who asks
  // after the OK, on any gateway, already gets the new answer.
  if (f.presence && deps.presence != nullptr) {
    deps.presence->privacy_changed(caller.user);
    deps.presence->flush();
  }
  auto stored = backend.settings(caller.user);
  if (!stored.ok()) return failed(deps, ref, "SETTINGS of " + caller.user.str(), stored.error());
  return encode_settings_ok(ref, effective_settings(*stored));
}

}  // namespace

std::string answer_inbox_frame(const InboxRequestDeps& deps, const std::string& ref,
                               const InboxCaller& caller, const InboxFrame& frame) {
  return std::visit(
      [&](const auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, ReadFrame>) {
          return answer_read(deps, ref, caller, f);
        } else if constexpr (std::is_same_v<F, ConversationsFrame>) {
          return answer_conversations(deps, ref, caller, f);
        } else if constexpr (std::is_same_v<F, ReceiptsFrame>) {
          return answer_receipts(deps, ref, caller, f);
        } else if constexpr (std::is_same_v<F, PrivacyFrame>) {
          return answer_privacy_frame(deps, ref, caller, f);
        } else {
          return answer_settings(deps, ref, caller, f);
        }
      },
      frame);
}

// The connection's door to the above (declared in connection.h): on its lane of the blocking pool.
void Connection::handle_inbox(const std::string& ref, const InboxFrame& f) {
  if (ctx_.deps.inbox == nullptr) {
    send_error(ref, WireCode::kUnavailable, "the inbox is not served by this gateway");
    return;
  }
  InboxRequestDeps deps{ctx_.deps.inbox,       ctx_.deps.groups, ctx_.signals,
                        ctx_.deps.clock.get(), &ctx_.metrics,    ctx_.presence,
                        ctx_.deps.users,       ctx_.deps.outbox, &ctx_.registry.blocked_by()};
  // A BLOCK/UNBLOCK also reloads the list this gateway flags the user's DELIVERs with (the signal to the
  // user's other connections skips this one).
  const auto* privacy = std::get_if<PrivacyFrame>(&f);
  const bool blocks = privacy != nullptr && std::holds_alternative<BlockFrame>(*privacy);
  run_pooled(ctx_.blocking, ref,
             [deps, ref, caller = InboxCaller{principal_->user, id_, principal_->device}, f, blocks,
              registry = &ctx_.registry] {
               std::string answer = answer_inbox_frame(deps, ref, caller, f);
               if (blocks) load_blocks(&deps.inbox->backend(), *registry, caller.user);
               return answer;
             });
}

}  // namespace qim
