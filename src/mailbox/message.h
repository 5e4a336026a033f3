#pragma once
// What a mailbox entry holds (ADR-0011): everything a client needs to render a message.

#include <cstdint>
#include <optional>
#include <string>

#include "core/ids.h"
#include "core/mailbox_seq.h"

namespace qim {

inline constexpr size_t kMaxBodyBytes = 64 * 1024;

struct Message {
  MessageId id;
  ConversationId conversation;
  UserId sender;
  DeviceId sender_device;
  std::string client_msg_id;  // the sender's idempotency key, echoed so the sending device can match it
  int64_t server_time_ms = 0;
  std::string body;
  // The message this one replies to, of the same conversation (checked by the gateway against the Outbox,
  // docs/adr/0125); none: not a reply (message id 0 is a message). Its quote is computed at read, never
  // stored.
  std::optional<MessageId> reply_to;

  bool operator==(const Message&) const = default;
};

// One message in one user's mailbox, at its mailbox_seq.
struct MailboxEntry {
  UserId user;
  MailboxSeq seq;
  Message message;

  bool operator==(const MailboxEntry&) const = default;
};

// InvalidArgument if a field is out of bounds (body over kMaxBodyBytes, client id over 64 bytes, ...).
Status validate_message(const Message& m);

}  // namespace qim
