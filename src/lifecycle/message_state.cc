#include "lifecycle/message_state.h"

#include <algorithm>

#include "core/bytes.h"
#include "core/mailbox_seq.h"
#include "lifecycle/reaction.h"
#include "outbox/outbox_record.h"

namespace qim {

std::string_view event_refusal_name(EventRefusal r) {
  switch (r) {
    case EventRefusal::kNone:
      return "none";
    case EventRefusal::kUnknownMessage:
      return "unknown message";
    case EventRefusal::kOtherConversation:
      return "message of another conversation";
    case EventRefusal::kPastWindow:
      return "past the window";
    case EventRefusal::kNotAllowed:
      return "not allowed";
    case EventRefusal::kRecalled:
      return "message recalled";
    case EventRefusal::kBadReaction:
      return "not an emoji nor a short code";
    case EventRefusal::kReactionLimit:
      return "too many reactions";
    case EventRefusal::kReactionUnchanged:
      return "reaction unchanged";
  }
  return "unknown";
}

bool MessageState::recalled(uint64_t before) const {
  for (auto it = events.begin(); it != events.end() && it->first < before; ++it) {
    if (it->second.applied && it->second.kind == MessageEventKind::kRecall) return true;
  }
  return false;
}

uint32_t MessageState::edit_count(uint64_t before) const {
  uint32_t n = 0;
  for (auto it = events.begin(); it != events.end() && it->first < before; ++it) {
    if (it->second.applied && it->second.kind == MessageEventKind::kEdit) ++n;
  }
  return n;
}

std::optional<uint64_t> MessageState::last_edit_offset() const {
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    if (it->second.applied && it->second.kind == MessageEventKind::kEdit) return it->first;
  }
  return std::nullopt;
}

std::vector<Reaction> MessageState::reactions(uint64_t before) const {
  std::vector<Reaction> out;
  for (auto it = events.begin(); it != events.end() && it->first < before; ++it) {
    const EventOutcome& e = it->second;
    if (!e.applied || !is_reaction(e.kind)) continue;
    auto r =
        std::find_if(out.begin(), out.end(), [&](const Reaction& x) { return x.reaction == e.reaction; });
    if (e.kind == MessageEventKind::kReact) {
      if (r == out.end()) r = out.insert(out.end(), Reaction{e.reaction, {}});
      if (std::find(r->users.begin(), r->users.end(), e.actor) == r->users.end()) r->users.push_back(e.actor);
    } else if (r != out.end()) {
      std::erase(r->users, e.actor);
      if (r->users.empty()) out.erase(r);
    }
  }
  return out;
}

int64_t MessageState::edited_at_ms() const {
  auto last = last_edit_offset();
  return last ? events.at(*last).at_ms : 0;
}

EventOutcome decide_event(const MessageState* target, const EventRequest& req,
                          const LifecyclePolicy& policy) {
  EventOutcome out{req.event.kind, false,     EventRefusal::kNone,
                   req.actor,      req.at_ms, is_reaction(req.event.kind) ? req.reaction : std::string()};
  auto refuse = [&out](EventRefusal r) {
    out.refusal = r;
    return out;
  };
  if (target == nullptr) return refuse(EventRefusal::kUnknownMessage);
  if (target->conversation != req.conversation) return refuse(EventRefusal::kOtherConversation);
  // A recalled message takes no further event (a second recall is refused too: nothing to recall).
  if (target->recalled(req.offset)) return refuse(EventRefusal::kRecalled);
  if (is_reaction(req.event.kind)) {
    // Any member may react (fanout dispatches the event only for a member at its offset), at any time.
    if (!valid_reaction(req.reaction)) return refuse(EventRefusal::kBadReaction);
    const std::vector<Reaction> held = target->reactions(req.offset);
    size_t mine = 0;
    bool have = false, exists = false;
    for (const Reaction& r : held) {
      const bool holds = std::find(r.users.begin(), r.users.end(), req.actor) != r.users.end();
      mine += holds ? 1 : 0;
      if (r.reaction == req.reaction) {
        exists = true;
        have = holds;
      }
    }
    if (req.event.kind == MessageEventKind::kUnreact) {
      if (!have) return refuse(EventRefusal::kReactionUnchanged);
    } else {
      if (have) return refuse(EventRefusal::kReactionUnchanged);
      if (mine >= kMaxReactionsPerUserMessage) return refuse(EventRefusal::kReactionLimit);
      if (!exists && held.size() >= kMaxReactionsPerMessage) return refuse(EventRefusal::kReactionLimit);
    }
    out.applied = true;
    return out;
  }
  const int64_t age = req.at_ms - target->sent_at_ms;
  const bool own = req.actor == target->sender;
  if (req.event.kind == MessageEventKind::kEdit) {
    if (!own) return refuse(EventRefusal::kNotAllowed);
    if (policy.edit_window_ms <= 0 || age > policy.edit_window_ms) return refuse(EventRefusal::kPastWindow);
  } else {
    // A group's owner or admin moderates at any time; the sender only within the window.
    if (!req.actor_moderates) {
      if (!own) return refuse(EventRefusal::kNotAllowed);
      if (age > policy.recall_window_ms) return refuse(EventRefusal::kPastWindow);
    }
  }
  out.applied = true;
  return out;
}

