#pragma once
// A sent message's life after SEND (issue 39, docs/adr/0090-message-events-decided-by-fanout.md) and the one
// place its rules live. Fanout decides each EDIT or RECALL at the Outbox offset it read it from, in offset
// order, and records the outcome in the message's state (message_state_store.h) before it appends the
// event's dispatch records. A decision at offset E looks only at the events decided before E, and an event
// read again (a replay) returns its recorded outcome, so a replay from before the SEND decides the same.
//
// The state never holds a body: after a recall nothing of the body is kept here.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "outbox/message_event.h"

namespace qim {

inline constexpr int64_t kDefaultEditWindowMs = 48LL * 3600 * 1000;    // QIM_EDIT_WINDOW_MS
inline constexpr int64_t kDefaultRecallWindowMs = 24LL * 3600 * 1000;  // QIM_RECALL_WINDOW_MS
// The edits a recall entry names (event_entry_body): ~21 bytes each, so its body stays far below a
// message body's 64 KiB. A message edited more often keeps the text of its older edits' entries.
inline constexpr size_t kMaxRecallNamedEdits = 1024;

struct LifecyclePolicy {
  int64_t edit_window_ms = kDefaultEditWindowMs;      // 0: messages are never editable
  int64_t recall_window_ms = kDefaultRecallWindowMs;  // the sender's; a group's owner and admins: any time
};

// Why an event is refused; each is one ERROR code on the wire (docs/protocol.md "Editing and recalling").
enum class EventRefusal : uint8_t {
  kNone = 0,
  kUnknownMessage = 1,     // UNKNOWN_MESSAGE: no message at that id (or not a chat message: an op, an event)
  kOtherConversation = 2,  // UNKNOWN_MESSAGE as well: a message of another conversation reveals nothing
  kPastWindow = 3,         // WINDOW_PASSED: older than the window (or edits are off: window 0)
  kNotAllowed = 4,         // NOT_ALLOWED: not the sender (nor, for a recall, a group's owner or admin)
  kRecalled = 5,           // MESSAGE_RECALLED: the message was recalled before
  // Reactions (lifecycle/reaction.h, docs/adr/0124):
  kBadReaction = 6,        // BAD_REACTION: not one emoji grapheme nor a short code
  kReactionLimit = 7,      // REACTION_LIMIT: the message's distinct reactions, or the user's, are full
  kReactionUnchanged = 8,  // REACTION_UNCHANGED: REACT of one the user has, UNREACT of one they have not
};
inline constexpr EventRefusal kLastEventRefusal = EventRefusal::kReactionUnchanged;

// "unknown message", ... (for logs).
std::string_view event_refusal_name(EventRefusal r);

struct EventOutcome {
  MessageEventKind kind = MessageEventKind::kEdit;
  bool applied = false;
  EventRefusal refusal = EventRefusal::kNone;
  UserId actor;
  int64_t at_ms = 0;     // the event's server time
  std::string reaction;  // kReact, kUnreact: the emoji or short code; empty for the others
  bool operator==(const EventOutcome&) const = default;
};

// One reaction of a message and who holds it, in the order of their reactions.
struct Reaction {
  std::string reaction;
  std::vector<UserId> users;
  bool operator==(const Reaction&) const = default;
};

// What the Outbox says of a sent message, and the events decided about it.
struct MessageState {
  MessageId id;
  ConversationId conversation;
  UserId sender;
  DeviceId sender_device;
  std::string client_msg_id;
  int64_t sent_at_ms = 0;
  std::map<uint64_t, EventOutcome> events;  // by the Outbox offset each was read at

  // Over the applied events at offsets below `before` (all of them by default).
  bool recalled(uint64_t before = UINT64_MAX) const;
  uint32_t edit_count(uint64_t before = UINT64_MAX) const;
  int64_t edited_at_ms() const;                      // 0 if never edited
  std::optional<uint64_t> last_edit_offset() const;  // the applied edit whose body is current
  // The reactions held, folded from the applied REACT and UNREACT events at offsets below `before`, in the
  // order each reaction was first added (a removed member's reactions stay: membership is not consulted).
  std::vector<Reaction> reactions(uint64_t before = UINT64_MAX) const;
  bool operator==(const MessageState&) const = default;
};

struct EventRequest {
  MessageEvent event;
  ConversationId conversation;   // of the event's record
  UserId actor;                  // its sender
  int64_t at_ms = 0;             // its server time
  uint64_t offset = 0;           // its Outbox offset
  bool actor_moderates = false;  // a group's owner or admin at `offset`
  std::string reaction;          // kReact, kUnreact: the record's body
};

// The decision for `request` about `target` (null: no such message). Only events at offsets below
// request.offset count, so the answer is the same however many later events the state holds.
EventOutcome decide_event(const MessageState* target, const EventRequest& request,
                          const LifecyclePolicy& policy);

// Byte encoding of a state (the stores keep it as one value, opaque). A state with no reaction event is
// written as version 1, byte for byte as before reactions; one with a reaction event as version 2 (every
// event then carries its reaction string). Both decode. decode: CorruptEntry naming the field.
std::string encode_message_state(const MessageState& s);
Result<MessageState> decode_message_state(std::string_view bytes);

// The body of the mailbox entry an applied event materialises as (its client_msg_id is "~edit",
// "~recall", "~react" or "~unreact", so the inbox counts it as a system entry): {"event":"edit",
// "message_id":"<target>","body":"<new body>","edited_at":<ms>,"edit_count":<n>}, {"event":"recall",
// "message_id":"<target>","by":"<actor>","edits":["<id>",...]} ("edits": the message ids of the applied
// edits before the recall, message_id_of(partition, edit offset), the ids their ~edit entries carry; no
// field when there is none; at most the last kMaxRecallNamedEdits; docs/adr/0157), or
// {"event":"react"|"unreact","message_id":"<target>", "by":"<actor>","emoji":"<reaction>","count":<holders of
// it after the event>}; docs/protocol.md "Editing and recalling" and "Reactions". `offset`: the event's
// Outbox offset; the body describes the state as of it (a replay writes the same).
// The Outbox offsets of the edits a recall read at `recall_offset` names: the applied edits below it,
// oldest first, the last kMaxRecallNamedEdits of them (decision 157). Fanout also redacts the entries of
// the members who received them and were removed before the recall (decision 160).
std::vector<uint64_t> recall_named_edits(const MessageState& state, uint64_t recall_offset);

std::string event_entry_body(const MessageState& after, MessageEventKind kind, const UserId& actor,
                             std::string_view new_body, uint64_t offset = UINT64_MAX);
std::string event_entry_client_id(MessageEventKind kind);

}  // namespace qim
