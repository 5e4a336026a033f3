#include "inbox/inbox.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

namespace qim {

namespace {

Error invalid(std::string msg) {
  return Error(Errc::kInvalidArgument, std::move(msg));
}

// Receipts are read at most this many per conversation: a group's current and former members.
constexpr uint32_t kReceiptsReadMax = 100'000;
// A direct conversation's receipts read for its peer's (the pair's two at most).
constexpr uint32_t kPeerReceiptsRead = 16;

// The ranges (lo, hi] of (user, c) whose counting rows are unread above `read`, newest epoch first.
std::vector<std::pair<MailboxSeq, MailboxSeq>> unread_ranges(const MailboxVisibility& vis, MailboxSeq read) {
  std::vector<std::pair<MailboxSeq, MailboxSeq>> out;
  for (auto f = vis.frontiers.rbegin(); f != vis.frontiers.rend(); ++f) {
    const MailboxSeq lo = std::max({read, vis.trim, below_epoch(f->epoch())});
    if (*f > lo) out.emplace_back(lo, *f);
  }
  return out;
}

// The peer of a direct conversation (none for a group, a note to self, or a user not of the pair).
std::optional<UserId> direct_peer(const UserId& user, const ConversationId& c) {
  auto parsed = Conversation::of(c);
  if (!parsed.ok() || parsed->direct_pair() == nullptr) return std::nullopt;
  std::optional<UserId> peer = parsed->direct_pair()->peer_of(user);
  if (!peer || *peer == user) return std::nullopt;
  return peer;
}

}  // namespace

Inbox::Inbox(MailboxStore& mailbox, InboxBackend& backend, InboxOptions options)
    : mailbox_(mailbox), backend_(backend), options_(options) {}

// The visible counting rows of (user, c) above `read`, summed over each epoch's range, stopping at `cap`.
static Result<uint32_t> count_visible(InboxBackend& backend, const UserId& user, const ConversationId& c,
                                      const MailboxVisibility& vis, MailboxSeq read, uint32_t cap) {
  uint32_t n = 0;
  for (const auto& [lo, hi] : unread_ranges(vis, read)) {
    if (n >= cap) break;
    QIM_ASSIGN_OR_RETURN(uint32_t part, backend.count_unread(user, c, lo, hi, cap - n));
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
  QIM_RETURN_IF_ERROR(summarise(user, vis, std::span(&s, 1)));
  return s;
}

Status Inbox::summarise(const UserId& user, const MailboxVisibility& vis,
                        std::span<ConversationSummary> items) {
  // Every item's reads in one batch (docs/adr/0153): the rules below are the single calls' (unread: the
  // counts over unread_ranges summed, each capped; the peer's delivered: the first index row of its
  // visible_ranges, newest epoch first, as last_visible; its receipt unless its receipts are off).
  struct Slots {
    size_t count_from = 0, count_to = 0;
    size_t index_from = 0, index_to = 0;
    std::optional<size_t> peer;  // the settings and receipts slot of a direct conversation's peer
  };
  std::vector<Slots> slots(items.size());
  std::vector<std::optional<UserId>> peers(items.size());
  for (size_t i = 0; i < items.size(); ++i) peers[i] = direct_peer(user, items[i].conversation);
  // The direct peers' visibility from the mailbox store in one call (docs/adr/0163): each shard's
  // frontiers once, the peers' trims together, not two reads per peer one after another.
  std::vector<UserId> peer_users;
  std::vector<size_t> peer_at(items.size(), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    if (!peers[i]) continue;
    peer_at[i] = peer_users.size();
    peer_users.push_back(*peers[i]);
  }
  std::vector<MailboxVisibility> peer_vis;
  if (!peer_users.empty()) {
    QIM_ASSIGN_OR_RETURN(peer_vis, mailbox_.visibilities(peer_users));
  }
  BatchReads reads;
  reads.receipts_limit = kPeerReceiptsRead;
  for (size_t i = 0; i < items.size(); ++i) {
    const ConversationSummary& s = items[i];
    Slots& slot = slots[i];
    slot.count_from = reads.counts.size();
    if (s.last.seq > s.read_seq) {  // else nothing visible above the mark
      for (const auto& [lo, hi] : unread_ranges(vis, s.read_seq)) {
        reads.counts.push_back(CountQuery{user, s.conversation, lo, hi, kUnreadCap + 1});
      }
    }
    slot.count_to = reads.counts.size();
    if (!peers[i]) continue;
    slot.index_from = reads.index.size();
    for (const auto& [lo, hi] : visible_ranges(peer_vis[peer_at[i]], kNoBound)) {
      reads.index.push_back(IndexQuery{*peers[i], s.conversation, lo, hi, 1});
    }
    slot.index_to = reads.index.size();
    slot.peer = reads.settings.size();
    reads.settings.push_back(*peers[i]);
    reads.receipts.push_back(s.conversation);
  }
  QIM_ASSIGN_OR_RETURN(BatchAnswers answers, backend_.read_batch(reads, options_.page_parallelism));
  for (size_t i = 0; i < items.size(); ++i) {
    ConversationSummary& s = items[i];
    const Slots& slot = slots[i];
    uint32_t n = 0;
    for (size_t k = slot.count_from; k < slot.count_to; ++k) {
      n = std::min(n + std::min(answers.counts[k], kUnreadCap + 1), kUnreadCap + 1);
    }
    s.unread = std::min(n, kUnreadCap);
    s.unread_capped = n > kUnreadCap;
    if (!slot.peer) continue;
    for (size_t k = slot.index_from; k < slot.index_to; ++k) {
      if (answers.index[k].empty()) continue;
      s.peer_delivered_through = answers.index[k].front().message;
      break;
    }
    const auto& peer_settings = answers.settings[*slot.peer];
    if (auto r = peer_settings.find("receipts"); r != peer_settings.end() && r->second == "off") continue;
    for (const ReceiptMark& m : answers.receipts[*slot.peer]) {
      if (m.user == *peers[i]) s.peer_read_through = m.read_through;
    }
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
  ListPrivacy view;
  view.now_ms = now_ms;
  QIM_ASSIGN_OR_RETURN(view.mutes, privacy.mutes(user));
  QIM_ASSIGN_OR_RETURN(view.hidden, privacy.hidden(user));
  return list(user, before, limit, &view);
}

// unread_conversations: the walk from the newest conversation, stopping past the cap (docs/adr/0089).
static Result<std::pair<uint32_t, bool>> count_unread_conversations(InboxBackend& backend, const UserId& user,
                                                                    const MailboxVisibility& vis,
                                                                    const ListPrivacy* privacy,
                                                                    uint32_t parallelism) {
  ActivityWalk walk(backend, user, vis, privacy, std::nullopt);
  uint32_t n = 0;
  bool done = false;
  while (!done && n <= kUnreadConversationsCap) {
    std::vector<ListedConversation> chunk;
    while (chunk.size() < ActivityWalk::kChunk) {
      QIM_ASSIGN_OR_RETURN(auto next, walk.next());
      if (!next) {
        done = true;
        break;
      }
      if (!next->muted) chunk.push_back(std::move(*next));  // a muted conversation shows no badge
    }
    std::vector<ConversationId> cs;
    for (const ListedConversation& l : chunk) cs.push_back(l.conversation);
    QIM_ASSIGN_OR_RETURN(auto marks, backend.read_marks_of(user, cs));
    // A listed conversation has unread entries when its last entry is above the mark and counts, or else
    // when one count capped at 1 over its visible range above the mark finds one: those counts in one
    // batch (docs/adr/0153).
    BatchReads reads;
    std::vector<std::pair<size_t, size_t>> counted(chunk.size());  // the chunk's slots in reads.counts
    std::vector<bool> has(chunk.size(), false);
    for (size_t i = 0; i < chunk.size(); ++i) {
      const ListedConversation& l = chunk[i];
      counted[i].first = reads.counts.size();
      if (l.last.seq > marks[i] && l.last.counts) has[i] = true;
      if (l.last.seq > marks[i] && !l.last.counts) {
        for (const auto& [lo, hi] : unread_ranges(vis, marks[i])) {
          reads.counts.push_back(CountQuery{user, l.conversation, lo, hi, 1});
        }
      }
      counted[i].second = reads.counts.size();
    }
    QIM_ASSIGN_OR_RETURN(BatchAnswers answers, backend.read_batch(reads, parallelism));
    for (size_t i = 0; i < chunk.size() && n <= kUnreadConversationsCap; ++i) {
      for (size_t k = counted[i].first; k < counted[i].second && !has[i]; ++k) has[i] = answers.counts[k] > 0;
      if (has[i]) ++n;
    }
  }
  QIM_RETURN_IF_ERROR(walk.finish());
  return std::pair(std::min(n, kUnreadConversationsCap), n > kUnreadConversationsCap);
}

Result<ConversationPage> Inbox::list(const UserId& user, std::optional<MailboxSeq> before, uint32_t limit,
                                     const ListPrivacy* privacy) {
  if (user.empty()) return invalid("conversations without a user");
  if (limit == 0 || limit > 200) return invalid("conversation page limit must be 1..200");
  QIM_ASSIGN_OR_RETURN(MailboxVisibility vis, mailbox_.visibility(user));
  // The page: the activity index read from `before` down, one more than the page to learn whether more
  // follow (activity_walk.h: the order of a full sort of every row, at about `limit` reads).
  ActivityWalk walk(backend_, user, vis, privacy, before);
  ConversationPage page;
  while (page.items.size() <= limit) {
    QIM_ASSIGN_OR_RETURN(auto next, walk.next());
    if (!next) break;
    if (page.items.size() == limit) {
      page.next_before = page.items.back().last.seq;
      break;
    }
    ConversationSummary s;
    s.conversation = std::move(next->conversation);
    s.last = std::move(next->last);
    s.muted = std::move(next->muted);
    page.items.push_back(std::move(s));
  }
  QIM_RETURN_IF_ERROR(walk.finish());
  QIM_ASSIGN_OR_RETURN(std::tie(page.unread_conversations, page.unread_conversations_capped),
                       count_unread_conversations(backend_, user, vis, privacy, options_.page_parallelism));
  std::vector<ConversationId> cs;
  for (const ConversationSummary& s : page.items) cs.push_back(s.conversation);
  QIM_ASSIGN_OR_RETURN(auto marks, backend_.read_marks_of(user, cs));
  for (size_t i = 0; i < page.items.size(); ++i) page.items[i].read_seq = marks[i];

  QIM_RETURN_IF_ERROR(summarise(user, vis, page.items));
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
