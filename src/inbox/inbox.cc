#include "inbox/inbox.h"

#include <algorithm>
#include <functional>
#include <future>
#include <map>

namespace qim {

namespace {

Error invalid(std::string msg) {
  return Error(Errc::kInvalidArgument, std::move(msg));
}

// The seq just below epoch e's first seq: each epoch's visible range is (floor, F_e].
MailboxSeq below_epoch(Epoch e) {
  const uint64_t first = compose(e, Offset{0})->raw();
  return MailboxSeq::from_raw(first == 0 ? 0 : first - 1);
}

// Receipts are read at most this many per conversation: a group's current and former members.
constexpr uint32_t kReceiptsReadMax = 100'000;

}  // namespace

Inbox::Inbox(MailboxStore& mailbox, InboxBackend& backend, InboxOptions options)
    : mailbox_(mailbox), backend_(backend), options_(options) {}

// The highest visible index row of (user, c), looking at each epoch's own range, newest epoch first: the
// first hit is the answer (seqs of a higher epoch are higher). `upto` bounds it further (a read mark).
static Result<std::optional<InboxEntryRef>> last_visible(InboxBackend& backend, const UserId& user,
                                                         const ConversationId& c,
                                                         const MailboxVisibility& vis, MailboxSeq upto) {
  for (auto f = vis.frontiers.rbegin(); f != vis.frontiers.rend(); ++f) {
    const MailboxSeq lo = std::max(vis.trim, below_epoch(f->epoch()));
    const MailboxSeq hi = std::min(*f, upto);
    if (hi <= lo) continue;
    QIM_ASSIGN_OR_RETURN(auto rows, backend.index_rows_desc(user, c, lo, hi, 1));
    if (!rows.empty()) return std::optional(std::move(rows.front()));
  }
  return std::optional<InboxEntryRef>();
}

// The visible counting rows of (user, c) above `read`, summed over each epoch's range, stopping at `cap`.
static Result<uint32_t> count_visible(InboxBackend& backend, const UserId& user, const ConversationId& c,
                                      const MailboxVisibility& vis, MailboxSeq read, uint32_t cap) {
  uint32_t n = 0;
  for (auto f = vis.frontiers.rbegin(); f != vis.frontiers.rend() && n < cap; ++f) {
    const MailboxSeq lo = std::max({read, vis.trim, below_epoch(f->epoch())});
    if (*f <= lo) continue;
    QIM_ASSIGN_OR_RETURN(uint32_t part, backend.count_unread(user, c, lo, *f, cap - n));
    n += part;
  }
  return n;
}

static constexpr MailboxSeq kNoBound = MailboxSeq::from_raw(~uint64_t{0});

Result<std::pair<uint32_t, bool>> Inbox::unread(const UserId& user, const ConversationId& c) {
  if (user.empty()) return invalid("unread without a user");
  QIM_ASSIGN_OR_RETURN(MailboxVisibility vis, mailbox_.visibility(user));
  QIM_ASSIGN_OR_RETURN(MailboxSeq read, backend_.read_mark(user, c));
  QIM_ASSIGN_OR_RETURN(uint32_t n, count_visible(backend_, user, c, vis, read, kUnreadCap + 1));
  return std::pair(std::min(n, kUnreadCap), n > kUnreadCap);
}

Result<ConversationSummary> Inbox::conversation(const UserId& user, const ConversationId& c) {
  if (user.empty()) return invalid("conversation without a user");
  QIM_ASSIGN_OR_RETURN(MailboxVisibility vis, mailbox_.visibility(user));
  QIM_ASSIGN_OR_RETURN(auto last, last_visible(backend_, user, c, vis, kNoBound));
  if (!last) return Error(Errc::kNotFound, user.str() + " has no visible entry of " + c.str());
  ConversationSummary s;
  s.conversation = c;
  s.last = std::move(*last);
  QIM_ASSIGN_OR_RETURN(s.read_seq, backend_.read_mark(user, c));
  QIM_RETURN_IF_ERROR(fill_unread(user, vis, s));
  QIM_RETURN_IF_ERROR(fill_peer(user, s));
  return s;
}

Status Inbox::fill_unread(const UserId& user, const MailboxVisibility& vis, ConversationSummary& s) {
  s.unread = 0;
  s.unread_capped = false;
  if (s.last.seq <= s.read_seq) return {};  // nothing visible above the mark
  QIM_ASSIGN_OR_RETURN(uint32_t n,
                       count_visible(backend_, user, s.conversation, vis, s.read_seq, kUnreadCap + 1));
  s.unread = std::min(n, kUnreadCap);
  s.unread_capped = n > kUnreadCap;
  return {};
}

Status Inbox::fill_peer(const UserId& user, ConversationSummary& s) {
  auto parsed = Conversation::of(s.conversation);
  if (!parsed.ok() || parsed->direct_pair() == nullptr) return {};  // a group, or not a direct id
  const std::optional<UserId> peer = parsed->direct_pair()->peer_of(user);
  if (!peer || *peer == user) return {};  // not a party, or a note to self
  QIM_ASSIGN_OR_RETURN(MailboxVisibility peer_vis, mailbox_.visibility(*peer));
  QIM_ASSIGN_OR_RETURN(auto delivered, last_visible(backend_, *peer, s.conversation, peer_vis, kNoBound));
  if (delivered) s.peer_delivered_through = delivered->message;
  QIM_ASSIGN_OR_RETURN(auto peer_settings, backend_.settings(*peer));
  if (auto r = peer_settings.find("receipts"); r != peer_settings.end() && r->second == "off") return {};
  QIM_ASSIGN_OR_RETURN(auto marks, backend_.receipts(s.conversation, 16));
  for (const ReceiptMark& m : marks) {
    if (m.user == *peer) s.peer_read_through = m.read_through;
  }
  return {};
}

Result<ConversationPage> Inbox::conversations(const UserId& user, std::optional<MailboxSeq> before,
                                              uint32_t limit) {
  return list(user, before, limit, nullptr);
}

Result<ConversationPage> Inbox::conversations(const UserId& user, std::optional<MailboxSeq> before,
                                              uint32_t limit, int64_t now_ms) {
  if (user.empty()) return invalid("conversations without a user");
  Privacy privacy(backend_);
  PrivacyView view;
  view.now_ms = now_ms;
  QIM_ASSIGN_OR_RETURN(view.mutes, privacy.mutes(user));
  QIM_ASSIGN_OR_RETURN(view.hidden, privacy.hidden(user));
  return list(user, before, limit, &view);
}

Result<ConversationPage> Inbox::list(const UserId& user, std::optional<MailboxSeq> before, uint32_t limit,
                                     const PrivacyView* privacy) {
  if (user.empty()) return invalid("conversations without a user");
  if (limit == 0 || limit > 200) return invalid("conversation page limit must be 1..200");
  QIM_ASSIGN_OR_RETURN(MailboxVisibility vis, mailbox_.visibility(user));
  QIM_ASSIGN_OR_RETURN(std::vector<ConversationRow> rows, backend_.conversation_rows(user));
  if (rows.size() > options_.max_conversations) {
    return Error(Errc::kResourceExhausted, user.str() + " has " + std::to_string(rows.size()) +
                                               " conversation rows, above the bound of " +
                                               std::to_string(options_.max_conversations));
  }
  // Per conversation its highest row (a backend may keep several, e.g. one per epoch). Visible, it is the
  // last visible entry: no visible entry lies above the highest written. Not visible (written above its
  // epoch's frontier, or at or below the trim), the conversation's highest visible index row is: a lower
  // row, even a visible one, could be older than an entry the index holds below the highest row.
  std::map<ConversationId, InboxEntryRef> highest;
  for (ConversationRow& row : rows) {
    auto [it, fresh] = highest.try_emplace(row.conversation, row.last);
    if (!fresh && it->second.seq < row.last.seq) it->second = std::move(row.last);
  }
  std::vector<ConversationSummary> all;
  all.reserve(highest.size());
  for (auto& [c, top] : highest) {
    ConversationSummary s;
    s.conversation = c;
    if (vis.visible(top.seq)) {
      s.last = std::move(top);
    } else {
      QIM_ASSIGN_OR_RETURN(auto fallback, last_visible(backend_, user, c, vis, kNoBound));
      if (!fallback) continue;
      s.last = std::move(*fallback);
    }
    if (privacy != nullptr && !privacy->hidden.empty()) {
      // Deleted for me: the latest entry not deleted, a bounded look back (privacy.h).
      if (auto through = privacy->hidden.through(c); through && s.last.message <= *through) continue;
      uint32_t looked = 0;
      while (privacy->hidden.hides(c, s.last.message) && looked++ < kHiddenLookback) {
        if (s.last.seq.raw() == 0) break;
        QIM_ASSIGN_OR_RETURN(
            auto earlier, last_visible(backend_, user, c, vis, MailboxSeq::from_raw(s.last.seq.raw() - 1)));
        if (!earlier) break;
        s.last = std::move(*earlier);
      }
      if (privacy->hidden.hides(c, s.last.message)) continue;
    }
    if (privacy != nullptr) {
      if (auto m = privacy->mutes.find(c); m != privacy->mutes.end() && m->second.active(privacy->now_ms))
        s.muted = m->second;
    }
    all.push_back(std::move(s));
  }
  QIM_ASSIGN_OR_RETURN(std::vector<ReadMark> marks, backend_.read_marks(user));
  std::map<ConversationId, MailboxSeq> mark_of;
  for (const ReadMark& m : marks) {
    MailboxSeq& kept = mark_of[m.conversation];
    kept = std::max(kept, m.seq);
  }
  std::sort(all.begin(), all.end(), [](const ConversationSummary& a, const ConversationSummary& b) {
    return a.last.seq != b.last.seq ? a.last.seq > b.last.seq : a.conversation < b.conversation;
  });

  ConversationPage page;
  for (ConversationSummary& s : all) {
    if (auto m = mark_of.find(s.conversation); m != mark_of.end()) s.read_seq = m->second;
    // Whether it has any unread: the last entry counts, or else one count capped at 1 over its range.
    if (s.last.seq > s.read_seq) {
      bool has = s.last.counts;
      if (!has) {
        QIM_ASSIGN_OR_RETURN(uint32_t n, count_visible(backend_, user, s.conversation, vis, s.read_seq, 1));
        has = n > 0;
      }
      if (has && !s.muted) page.unread_conversations++;  // a muted conversation shows no badge
    }
    if (before && s.last.seq >= *before) continue;
    if (page.items.size() == limit) {
      page.next_before = page.items.back().last.seq;
      continue;
    }
    page.items.push_back(s);
  }
  auto summarise = [&](ConversationSummary& s) -> Status {
    QIM_RETURN_IF_ERROR(fill_unread(user, vis, s));
    return fill_peer(user, s);
  };
  const size_t parallel = std::max<size_t>(1, options_.page_parallelism);
  for (size_t from = 0; from < page.items.size(); from += parallel) {
    const size_t to = std::min(page.items.size(), from + parallel);
    if (to - from == 1) {
      QIM_RETURN_IF_ERROR(summarise(page.items[from]));
      continue;
    }
    std::vector<std::future<Status>> running;
    for (size_t i = from; i < to; ++i) {
      running.push_back(std::async(std::launch::async, summarise, std::ref(page.items[i])));
    }
    std::optional<Error> first;
    for (auto& f : running) {  // every one is waited for before the page (they write into it) goes
      Status s = f.get();
      if (!s.ok() && !first) first = s.error();
    }
    if (first) return *first;
  }
  return page;
}

Result<ReadOutcome> Inbox::mark_read(const UserId& user, const ConversationId& c, MailboxSeq seq) {
  if (user.empty()) return invalid("read without a user");
  if (c.empty()) return invalid("read without a conversation");
  QIM_ASSIGN_OR_RETURN(MailboxVisibility vis, mailbox_.visibility(user));
  QIM_ASSIGN_OR_RETURN(auto last, last_visible(backend_, user, c, vis, kNoBound));
  if (!last) return Error(Errc::kNotFound, user.str() + " has no visible entry of " + c.str());
  QIM_ASSIGN_OR_RETURN(MailboxSeq before, backend_.read_mark(user, c));
  const MailboxSeq target = std::min(seq, last->seq);  // never above what the user can see
  ReadOutcome out;
  out.read_seq = std::max(before, target);
  if (target > before) {
    QIM_RETURN_IF_ERROR(backend_.raise_read_mark(user, c, target));
    out.moved = true;
  }
  // The message at the mark: the user's own entry of c at or below it (so only a member has one).
  QIM_ASSIGN_OR_RETURN(auto at_mark, last_visible(backend_, user, c, vis, out.read_seq));
  if (at_mark) out.read_through = at_mark->message;
  // The receipt follows the mark (a monotonic max: raising it again changes nothing), unless the user's
  // receipts are off: then only their own devices learn of the read.
  if (out.read_through) {
    QIM_ASSIGN_OR_RETURN(auto mine, backend_.settings(user));
    auto r = mine.find("receipts");
    const bool receipts_on = r == mine.end() || r->second != "off";
    if (receipts_on) QIM_RETURN_IF_ERROR(backend_.raise_receipt(c, user, *out.read_through));
  }
  return out;
}

Result<MessageReceipts> Inbox::message_receipts(const ConversationId& c, MessageId message,
                                                std::span<const UserId> members) {
  if (c.empty()) return invalid("receipts without a conversation");
  QIM_ASSIGN_OR_RETURN(auto marks, backend_.receipts(c, kReceiptsReadMax));
  std::map<UserId, MessageId> of;
  for (const ReceiptMark& m : marks) of[m.user] = std::max(of[m.user], m.read_through);
  MessageReceipts out;
  std::vector<UserId> readers;
  for (const UserId& u : members) {
    auto it = of.find(u);
    if (it == of.end() || it->second < message) continue;
    out.read_count++;
    readers.push_back(u);
  }
  if (members.size() <= options_.readers_max) {
    std::sort(readers.begin(), readers.end());
    out.readers = std::move(readers);
  }
  return out;
}

}  // namespace qim