namespace {
constexpr uint8_t kStateVersion = 1;          // before reactions: no reaction string per event
constexpr uint8_t kReactionStateVersion = 2;  // every event then its reaction string
// Bounds the reader accepts: a state grows by one event per EDIT/RECALL read (refused ones too), and the
// gateway refuses early what fanout would refuse, so a message gets few.
constexpr uint32_t kMaxStoredEvents = 1 << 20;

void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
      continue;
    }
    out += c;
  }
  out += '"';
}
}  // namespace

std::string encode_message_state(const MessageState& s) {
  const bool reactions =
      std::any_of(s.events.begin(), s.events.end(), [](const auto& e) { return is_reaction(e.second.kind); });
  ByteWriter w;
  w.u8(reactions ? kReactionStateVersion : kStateVersion);
  w.u64(s.id.value);
  w.str(s.conversation.str());
  w.str(s.sender.str());
  w.str(s.sender_device.str());
  w.str(s.client_msg_id);
  w.i64(s.sent_at_ms);
  w.u32(static_cast<uint32_t>(s.events.size()));
  for (const auto& [offset, e] : s.events) {
    w.u64(offset);
    w.u8(static_cast<uint8_t>(e.kind));
    w.u8(e.applied ? 1 : 0);
    w.u8(static_cast<uint8_t>(e.refusal));
    w.str(e.actor.str());
    w.i64(e.at_ms);
    if (reactions) w.str(e.reaction);
  }
  return w.take();
}

Result<MessageState> decode_message_state(std::string_view bytes) {
  ByteReader r(bytes, "message state");
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kStateVersion && version != kReactionStateVersion)
    return r.corrupt("version", "unknown version " + std::to_string(version));
  MessageState s;
  QIM_ASSIGN_OR_RETURN(s.id.value, r.u64("id"));
  QIM_ASSIGN_OR_RETURN(s.conversation, r.name<ConversationId>("conversation"));
  QIM_ASSIGN_OR_RETURN(s.sender, r.name<UserId>("sender"));
  QIM_ASSIGN_OR_RETURN(s.sender_device, r.name<DeviceId>("sender_device", true));
  QIM_ASSIGN_OR_RETURN(s.client_msg_id, r.str("client_msg_id", 64));
  QIM_ASSIGN_OR_RETURN(s.sent_at_ms, r.i64("sent_at"));
  QIM_ASSIGN_OR_RETURN(uint32_t n, r.u32("events"));
  if (n > kMaxStoredEvents) return r.corrupt("events", std::to_string(n) + " events");
  for (uint32_t i = 0; i < n; ++i) {
    EventOutcome e;
    QIM_ASSIGN_OR_RETURN(uint64_t offset, r.u64("event_offset"));
    QIM_ASSIGN_OR_RETURN(uint8_t kind, r.u8("event_kind"));
    if (kind < 1 || kind > static_cast<uint8_t>(MessageEventKind::kUnreact))
      return r.corrupt("event_kind", "unknown event " + std::to_string(kind));
    e.kind = static_cast<MessageEventKind>(kind);
    QIM_ASSIGN_OR_RETURN(uint8_t applied, r.u8("event_applied"));
    e.applied = applied != 0;
    QIM_ASSIGN_OR_RETURN(uint8_t refusal, r.u8("event_refusal"));
    if (refusal > static_cast<uint8_t>(kLastEventRefusal)) return r.corrupt("event_refusal", "unknown");
    e.refusal = static_cast<EventRefusal>(refusal);
    QIM_ASSIGN_OR_RETURN(e.actor, r.name<UserId>("event_actor"));
    QIM_ASSIGN_OR_RETURN(e.at_ms, r.i64("event_at"));
    if (version == kReactionStateVersion) {
      QIM_ASSIGN_OR_RETURN(e.reaction, r.str("event_reaction", kMaxReactionBytes));
    }
    s.events.emplace(offset, std::move(e));
  }
  QIM_RETURN_IF_ERROR(r.finish());
  return s;
}

