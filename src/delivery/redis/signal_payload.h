#pragma once
// Signals on a gateway's channel (docs/adr/0080): the same channel as the route payloads
// (route_payload.h), told apart by the kind byte. Binary, little-endian:
//
//   u8 'R', u8 version (1), u8 kind (2 = signals), u32 signal count, then per signal:
//   u64 except connection (0: none), u32 user count, users (u32 length + bytes), frame (u32 length + bytes)
//
// The users are the receiving gateway's only; the except connection is set only on the channel of the
// gateway the signal was sent from (a connection id means nothing on another gateway). A gateway of an
// older version counts a kind-2 payload as corrupt (and resyncs its shards): deploy the subscribers first.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "delivery/signal_queue.h"

namespace qim {

inline constexpr uint8_t kRoutePayloadSignals = 2;
// The largest frame one signal carries (a typing or presence frame is some hundred bytes).
inline constexpr size_t kMaxSignalFrameBytes = 64 * 1024;

std::string encode_signal_payload(std::span<const Signal> signals);
// CorruptEntry for anything encode_signal_payload did not write.
Result<std::vector<Signal>> decode_signal_payload(std::string_view bytes);
// Whether `bytes` is a payload of kind 2 (the magic, version and kind bytes; nothing else is checked).
bool is_signal_payload(std::string_view bytes);

}  // namespace qim
