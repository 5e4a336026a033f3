#include "inbox/activity_walk.h"

#include <algorithm>

namespace qim {

namespace {

constexpr MailboxSeq kNoBound = MailboxSeq::from_raw(~uint64_t{0});

MailboxSeq plus_one(MailboxSeq s) {
  return s == kNoBound ? s : MailboxSeq::from_raw(s.raw() + 1);
}

}  // namespace

MailboxSeq below_epoch(Epoch e) {
  const uint64_t first = compose(e, Offset{0})->raw();
  return MailboxSeq::from_raw(first == 0 ? 0 : first - 1);
}

std::vector<std::pair<MailboxSeq, MailboxSeq>> visible_ranges(const MailboxVisibility& vis, MailboxSeq upto) {
  std::vector<std::pair<MailboxSeq, MailboxSeq>> out;
  for (auto f = vis.frontiers.rbegin(); f != vis.frontiers.rend(); ++f) {
    const MailboxSeq lo = std::max(vis.trim, below_epoch(f->epoch()));
    const MailboxSeq hi = std::min(*f, upto);
    if (hi > lo) out.emplace_back(lo, hi);
  }
  return out;
}

Result<std::optional<InboxEntryRef>> last_visible(InboxBackend& backend, const UserId& user,
                                                  const ConversationId& c, const MailboxVisibility& vis,
                                                  MailboxSeq upto) {
  for (const auto& [lo, hi] : visible_ranges(vis, upto)) {
    QIM_ASSIGN_OR_RETURN(auto rows, backend.index_rows_desc(user, c, lo, hi, 1));
    if (!rows.empty()) return std::optional(std::move(rows.front()));
  }
  return std::optional<InboxEntryRef>();
}

ActivityWalk::ActivityWalk(InboxBackend& backend, const UserId& user, const MailboxVisibility& vis,
                           const ListPrivacy* privacy, std::optional<MailboxSeq> before)
    : backend_(backend),
      user_(user),
      vis_(vis),
      privacy_(privacy),
      before_(before),
      cursor_(before.value_or(kNoBound)) {}

Status ActivityWalk::prepare() {
  prepared_ = true;
  if (!before_) return {};
  // Above `before`, a current row lands below it only when it is not visible (its fallback is lower) or
  // when privacy moves its last entry down. Rows not visible lie in the ranges no epoch shows: between
  // the visible ranges (below_epoch(e), F_e], above the last. Few positions live there (a page being
  // written, a stale owner's last rows), so reading them all is cheap.
  MailboxSeq from = std::max(vis_.trim, MailboxSeq::from_raw(before_->raw() == 0 ? 0 : before_->raw() - 1));
  for (MailboxSeq f : vis_.frontiers) {
    const MailboxSeq lo = below_epoch(f.epoch());
    if (f <= from) continue;
    if (lo > from) QIM_RETURN_IF_ERROR(resolve_range(from, lo));
    from = std::max(from, f);
  }
  QIM_RETURN_IF_ERROR(resolve_range(from, kNoBound));
  if (privacy_ == nullptr || privacy_->hidden.empty()) return {};
  const std::set<ConversationId> hidden = privacy_->hidden.conversations();
  const std::vector<ConversationId> cs(hidden.begin(), hidden.end());
  QIM_ASSIGN_OR_RETURN(auto rows, backend_.rows_of(user_, cs));
  for (size_t i = 0; i < cs.size(); ++i) {
    if (rows[i] && rows[i]->seq >= *before_) {
      QIM_RETURN_IF_ERROR(resolve(ActivityPosition{rows[i]->seq, cs[i]}, rows[i]));
    }
  }
  return {};
}

Status ActivityWalk::resolve_range(MailboxSeq after, MailboxSeq upto) {
  MailboxSeq below = plus_one(upto);
  while (below > plus_one(after)) {
    QIM_ASSIGN_OR_RETURN(auto positions, backend_.activity_desc(user_, after, below, kChunk));
    if (positions.empty()) return {};
    std::vector<ConversationId> cs;
    for (const ActivityPosition& p : positions) cs.push_back(p.conversation);
    QIM_ASSIGN_OR_RETURN(auto rows, backend_.rows_of(user_, cs));
    for (size_t i = 0; i < positions.size(); ++i) QIM_RETURN_IF_ERROR(resolve(positions[i], rows[i]));
    if (positions.size() < kChunk) return {};
    below = positions.back().seq;
  }
  return {};
}

Status ActivityWalk::fetch() {
  // Positions at or below the trim have no visible entry left (their fallback would lie below them).
  QIM_ASSIGN_OR_RETURN(auto positions, backend_.activity_desc(user_, vis_.trim, cursor_, kChunk));
  if (positions.size() < kChunk) exhausted_ = true;
  if (positions.empty()) return {};
  std::vector<ConversationId> cs;
  for (const ActivityPosition& p : positions) cs.push_back(p.conversation);
  QIM_ASSIGN_OR_RETURN(auto rows, backend_.rows_of(user_, cs));
  cursor_ = positions.back().seq;
  for (size_t i = 0; i < positions.size(); ++i) pending_.emplace_back(positions[i], std::move(rows[i]));
  return {};
}

Result<std::optional<InboxEntryRef>> ActivityWalk::apply_privacy(const ConversationId& c,
                                                                 InboxEntryRef last) {
  if (privacy_ == nullptr || privacy_->hidden.empty()) return std::optional(std::move(last));
  const HiddenSet& hidden = privacy_->hidden;
  // Deleted for me: the latest entry not deleted, a bounded look back (privacy.h).
  if (auto through = hidden.through(c); through && last.message <= *through)
    return std::optional<InboxEntryRef>();
  uint32_t looked = 0;
  while (hidden.hides(c, last.message) && looked++ < kHiddenLookback) {
    if (last.seq.raw() == 0) break;
    QIM_ASSIGN_OR_RETURN(auto earlier,
                         last_visible(backend_, user_, c, vis_, MailboxSeq::from_raw(last.seq.raw() - 1)));
    if (!earlier) break;
    last = std::move(*earlier);
  }
  if (hidden.hides(c, last.message)) return std::optional<InboxEntryRef>();
  return std::optional(std::move(last));
}

Status ActivityWalk::resolve(const ActivityPosition& p, const std::optional<InboxEntryRef>& row) {
  if (!row || row->seq < p.seq) return {};  // its row is not there yet: only skipped
  if (row->seq > p.seq) {
    stale_.push_back(p);  // superseded: the row's own position is higher
    // A row not visible may have risen after its position was read (the call not acknowledged yet, the
    // position read before it landed): its conversation's last visible entry may still be here or below,
    // so it is resolved from this position (once: a higher position read first has done it).
    if (vis_.visible(row->seq)) return {};
  }
  if (!resolved_.insert(p.conversation).second) return {};
  std::optional<InboxEntryRef> last;
  if (row->seq == p.seq && vis_.visible(row->seq)) {
    last = *row;
  } else {
    QIM_ASSIGN_OR_RETURN(last, last_visible(backend_, user_, p.conversation, vis_, kNoBound));
    if (!last) return {};
  }
  QIM_ASSIGN_OR_RETURN(last, apply_privacy(p.conversation, std::move(*last)));
  if (!last || (before_ && last->seq >= *before_)) return {};
  ListedConversation listed{p.conversation, std::move(*last), std::nullopt};
  if (privacy_ != nullptr) {
    if (auto m = privacy_->mutes.find(p.conversation);
        m != privacy_->mutes.end() && m->second.active(privacy_->now_ms))
      listed.muted = m->second;
  }
  const uint64_t key = listed.last.seq.raw();
  candidates_.emplace(std::pair(key, p.conversation.str()), std::move(listed));
  return {};
}

Result<std::optional<ListedConversation>> ActivityWalk::next() {
  if (!prepared_) QIM_RETURN_IF_ERROR(prepare());
  for (;;) {
    if (pending_.empty() && !exhausted_) QIM_RETURN_IF_ERROR(fetch());
    // A candidate above every position not read yet is final: no conversation's last visible entry lies
    // above its own row's position.
    if (!candidates_.empty() &&
        (pending_.empty() || candidates_.begin()->first.first > pending_.front().first.seq.raw())) {
      ListedConversation out = std::move(candidates_.begin()->second);
      candidates_.erase(candidates_.begin());
      return std::optional(std::move(out));
    }
    if (pending_.empty()) return std::optional<ListedConversation>();
    auto [p, row] = std::move(pending_.front());
    pending_.pop_front();
    QIM_RETURN_IF_ERROR(resolve(p, row));
  }
}

Status ActivityWalk::finish() {
  if (stale_.empty()) return {};
  Status s = backend_.drop_stale_activity(user_, stale_);
  stale_.clear();
  return s;
}

}  // namespace qim
