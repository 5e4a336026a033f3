#pragma once
// HISTORY as one implementation behind two doors: the WebSocket frame (connection.cc) and the server API
// (src/api/). Blocks on the history and group stores: run it on a pool, never on a connection's strand.

#include <optional>
#include <string>

#include "archiver/history_store.h"
#include "gateway/gateway_metrics.h"
#include "groups/group_store.h"
#include "inbox/inbox_backend.h"
#include "lifecycle/message_state_store.h"
#include "log/log.h"

namespace qim {

// The HISTORY_PAGE frame of `query` (tagged `ref`) as `reader` may read it, or an ERROR frame:
//  - a direct conversation: FORBIDDEN unless `reader` is one of its two members;
//  - a group: UNKNOWN_GROUP / NOT_A_MEMBER unless `reader` is a member; the member reads what fanout
//    delivered from when they (last) joined (group_history.h);
//  - `reader` nullopt (the server API, trusted): any conversation; a group's whole delivered history.
// UNAVAILABLE when `history` (or for a group `groups`) is null; a failed read is its wire code (INTERNAL is
// logged and not shown). `metrics` (optional) counts refusals by code. With `privacy` (the inbox backend)
// and a reader, the page is as the reader sees it (privacy_requests.h): without the messages they deleted
// for themselves, flagged where they block the sender. With `messages` (the message state store, decision
// 90) each message carries its recall and edit marks, a recalled one without its body.
std::string answer_history(HistoryStore* history, GroupStore* groups, GatewayMetrics* metrics,
                           const std::string& ref, const std::optional<UserId>& reader,
                           const HistoryQuery& query, InboxBackend* privacy = nullptr,
                           MessageStateStore* messages = nullptr, Log* outbox = nullptr);

// The ERROR frame of a failed store or history read (INTERNAL logged, not shown); counted in `metrics`
// (optional).
std::string read_error_frame(GatewayMetrics* metrics, const std::string& ref, const std::string& what,
                             const Error& error);

}  // namespace qim
