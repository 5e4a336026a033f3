#include "inbox/inbox_backend.h"

#include <algorithm>
#include <functional>
#include <future>

namespace qim {

int64_t InboxBackend::cell_version(int64_t now_ms) {
  int64_t last = last_cell_version_.load(std::memory_order_relaxed);
  int64_t next = 0;
  do {
    next = std::max(now_ms, last + 1);
  } while (!last_cell_version_.compare_exchange_weak(last, next, std::memory_order_relaxed));
  return next;
}

// The defaults read every row of the user (O(conversations)): correct for any backend, fast for none; a
// backend with an activity index overrides them (docs/adr/0089).

Result<std::vector<ActivityPosition>> InboxBackend::activity_desc(const UserId& user, MailboxSeq after,
                                                                  MailboxSeq before, uint32_t limit) {
  QIM_ASSIGN_OR_RETURN(std::vector<ConversationRow> rows, conversation_rows(user));
  std::map<ConversationId, MailboxSeq> highest;
  for (const ConversationRow& r : rows) {
    MailboxSeq& kept = highest[r.conversation];
    kept = std::max(kept, r.last.seq);
  }
  std::vector<ActivityPosition> out;
  for (const auto& [c, seq] : highest) {
    if (seq > after && seq < before) out.push_back(ActivityPosition{seq, c});
  }
  std::sort(out.begin(), out.end(),
            [](const ActivityPosition& a, const ActivityPosition& b) { return a.seq > b.seq; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

Result<std::vector<std::optional<InboxEntryRef>>> InboxBackend::rows_of(
    const UserId& user, std::span<const ConversationId> conversations) {
  QIM_ASSIGN_OR_RETURN(std::vector<ConversationRow> rows, conversation_rows(user));
  std::map<ConversationId, InboxEntryRef> highest;
  for (ConversationRow& r : rows) {
    auto [it, fresh] = highest.try_emplace(r.conversation, r.last);
    if (!fresh && it->second.seq < r.last.seq) it->second = std::move(r.last);
  }
  std::vector<std::optional<InboxEntryRef>> out;
  for (const ConversationId& c : conversations) {
    auto it = highest.find(c);
    out.push_back(it == highest.end() ? std::nullopt : std::optional(it->second));
  }
  return out;
}

Result<std::vector<MailboxSeq>> InboxBackend::read_marks_of(const UserId& user,
                                                            std::span<const ConversationId> conversations) {
  std::vector<MailboxSeq> out;
  out.reserve(conversations.size());
  for (const ConversationId& c : conversations) {
    QIM_ASSIGN_OR_RETURN(MailboxSeq m, read_mark(user, c));
    out.push_back(m);
  }
  return out;
}

Result<BatchAnswers> InboxBackend::read_batch(const BatchReads& reads, uint32_t parallelism) {
  BatchAnswers out;
  out.counts.resize(reads.counts.size());
  out.index.resize(reads.index.size());
  out.settings.resize(reads.settings.size());
  out.receipts.resize(reads.receipts.size());
  // One task per query, each writing its own slot of `out` (sized above, never resized while they run).
  std::vector<std::function<Status()>> tasks;
  for (size_t i = 0; i < reads.counts.size(); ++i) {
    tasks.push_back([&, i]() -> Status {
      const CountQuery& q = reads.counts[i];
      QIM_ASSIGN_OR_RETURN(out.counts[i], count_unread(q.user, q.conversation, q.after, q.upto, q.cap));
      return {};
    });
  }
  for (size_t i = 0; i < reads.index.size(); ++i) {
    tasks.push_back([&, i]() -> Status {
      const IndexQuery& q = reads.index[i];
      QIM_ASSIGN_OR_RETURN(out.index[i], index_rows_desc(q.user, q.conversation, q.after, q.upto, q.limit));
      return {};
    });
  }
  for (size_t i = 0; i < reads.settings.size(); ++i) {
    tasks.push_back([&, i]() -> Status {
      QIM_ASSIGN_OR_RETURN(out.settings[i], settings(reads.settings[i]));
      return {};
    });
  }
  for (size_t i = 0; i < reads.receipts.size(); ++i) {
    tasks.push_back([&, i]() -> Status {
      QIM_ASSIGN_OR_RETURN(out.receipts[i], receipts(reads.receipts[i], reads.receipts_limit));
      return {};
    });
  }
  const size_t parallel = std::max<size_t>(1, parallelism);
  for (size_t from = 0; from < tasks.size(); from += parallel) {
    const size_t to = std::min(tasks.size(), from + parallel);
    if (to - from == 1) {
      QIM_RETURN_IF_ERROR(tasks[from]());
      continue;
    }
    std::vector<std::future<Status>> running;
    for (size_t i = from; i < to; ++i) running.push_back(std::async(std::launch::async, tasks[i]));
    std::optional<Error> first;
    for (auto& f : running) {  // every one is waited for before `out` (they write into it) goes
      Status s = f.get();
      if (!s.ok() && !first) first = s.error();
    }
    if (first) return *first;
  }
  return out;
}

Status InboxBackend::drop_stale_activity(const UserId&, std::span<const ActivityPosition>) {
  return {};
}

}  // namespace qim