std::string event_entry_client_id(MessageEventKind kind) {
  return "~" + std::string(message_event_name(kind));
}

std::vector<uint64_t> recall_named_edits(const MessageState& state, uint64_t recall_offset) {
  std::vector<uint64_t> applied;
  for (auto it = state.events.begin(); it != state.events.end() && it->first < recall_offset; ++it) {
    if (it->second.applied && it->second.kind == MessageEventKind::kEdit) applied.push_back(it->first);
  }
  // The last kMaxRecallNamedEdits only: the entry's body stays far below kMaxBodyBytes.
  if (applied.size() > kMaxRecallNamedEdits) {
    applied.erase(applied.begin(), applied.end() - static_cast<std::ptrdiff_t>(kMaxRecallNamedEdits));
  }
  return applied;
}

std::string event_entry_body(const MessageState& after, MessageEventKind kind, const UserId& actor,
                             std::string_view new_body, uint64_t offset) {
  // As of the event's own offset: a replay, whose state holds later events too, writes the same body.
  const uint64_t through = offset == UINT64_MAX ? UINT64_MAX : offset + 1;
  std::string out = "{\"event\":";
  json_string(out, message_event_name(kind));
  out += ",\"message_id\":\"" + std::to_string(after.id.value) + "\"";
  if (kind == MessageEventKind::kEdit) {
    out += ",\"body\":";
    json_string(out, new_body);
    auto at = after.events.find(offset);
    out += ",\"edited_at\":" +
           std::to_string(at != after.events.end() ? at->second.at_ms : after.edited_at_ms());
    out += ",\"edit_count\":" + std::to_string(after.edit_count(through));
  } else {
    out += ",\"by\":";
    json_string(out, actor.str());
  }
  if (kind == MessageEventKind::kRecall) {
    // The applied edits before the recall, by the ids their entries were dispatched under, so that the
    // mailbox side removes their text too (docs/adr/0157). Only those below the recall's offset: a replay,
    // whose state is the same there, names the same ones. None: no field (the bytes of a recall of an
    // unedited message are as before).
    const uint32_t partition = static_cast<uint32_t>(after.id.value >> kOffsetBits);
    std::string edits;
    for (uint64_t at : recall_named_edits(after, offset)) {
      edits += edits.empty() ? "" : ",";
      edits += "\"" + std::to_string(message_id_of(partition, Offset{at}).value) + "\"";
    }
    if (!edits.empty()) out += ",\"edits\":[" + edits + "]";
  }
  if (is_reaction(kind)) {
    out += ",\"emoji\":";
    json_string(out, new_body);
    size_t count = 0;
    for (const Reaction& r : after.reactions(through)) {
      if (r.reaction == new_body) count = r.users.size();
    }
    out += ",\"count\":" + std::to_string(count);
  }
  out += "}";
  return out;
}

}  // namespace qim
