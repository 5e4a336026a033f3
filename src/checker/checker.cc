#include "checker/checker.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/conversation.h"

namespace qim::checker {

namespace {

// What happened to one SEND key (sender, client_msg_id) over the run.
struct SendState {
  std::string conversation;
  std::optional<uint64_t> acked_id;  // the last ok's message id
  std::set<uint64_t> acked_ids;      // every message id an ok named for this key
  bool failed = false;               // a definite refusal was seen
  bool unknown = false;              // an unknown event was seen
};

using SendKey = std::pair<std::string, std::string>;  // (sender, client_msg_id)

class Checker {
 public:
  static constexpr uint64_t kNone = ~uint64_t{0};

  Checker(const std::vector<HistoryEvent>& events, const CheckOptions& options)
      : events_(events), options_(options) {}

  CheckReport run() {
    index();
    check_frames();
    check_shown();
    check_finals();
    check_sends();
    return std::move(report_);
  }

 private:
  // Members of a conversation, or nullopt when the history cannot tell (a group without `members`).
  std::optional<std::set<std::string>> members_of(const std::string& conversation) const {
    if (auto g = groups_.find(conversation); g != groups_.end()) return g->second;
    auto c = Conversation::parse(conversation);
    if (!c.ok() || c->direct_pair() == nullptr) return std::nullopt;
    return std::set<std::string>{c->direct_pair()->low.str(), c->direct_pair()->high.str()};
  }

  void index() {
    for (const auto& e : events_) {
      switch (e.kind) {
        case EventKind::kInvoke: {
          auto& s = sends_[{e.user, e.client_msg_id}];
          s.conversation = e.conversation;
          ++report_.stats.attempts;
          break;
        }
        case EventKind::kOk:
          sends_[{e.user, e.client_msg_id}].acked_id = e.message_id;
          sends_[{e.user, e.client_msg_id}].acked_ids.insert(e.message_id);
          break;
        case EventKind::kFail:
          sends_[{e.user, e.client_msg_id}].failed = true;
          break;
        case EventKind::kUnknown:
          sends_[{e.user, e.client_msg_id}].unknown = true;
          break;
        case EventKind::kMembers:
          groups_[e.conversation] = {e.members.begin(), e.members.end()};
          break;
        case EventKind::kFinal:
          ++report_.stats.mailboxes;
          break;
        case EventKind::kFrame:
          ++report_.stats.frames;
          break;
        case EventKind::kShown:
          report_.stats.shown_entries += e.entries.size();
          break;
      }
    }
    report_.stats.sends = sends_.size();
    for (const auto& [key, s] : sends_) {
      if (s.acked_id) {
        ++report_.stats.acknowledged;
      } else if (s.failed && !s.unknown) {
        ++report_.stats.refused;
      } else {
        ++report_.stats.unknown;
      }
    }
  }

  // An entry in `user`'s mailbox: judged for leaks, and indexed by its key for the one-id rule.
  void saw(const std::string& user, const HistoryEntry& x, std::string_view where) {
    auto members = members_of(x.conversation);
    if (!members) {
      ++report_.stats.unjudged_entries;
    } else if (!members->count(user)) {
      violate("leak",
              "message " + std::to_string(x.message_id) + " of " + x.conversation + " reached " + user +
                  ", who is not a member (" + std::string(where) + ")",
              x.message_id, x.client_msg_id);
    }
    auto& ids = ids_by_key_[{x.sender, x.client_msg_id}];
    ids.insert(x.message_id);
    entry_by_id_.try_emplace(x.message_id, x);
  }

  void check_frames() {
    for (const auto& e : events_) {
      if (e.kind != EventKind::kFrame) continue;
      uint64_t previous = 0;
      for (const auto& x : e.entries) {
        saw(e.user, x, e.frame_type);
        if (x.seq > e.frontier)
          violate("frontier",
                  e.frame_type + " to " + e.client + " holds seq " + std::to_string(x.seq) +
                      " above its frontier " + std::to_string(e.frontier),
                  x.message_id, x.client_msg_id);
        if (e.from && x.seq <= *e.from)
          violate("frontier",
                  "DELIVER to " + e.client + " holds seq " + std::to_string(x.seq) +
                      " at or below its from " + std::to_string(*e.from),
                  x.message_id, x.client_msg_id);
        if (e.frame_type == "SYNC_PAGE" && x.seq <= previous)
          violate("frontier", "SYNC_PAGE to " + e.client + " does not ascend at seq " + std::to_string(x.seq),
                  x.message_id, x.client_msg_id);
        previous = x.seq;
      }
    }
  }

