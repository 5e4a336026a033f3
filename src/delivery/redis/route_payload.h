#pragma once
// The payload of a publication on a gateway's channel: one report of one shard's chain, as this gateway
// sees it (docs/protocol.md "Delivery across gateways"). Binary, little-endian, versioned:
//
//   u8 'R', u8 version (1), u8 kind (0 = entries visible, 1 = range unknown),
//   u32 shard, u64 from, u64 to, u32 entry count, then per entry:
//   user, u64 seq, u64 message id, conversation, sender, sender device, client_msg_id, i64 server time, body
//   (strings and names as u32 length + bytes).
//
// Decoding never trusts the input: anything short, long, out of bounds or of another version is a
// CorruptEntry naming the field; the subscriber counts it and treats the gateway's chains as broken.

#include <string>
#include <string_view>
#include <vector>

#include "core/sharding.h"
#include "core/status.h"
#include "mailbox/message.h"

namespace qim {

struct RoutePayload {
  bool unknown = false;  // range unknown: the entries in (from, to] are not known
  ShardId shard;
  MailboxSeq from, to;
  std::vector<MailboxEntry> entries;  // ascending by seq, all in (from, to]; none when unknown
};

std::string encode_route_payload(const RoutePayload& p);
// CorruptEntry for anything but a payload encode_route_payload wrote (including entries outside
// (from, to], from >= to for a report with entries, or a count over what the bytes can hold).
Result<RoutePayload> decode_route_payload(std::string_view bytes);

}  // namespace qim
