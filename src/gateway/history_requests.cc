#include "gateway/history_requests.h"

#include <spdlog/spdlog.h>

#include "gateway/group_history.h"
#include "gateway/group_requests.h"
#include "gateway/membership.h"
#include "gateway/message_event_requests.h"
#include "gateway/privacy_requests.h"
#include "gateway/protocol/server_frame.h"
#include "gateway/reply_quotes.h"

namespace qim {

std::string read_error_frame(GatewayMetrics* metrics, const std::string& ref, const std::string& what,
                             const Error& error) {
  WireCode code = wire_code_of(error.code());
  if (metrics != nullptr) metrics->errors(code).Increment();
  if (code != WireCode::kInternal) return encode_error(ref, code, error.message());
  spdlog::error("gateway: {} failed: {}", what, error.to_string());
  return encode_error(ref, code, "the read failed on the server (logged)");
}

namespace {

// A HISTORY page as `reader` sees it: with each message's recall and edit marks (a recalled one without
// its body), without the messages they deleted, flagged where they block the sender (privacy_requests.h).
// Without a message state store or an inbox, the page without those.
std::string page_for(GatewayMetrics* metrics, const std::string& ref, const ConversationId& c,
                     HistoryPage page, InboxBackend* privacy, MessageStateStore* messages,
                     const std::optional<UserId>& reader, HistoryStore& history, Log* outbox) {
  // The replies' quotes (reply_quotes.h): before the page's own recalls clear their bodies.
  if (Status s = quote_replies(history, messages, page); !s.ok())
    return read_error_frame(metrics, ref, "HISTORY of " + c.str(), s.error());
  if (messages != nullptr && !page.messages.empty()) {
    if (Status s = annotate_history_page(*messages, page, reader, outbox); !s.ok())
      return read_error_frame(metrics, ref, "HISTORY of " + c.str(), s.error());
  }
  if (privacy == nullptr || !reader || page.messages.empty()) return encode_history_page(ref, c, page);
  auto mine = reader_privacy(*privacy, *reader);
  if (!mine.ok()) return read_error_frame(metrics, ref, "privacy of " + reader->str(), mine.error());
  drop_deleted(page, *mine);
  const ReaderMarks marks = reader_marks(*mine);
  return encode_history_page(ref, c, page, kMaxMessageFrameBytes, &marks);
}

}  // namespace

std::string answer_history(HistoryStore* history, GroupStore* groups, GatewayMetrics* metrics,
                           const std::string& ref, const std::optional<UserId>& reader,
                           const HistoryQuery& query, InboxBackend* privacy, MessageStateStore* messages,
                           Log* outbox) {
  auto refuse = [&](WireCode code, const std::string& message) {
    if (metrics != nullptr) metrics->errors(code).Increment();
    return encode_error(ref, code, message);
  };
  auto c = Conversation::of(query.conversation);
  if (c.ok() && c->group_id() != nullptr) {
    if (groups == nullptr || history == nullptr)
      return refuse(WireCode::kUnavailable, "group history is not served by this gateway");
    const GroupId& group = *c->group_id();
    uint64_t joined = 0;  // the server reads what fanout delivered from the group's start
    if (reader) {
      GroupCheck check = check_group_member(*groups, group, *reader);
      if (!check.member) return refuse(check.code, check.message);
      joined = *check.member->joined_at();
    } else {
      auto meta = groups->meta(group);
      if (!meta.ok())
        return read_error_frame(metrics, ref, "HISTORY of " + query.conversation.str(), meta.error());
      if (!*meta) return refuse(WireCode::kUnknownGroup, "there is no group 'g:" + group.str() + "'");
    }
    auto page = read_group_history(*history, *groups, group, query, joined);
    if (!page.ok())
      return read_error_frame(metrics, ref, "HISTORY of " + query.conversation.str(), page.error());
    return page_for(metrics, ref, query.conversation, std::move(*page), privacy, messages, reader, *history,
                    outbox);
  }
  if (reader && !is_member(*reader, query.conversation))
    return refuse(WireCode::kForbidden,
                  "you are not a member of conversation '" + query.conversation.str() + "'");
  if (!reader && !c.ok()) return refuse(WireCode::kInvalidArgument, c.error().message());
  if (history == nullptr) return refuse(WireCode::kUnavailable, "history is not served by this gateway");
  auto page = history->read(query);
  if (page.ok())
    return page_for(metrics, ref, query.conversation, std::move(*page), privacy, messages, reader, *history,
                    outbox);
  return read_error_frame(metrics, ref, "HISTORY of " + query.conversation.str(), page.error());
}

}  // namespace qim