  // Messages of one conversation in the order given must ascend by message id.
  void check_order(const std::vector<HistoryEntry>& shown, const std::string& who) {
    std::unordered_map<std::string, const HistoryEntry*> last;
    for (const auto& x : shown) {
      auto [it, fresh] = last.try_emplace(x.conversation, &x);
      if (!fresh) {
        if (x.message_id < it->second->message_id)
          violate("order",
                  who + ": message " + std::to_string(x.message_id) + " (" + x.client_msg_id + ") of " +
                      x.conversation + " comes after " + std::to_string(it->second->message_id) + " (" +
                      it->second->client_msg_id + ")",
                  x.message_id, x.client_msg_id, it->second->message_id);
        it->second = &x;
      }
    }
  }

  void check_shown() {
    std::map<std::string, std::vector<HistoryEntry>> by_client;
    std::map<std::string, std::string> user_of;
    for (const auto& e : events_) {
      if (e.kind != EventKind::kShown) continue;
      auto& list = by_client[e.client];
      list.insert(list.end(), e.entries.begin(), e.entries.end());
      user_of[e.client] = e.user;
    }
    for (const auto& [client, shown] : by_client) {
      std::unordered_set<uint64_t> ids;
      uint64_t previous_seq = 0;
      for (const auto& x : shown) {
        saw(user_of[client], x, "shown");
        if (!ids.insert(x.message_id).second)
          violate("shown-twice", client + " was shown message " + std::to_string(x.message_id) + " twice",
                  x.message_id, x.client_msg_id);
        if (x.seq <= previous_seq)
          violate(
              "order",
              client + " was shown seq " + std::to_string(x.seq) + " after " + std::to_string(previous_seq),
              x.message_id, x.client_msg_id);
        previous_seq = x.seq;
      }
      check_order(shown, client);
    }
  }

  void check_finals() {
    for (const auto& e : events_) {
      if (e.kind != EventKind::kFinal) continue;
      report_.stats.final_entries += e.entries.size();
      // What a de-duplicating client shows of this mailbox: the first copy of each message.
      std::unordered_map<uint64_t, size_t> first_at;
      std::vector<HistoryEntry> shown;
      auto& held = final_ids_[e.user];
      for (size_t i = 0; i < e.entries.size(); ++i) {
        const auto& x = e.entries[i];
        saw(e.user, x, "final mailbox");
        auto [it, fresh] = first_at.try_emplace(x.message_id, shown.size());
        if (fresh) {
          shown.push_back(x);
          held.insert(x.message_id);
          continue;
        }
        ++report_.stats.duplicates_hidden;
        if (shown.size() - it->second >= options_.dedup_window)
          violate("shown-twice",
                  e.user + "'s mailbox holds a second copy of message " + std::to_string(x.message_id) + " " +
                      std::to_string(shown.size() - it->second) + " messages behind its first: beyond the " +
                      std::to_string(options_.dedup_window) + " a client de-duplicates",
                  x.message_id, x.client_msg_id);
      }
      check_order(shown, e.user + "'s final mailbox");
    }
  }

