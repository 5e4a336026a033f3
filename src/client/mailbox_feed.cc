#include "client/mailbox_feed.h"

#include <algorithm>

namespace qim::client {

MailboxFeed::MailboxFeed(Options options) : options_(std::move(options)), cursor_(options_.cursor) {
  for (uint64_t id : options_.recent_message_ids) (void)remember(id);
  options_.recent_message_ids.clear();
}

bool MailboxFeed::remember(uint64_t id) {
  if (options_.dedup_window == 0) return true;
  if (!recent_set_.insert(id).second) return false;
  recent_.push_back(id);
  if (recent_.size() > options_.dedup_window) {
    recent_set_.erase(recent_.front());
    recent_.pop_front();
  }
  return true;
}

MailboxFeed::Actions MailboxFeed::start() {
  Actions a;
  if (options_.sync_allowed) begin_sync(a);
  return a;
}

MailboxFeed::Actions MailboxFeed::resync() {
  Actions a;
  if (!options_.sync_allowed) return a;
  if (syncing_) {
    resync_wanted_ = true;
  } else {
    begin_sync(a);
  }
  return a;
}

bool MailboxFeed::wants(const ServerFrame& f) const {
  return f.type == "DELIVER" || f.type == "SYNC_NEEDED" ||
         (!outstanding_ref_.empty() && f.ref == outstanding_ref_);
}

void MailboxFeed::begin_sync(Actions& a) {
  syncing_ = true;
  resync_wanted_ = false;
  sync_after_ = cursor_;
  sync_runs_++;
  request_page(a);
}

void MailboxFeed::request_page(Actions& a) {
  outstanding_ref_ = options_.ref_prefix + "-" + std::to_string(next_ref_++);
  a.send = sync_frame(sync_after_, options_.sync_limit, outstanding_ref_);
}

void MailboxFeed::show(const std::vector<Entry>& entries, Actions& a) {
  for (const auto& e : entries) {
    if (e.seq <= cursor_) continue;  // shown already (a push and a SYNC page may overlap)
    cursor_ = e.seq;
    // Deleted by this user on some device (docs/protocol.md "Delete for me"): a stub holding its place.
    if (e.deleted_for_me) continue;
    // The same message at another seq (split brain: once per epoch): handled, not shown again. An entry
    // without an id (0: an older server) is always shown.
    if (e.message_id != 0 && !remember(e.message_id)) {
      duplicates_++;
      continue;
    }
    a.show.push_back(e);
  }
}

MailboxFeed::Actions MailboxFeed::on_frame(const ServerFrame& f) {
  Actions a;
  if (!outstanding_ref_.empty() && f.ref == outstanding_ref_) {
    outstanding_ref_.clear();
    if (f.type == "SYNC_PAGE") {
      on_page(f, a);
      return a;
    }
    if (f.type == "ERROR" && f.code == "EXPIRED_CURSOR" && sync_after_ != 0) {
      // The cursor lies below the trim: read from the oldest retained entry. What was shown before stays
      // shown once: the cursor still filters.
      sync_after_ = 0;
      request_page(a);
      return a;
    }
    // Refused (or not a page): the run stops; buffered pushes wait for the next one (resync()).
    syncing_ = false;
    a.error = Error(Errc::kTransport, "SYNC: " + f.code + ": " + f.message);
    return a;
  }
  if (f.type == "SYNC_NEEDED") {
    gaps_++;
    Actions r = resync();
    return r;
  }
  if (f.type != "DELIVER") return a;
  if (syncing_) {
    pending_.push_back(f);
    return a;
  }
  if (!apply(f, a)) {
    gaps_++;
    pending_.push_back(f);  // kept: once the SYNC is done it is either covered or continues
    begin_sync(a);
  }
  return a;
}

void MailboxFeed::on_page(const ServerFrame& page, Actions& a) {
  show(page.entries, a);
  if (!page.entries.empty()) sync_after_ = page.entries.back().seq;
  if (page.more && !page.entries.empty()) {
    request_page(a);
    return;
  }
  // The run is complete: the page held every entry up to the frontier it was bounded by.
  cursor_ = std::max(cursor_, page.frontier);
  if (resync_wanted_) {
    begin_sync(a);
    return;
  }
  syncing_ = false;
  drain_pending(a);
}

bool MailboxFeed::apply(const ServerFrame& deliver, Actions& a) {
  const bool continues = deliver.from && *deliver.from <= cursor_;
  if (!continues && options_.sync_allowed) return false;
  show(deliver.entries, a);
  // The frame held every entry up to its frontier: nothing below it is missing any more.
  if (continues) cursor_ = std::max(cursor_, deliver.frontier);
  return true;
}

void MailboxFeed::drain_pending(Actions& a) {
  while (!pending_.empty() && !syncing_) {
    ServerFrame f = std::move(pending_.front());
    pending_.pop_front();
    if (!apply(f, a)) {
      gaps_++;
      pending_.push_front(std::move(f));
      begin_sync(a);
    }
  }
}

void MailboxFollower::start() {
  (void)act(feed_.start());
}

void MailboxFollower::resync() {
  (void)act(feed_.resync());
}

Result<std::vector<Entry>> MailboxFollower::act(MailboxFeed::Actions a) {
  if (a.send) client_.send_text(std::move(*a.send));
  if (a.error) return *a.error;
  return std::move(a.show);
}

Result<std::vector<Entry>> MailboxFollower::next(std::chrono::milliseconds wait) {
  const std::string ref = feed_.outstanding_ref();
  auto frame = client_.wait_for(
      [&ref](const ServerFrame& f) {
        return f.type == "DELIVER" || f.type == "SYNC_NEEDED" || (!ref.empty() && f.ref == ref) ||
               (f.type == "ERROR" && f.ref.empty());
      },
      wait);
  if (!frame.ok()) return frame.error();
  if (frame->type == "ERROR" && frame->ref.empty()) {
    return Error(Errc::kTransport, frame->code + ": " + frame->message);
  }
  return act(feed_.on_frame(*frame));
}

}  // namespace qim::client
