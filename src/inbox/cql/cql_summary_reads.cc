// The reads that summarise a page of conversations (count_unread, index_rows_desc, settings, receipts)
// and read_batch, which sends a page's worth of them at once (docs/adr/0159). Each read is written once,
// as two halves: issue_* sends its requests without waiting for them (none for an empty range or limit),
// fold_* turns their results into what the single call answers. A single call is issue, wait, fold: one
// round trip. read_batch issues every query, waits for them all (one wave: one round trip, whatever the
// number of queries), then folds each in the order of its queries: the first error fails the batch.
#include <algorithm>
#include <climits>

#include "inbox/cql/cql_inbox_backend.h"
#include "inbox/cql/inbox_cells.h"
#include "mailbox/scylla/cql_status.h"

namespace qim {

namespace {

using cql::Values;

int32_t i32(uint32_t v) {
  return static_cast<int32_t>(v);
}
int64_t i64(uint64_t v) {
  return static_cast<int64_t>(v);
}
int32_t limit_of(uint32_t v) {
  return static_cast<int32_t>(std::min<uint32_t>(v, INT32_MAX));
}

}  // namespace

// A paged request's pages follow one another; different requests' go out together. So a wave costs one
// round trip, plus the pages its longest paged read took past its first.
void CqlInboxBackend::await(std::span<const Issued> wave) {
  bool sent = false;
  uint64_t pages = 1;
  for (const Issued& issued : wave) {
    for (const cql::PendingResult& p : issued.requests) {
      sent = true;
      const cql::Result<cql::Rows>& r = p.get();  // waits
      if (issued.paged && r.ok()) pages = std::max<uint64_t>(pages, r->size() / kPage + 1);
    }
  }
  if (sent) round_trips_ += pages;
}

Result<const cql::Rows*> CqlInboxBackend::answered(const cql::PendingResult& request, bool paged,
                                                   const std::string& what) {
  const cql::Result<cql::Rows>& r = request.get();
  if (!r.ok()) {
    if (!paged) counters_.reads++;
    return scylla::to_error(r.error(), what);
  }
  counters_.reads += paged ? r->size() / kPage + 1 : 1;  // a read counted a page, as read_all counts
  rows_read_ += r->size();
  return &r.value();
}

// --- count_unread: one slice of the counting rows, LIMIT cap ---

CqlInboxBackend::Issued CqlInboxBackend::issue_count(const CountQuery& q) {
  Issued out;
  if (q.after >= q.upto || q.cap == 0) return out;
  out.requests.push_back(session_.execute_async(count_read_,
                                                Values()
                                                    .text(q.user.str())
                                                    .text(q.conversation.str())
                                                    .int32(i32(q.after.epoch().value))
                                                    .bigint(i64(q.after.offset().value))
                                                    .int32(i32(q.upto.epoch().value))
                                                    .bigint(i64(q.upto.offset().value))
                                                    .int32(limit_of(q.cap)),
                                                plain()));
  return out;
}

Result<uint32_t> CqlInboxBackend::fold_count(const CountQuery& q, const Issued& issued) {
  if (issued.requests.empty()) return uint32_t{0};
  QIM_ASSIGN_OR_RETURN(const cql::Rows* rows, answered(issued.requests[0], /*paged=*/false,
                                                       "inbox: count unread of " + q.conversation.str()));
  return static_cast<uint32_t>(std::min<size_t>(rows->size(), q.cap));
}

Result<uint32_t> CqlInboxBackend::count_unread(const UserId& user, const ConversationId& c, MailboxSeq after,
                                               MailboxSeq upto, uint32_t cap) {
  const CountQuery q{user, c, after, upto, cap};
  const Issued issued = issue_count(q);
  await({&issued, 1});
  return fold_count(q, issued);
}

// --- index_rows_desc: the counting slice and the other one, sent together, merged ---

CqlInboxBackend::Issued CqlInboxBackend::issue_index(const IndexQuery& q) {
  Issued out;
  if (q.after >= q.upto || q.limit == 0) return out;
  for (const bool counts : {true, false}) {  // requests[0]: the counting rows
    out.requests.push_back(session_.execute_async(index_read_,
                                                  Values()
                                                      .text(q.user.str())
                                                      .text(q.conversation.str())
                                                      .boolean(counts)
                                                      .int32(i32(q.after.epoch().value))
                                                      .bigint(i64(q.after.offset().value))
                                                      .boolean(counts)
                                                      .int32(i32(q.upto.epoch().value))
                                                      .bigint(i64(q.upto.offset().value))
                                                      .int32(limit_of(q.limit)),
                                                  plain()));
  }
  return out;
}

Result<std::vector<InboxEntryRef>> CqlInboxBackend::fold_index(const IndexQuery& q, const Issued& issued) {
  std::vector<InboxEntryRef> out;
  for (size_t k = 0; k < issued.requests.size(); ++k) {
    QIM_ASSIGN_OR_RETURN(
        const cql::Rows* rows,
        answered(issued.requests[k], /*paged=*/false, "inbox: read index rows of " + q.conversation.str()));
    for (const cql::Row row : *rows) {
      QIM_ASSIGN_OR_RETURN(InboxEntryRef ref, inbox_cells::index_row(row, /*counts=*/k == 0));
      out.push_back(std::move(ref));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const InboxEntryRef& a, const InboxEntryRef& b) { return a.seq > b.seq; });
  if (out.size() > q.limit) out.resize(q.limit);
  return out;
}

Result<std::vector<InboxEntryRef>> CqlInboxBackend::index_rows_desc(const UserId& user,
                                                                    const ConversationId& c, MailboxSeq after,
                                                                    MailboxSeq upto, uint32_t limit) {
  const IndexQuery q{user, c, after, upto, limit};
  const Issued issued = issue_index(q);
  await({&issued, 1});
  return fold_index(q, issued);
}

// --- settings: the user's partition, every page ---

CqlInboxBackend::Issued CqlInboxBackend::issue_settings(const UserId& user) {
  cql::ExecOptions o = plain();
  o.page_size = kPage;
  o.max_rows = -1;
  Issued out;
  out.paged = true;
  out.requests.push_back(session_.execute_async(settings_read_, Values().text(user.str()), o));
  return out;
}

Result<std::map<std::string, std::string>> CqlInboxBackend::fold_settings(const UserId& user,
                                                                          const Issued& issued) {
  QIM_ASSIGN_OR_RETURN(const cql::Rows* rows,
                       answered(issued.requests[0], /*paged=*/true, "inbox: read settings"));
  std::map<std::string, std::string> out;
  for (const cql::Row row : *rows) {
    QIM_ASSIGN_OR_RETURN(auto setting, inbox_cells::setting(row, user));
    out.insert(std::move(setting));
  }
  return out;
}

Result<std::map<std::string, std::string>> CqlInboxBackend::settings(const UserId& user) {
  const Issued issued = issue_settings(user);
  await({&issued, 1});
  return fold_settings(user, issued);
}

// --- receipts: the conversation's partition, paged: a large group's come kPage rows a response ---

CqlInboxBackend::Issued CqlInboxBackend::issue_receipts(const ConversationId& c, uint32_t limit) {
  Issued out;
  out.paged = true;
  if (limit == 0) return out;
  const int32_t lim = limit_of(limit);
  cql::ExecOptions o = plain();
  o.page_size = kPage;
  o.max_rows = lim;
  out.requests.push_back(session_.execute_async(receipts_read_, Values().text(c.str()).int32(lim), o));
  return out;
}

Result<std::vector<ReceiptMark>> CqlInboxBackend::fold_receipts(const ConversationId& c,
                                                                const Issued& issued) {
  std::vector<ReceiptMark> out;
  if (issued.requests.empty()) return out;
  QIM_ASSIGN_OR_RETURN(const cql::Rows* rows, answered(issued.requests[0], /*paged=*/true,
                                                       "inbox: read the receipts of " + c.str()));
  out.reserve(rows->size());
  for (const cql::Row row : *rows) {
    QIM_ASSIGN_OR_RETURN(ReceiptMark r, inbox_cells::receipt(row, c));
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<ReceiptMark>> CqlInboxBackend::receipts(const ConversationId& c, uint32_t limit) {
  const Issued issued = issue_receipts(c, limit);
  await({&issued, 1});
  return fold_receipts(c, issued);
}

// --- the batch: every query issued, one wave waited for, each folded in the order of its queries ---

Result<BatchAnswers> CqlInboxBackend::read_batch(const BatchReads& reads, uint32_t) {
  std::vector<Issued> wave;
  wave.reserve(reads.counts.size() + reads.index.size() + reads.settings.size() + reads.receipts.size());
  for (const CountQuery& q : reads.counts) wave.push_back(issue_count(q));
  for (const IndexQuery& q : reads.index) wave.push_back(issue_index(q));
  for (const UserId& user : reads.settings) wave.push_back(issue_settings(user));
  for (const ConversationId& c : reads.receipts) wave.push_back(issue_receipts(c, reads.receipts_limit));
  // Every request is waited for, even when an earlier one failed: none is left in flight when the batch
  // answers, and the error returned is the first in the order of the queries, as the single calls meet it.
  await(wave);
  BatchAnswers out;
  out.counts.reserve(reads.counts.size());
  out.index.reserve(reads.index.size());
  out.settings.reserve(reads.settings.size());
  out.receipts.reserve(reads.receipts.size());
  const Issued* next = wave.data();
  for (const CountQuery& q : reads.counts) {
    QIM_ASSIGN_OR_RETURN(uint32_t n, fold_count(q, *next++));
    out.counts.push_back(n);
  }
  for (const IndexQuery& q : reads.index) {
    QIM_ASSIGN_OR_RETURN(auto rows, fold_index(q, *next++));
    out.index.push_back(std::move(rows));
  }
  for (const UserId& user : reads.settings) {
    QIM_ASSIGN_OR_RETURN(auto settings, fold_settings(user, *next++));
    out.settings.push_back(std::move(settings));
  }
  for (const ConversationId& c : reads.receipts) {
    QIM_ASSIGN_OR_RETURN(auto receipts, fold_receipts(c, *next++));
    out.receipts.push_back(std::move(receipts));
  }
  return out;
}

}  // namespace qim