  void check_sends() {
    for (const auto& [key, s] : sends_) {
      const auto& [sender, cmid] = key;
      auto found = ids_by_key_.find(key);
      const size_t stored = found == ids_by_key_.end() ? 0 : found->second.size();
      if (stored > 1)
        violate("one-id",
                sender + "'s " + cmid + " is stored under " + std::to_string(stored) + " message ids", kNone,
                cmid);
      if (!s.acked_id && s.unknown && stored == 1) ++report_.stats.unknown_stored;
      if (!s.acked_id && s.failed && !s.unknown && stored > 0)
        violate("refused-stored", sender + "'s " + cmid + " was refused but is stored", kNone, cmid);
      if (!s.acked_id) continue;
      const uint64_t id = *s.acked_id;
      if (s.acked_ids.size() > 1)
        violate("one-id",
                sender + "'s " + cmid + " was acknowledged under " + std::to_string(s.acked_ids.size()) +
                    " message ids",
                kNone, cmid);
      if (auto x = entry_by_id_.find(id);
          x != entry_by_id_.end() && (x->second.client_msg_id != cmid || x->second.sender != sender))
        violate("one-id",
                "the ack of " + sender + "'s " + cmid + " names message " + std::to_string(id) +
                    ", which is " + x->second.sender + "'s " + x->second.client_msg_id,
                id, cmid);
      // After an attempt of unknown outcome the acknowledged retry may be a second Outbox record, which
      // fanout drops as a repeat of the first (docs/protocol.md, "A SEND stored twice still shows once"):
      // then the message is in the mailboxes under the one id its key is stored with, which the client
      // matches by the key. Only then; otherwise the acknowledged id itself must be there.
      std::optional<uint64_t> first_record;
      if (s.unknown && stored == 1 && *found->second.begin() != id) {
        first_record = *found->second.begin();
        ++report_.stats.acked_as_first_record;
      }
      auto members = members_of(s.conversation);
      if (!members) continue;
      for (const auto& m : *members) {
        auto box = final_ids_.find(m);
        if (box == final_ids_.end()) continue;  // no final read of that mailbox
        if (!box->second.count(id) && !(first_record && box->second.count(*first_record)))
          violate("lost",
                  "acknowledged message " + std::to_string(id) + " (" + sender + "'s " + cmid + " to " +
                      s.conversation + ") is not in " + m + "'s mailbox",
                  id, cmid);
      }
    }
  }

  // Records a violation with the events that mention the message ids or the key (kNone: no id; 0 is a
  // real message id, partition 0 offset 0).
  void violate(std::string rule, std::string message, uint64_t id, const std::string& cmid,
               uint64_t other_id = kNone) {
    Violation v{std::move(rule), std::move(message), {}};
    auto concerns = [&](const HistoryEvent& e) {
      if (!cmid.empty() && e.client_msg_id == cmid) return true;
      if (id != kNone && e.kind == EventKind::kOk && e.message_id == id) return true;
      for (const auto& x : e.entries)
        if ((id != kNone && x.message_id == id) || (other_id != kNone && x.message_id == other_id) ||
            (!cmid.empty() && x.client_msg_id == cmid))
          return true;
      return false;
    };
    for (const auto& e : events_) {
      if (v.excerpt.size() >= options_.excerpt_lines) break;
      if (concerns(e)) v.excerpt.push_back(encode_event(e));
    }
    report_.violations.push_back(std::move(v));
  }

  const std::vector<HistoryEvent>& events_;
  const CheckOptions& options_;
  CheckReport report_;
  std::map<SendKey, SendState> sends_;
  std::map<std::string, std::set<std::string>> groups_;
  std::map<SendKey, std::set<uint64_t>> ids_by_key_;
  std::unordered_map<uint64_t, HistoryEntry> entry_by_id_;
  std::map<std::string, std::unordered_set<uint64_t>> final_ids_;  // user -> message ids in the final read
};

}  // namespace

std::string CheckReport::to_string() const {
  std::ostringstream out;
  out << "history: " << stats.sends << " sends in " << stats.attempts << " attempts (" << stats.acknowledged
      << " acknowledged, " << stats.refused << " refused, " << stats.unknown << " unknown of which "
      << stats.unknown_stored << " stored, " << stats.acked_as_first_record
      << " acknowledged under a repeat's id and stored under the first), " << stats.mailboxes
      << " mailboxes read at the end (" << stats.final_entries << " entries, " << stats.duplicates_hidden
      << " second copies a client hides), " << stats.shown_entries << " entries shown, " << stats.frames
      << " frames; " << violations.size() << " violations\n";
  for (const auto& v : violations) {
    out << "VIOLATION " << v.rule << ": " << v.message << "\n";
    for (const auto& line : v.excerpt) out << "    " << line << "\n";
  }
  return out.str();
}

CheckReport check_history(const std::vector<HistoryEvent>& events, const CheckOptions& options) {
  return Checker(events, options).run();
}

}  // namespace qim::checker
