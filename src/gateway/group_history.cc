#include "gateway/group_history.h"

#include <map>
#include <optional>

#include "core/mailbox_seq.h"

namespace qim {

namespace {

// Pages read for one HISTORY at most: bounds a request's work when many archived messages were delivered
// to nobody; the answer then says `more` and ends at what passed so far.
constexpr int kMaxPagesPerRequest = 16;

}  // namespace

Result<HistoryPage> read_group_history(HistoryStore& history, GroupStore& groups, const GroupId& group,
                                       HistoryQuery query, uint64_t joined) {
  std::map<UserId, std::optional<GroupMemberRecord>> senders;
  HistoryPage out;
  for (int pages = 0; pages < kMaxPagesPerRequest; ++pages) {
    QIM_ASSIGN_OR_RETURN(HistoryPage page, history.read(query));
    for (Message& m : page.messages) {
      const uint64_t offset = m.id.value & kMaxOffset;
      if (offset < joined) return out;  // from here on, before the member (last) joined
      auto it = senders.find(m.sender);
      if (it == senders.end()) {
        QIM_ASSIGN_OR_RETURN(auto record, groups.member(group, m.sender));
        it = senders.emplace(m.sender, std::move(record)).first;
      }
      if (!it->second || !it->second->member_at(offset)) continue;  // fanout delivered it to nobody
      out.messages.push_back(std::move(m));
      if (out.messages.size() >= query.limit) {
        out.more = true;
        return out;
      }
    }
    if (!page.more || page.messages.empty()) return out;
    query.before = page.messages.back().id;
  }
  // Out of pages to read: the client pages on from the last message read, shown or not (the answer may
  // hold none, and then names no id of its own to page from).
  out.more = true;
  out.next_before = query.before;
  return out;
}

}  // namespace qim
