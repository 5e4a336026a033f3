// The connection's work on the gateway's pools (fair_pool.h) and its ordered Outbox writes (connection.h,
// "Order"): SENDs to a group wait for their membership check, group changes for theirs, and everything
// behind them waits in writes_, so the Outbox gets the connection's writes in the order their frames came.
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "core/conversation.h"
#include "gateway/connection.h"
#include "gateway/gateway_context.h"
#include "gateway/protocol/server_frame.h"
#include "gateway/send_request.h"
#include "inbox/inbox.h"
#include "inbox/privacy.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace net = boost::asio;

namespace {

// SENDs and group changes waiting behind an earlier one's check, per connection: beyond it a write is
// answered RATE_LIMITED (docs/protocol.md "Limits and closes"). A check takes milliseconds; at the frame
// rate (200 a second by default) a connection fills this only when checks stall.
constexpr size_t kMaxWaitingWrites = 1024;

constexpr auto kFirstPoll = std::chrono::milliseconds(2);
constexpr auto kLongestPoll = std::chrono::milliseconds(50);

std::string not_started(int64_t deadline_ms) {
  return "the gateway did not start this within " + std::to_string(deadline_ms) +
         " ms (busy); nothing was done, retry later";
}

}  // namespace

// One membership check of a group for the SENDs to it that wait on it.
struct Connection::SendCheck {
  GroupId group;                     // a group SEND's check; empty for direct SENDs' block check
  std::atomic<bool> started{false};  // set by the pool thread: later SENDs need a check of their own
  bool done = false;                 // the fields below are set (on the strand)
  GroupCheck result;                 // `member` set: the read succeeded
  std::shared_ptr<const std::set<UserId>> blockers;  // a block check: who blocks the sender (set once done)
};

// One group change: checked (planned) on the group pool, appended in frame order, then its outcome polled.
struct Connection::GroupChangeWork {
  std::string ref;
  GroupFrame frame;
  bool planned = false;
  GroupPlan plan;
  Offset offset;
  std::chrono::steady_clock::time_point apply_deadline;
  std::chrono::milliseconds pause = kFirstPoll;
};

std::chrono::steady_clock::time_point Connection::work_deadline() const {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(ctx_.options.pending_deadline_ms);
}

bool Connection::take_pending(const std::string& ref, std::string_view what) {
  if (pending_ >= ctx_.options.max_pending_per_connection) {
    send_error(ref, WireCode::kRateLimited,
               "over " + std::to_string(ctx_.options.max_pending_per_connection) +
                   " requests of this connection in progress (QIM_GATEWAY_MAX_PENDING); " +
                   std::string(what) + " dropped, retry once some are answered");
    return false;
  }
  ++pending_;
  return true;
}

bool Connection::writes_full(const std::string& ref) {
  if (writes_.size() < kMaxWaitingWrites) return false;
  send_error(ref, WireCode::kRateLimited,
             "over " + std::to_string(kMaxWaitingWrites) +
                 " SENDs and group changes of this connection wait for a group check; frame dropped");
  return true;
}

void Connection::run_pooled(FairPool& pool, const std::string& ref, std::function<std::string()> read) {
  const bool charged = !ref.empty();  // the client's request, not the gateway's own work (connection.h)
  if (charged && !take_pending(ref, "frame")) return;
  const int64_t deadline_ms = ctx_.options.pending_deadline_ms;
  std::weak_ptr<Connection> weak = weak_from_this();
  auto answer = [weak, charged](std::shared_ptr<const std::string> frame) {
    if (auto self = weak.lock()) {
      net::post(self->ws_.get_executor(), [self, charged, frame = std::move(frame)] {
        if (charged) --self->pending_;
        if (!frame->empty()) self->enqueue(frame);  // work that answers only a refusal
      });
    }
  };
  FairPool::Task task;
  task.deadline = work_deadline();
  task.run = [weak, answer, read = std::move(read)] {
    if (weak.expired()) return;  // the connection is gone: nobody reads the answer
    answer(std::make_shared<const std::string>(read()));
  };
  task.expired = [answer, ref, deadline_ms] {
    answer(std::make_shared<const std::string>(
        encode_error(ref, WireCode::kUnavailable, not_started(deadline_ms))));
  };
  if (!pool.submit(id_, std::move(task))) {
    if (charged) --pending_;
    send_error(ref, WireCode::kUnavailable, "the gateway is stopping");
  }
}

void Connection::queue_group_send(const std::string& ref, SendFrame f, ConversationId conversation,
                                  const GroupId& group, std::shared_ptr<AttachmentCheck> attach) {
  if (writes_full(ref)) return;
  std::shared_ptr<SendCheck> check;
  if (auto it = open_checks_.find(group); it != open_checks_.end() && !it->second->started.load())
    check = it->second;  // it reads the membership after this SEND came: one read serves both
  if (!check) {
    if (!take_pending(ref, "SEND")) return;
    check = std::make_shared<SendCheck>();
    check->group = group;
    open_checks_[group] = check;
    std::weak_ptr<Connection> weak = weak_from_this();
    FairPool::Task task;
    task.deadline = work_deadline();
    task.run = [weak, check, groups = ctx_.deps.groups, user = principal_->user] {
      check->started = true;
      if (weak.expired()) return;
      GroupCheck result = check_group_member(*groups, check->group, user);
      if (auto self = weak.lock()) {
        net::post(self->ws_.get_executor(), [self, check, result = std::move(result)]() mutable {
          check->result = std::move(result);
          self->check_done(check);
        });
      }
    };
    task.expired = [weak, check, deadline_ms = ctx_.options.pending_deadline_ms] {
      check->started = true;
      if (auto self = weak.lock()) {
        net::post(self->ws_.get_executor(), [self, check, deadline_ms] {
          check->result.member.reset();
          check->result.code = WireCode::kUnavailable;
          check->result.message = "the group membership check: " + not_started(deadline_ms);
          self->check_done(check);
        });
      }
    };
    if (!ctx_.blocking.submit(id_, std::move(task))) {
      check->started = true;
      check->result.code = WireCode::kUnavailable;
      check->result.message = "the gateway is stopping";
      check->done = true;
      --pending_;
    }
  }
  writes_.push_back(
      OutboxWrite{ref, std::move(f), std::move(conversation), std::move(check), nullptr, std::move(attach)});
  drain_writes();
}

InboxBackend* Connection::privacy_backend() const {
  return ctx_.deps.inbox != nullptr ? &ctx_.deps.inbox->backend() : nullptr;
}

void Connection::queue_direct_send(const std::string& ref, SendFrame f, ConversationId conversation,
                                   std::shared_ptr<AttachmentCheck> attach) {
  if (writes_full(ref)) return;
  // Who blocks the sender: kept by the gateway while it is fresh (blocked_by_cache.h, docs/adr/0166), so
  // the SEND waits for nothing but the writes ahead of it.
  BlockedByCache::Lookup cached =
      ctx_.registry.blocked_by().lookup(principal_->user, BlockedByCache::now_ms());
  if (cached.blockers) {
    auto check = std::make_shared<SendCheck>();
    check->started = true;
    check->done = true;
    check->result.member = GroupMemberRecord{};  // known: each SEND is decided against its own peer
    check->blockers = std::move(cached.blockers);
    writes_.push_back(OutboxWrite{ref, std::move(f), std::move(conversation), std::move(check), nullptr,
                                  std::move(attach)});
    drain_writes();
    return;
  }
  // Otherwise one read serves every direct SEND queued before it starts, whatever its peer (as a group's
  // membership check does), and fills the cache unless a block change came meanwhile.
  std::shared_ptr<SendCheck> check;
  if (open_direct_check_ && !open_direct_check_->started.load()) check = open_direct_check_;
  if (!check) {
    if (!take_pending(ref, "SEND")) return;
    check = std::make_shared<SendCheck>();
    open_direct_check_ = check;
    std::weak_ptr<Connection> weak = weak_from_this();
    FairPool::Task task;
    task.deadline = work_deadline();
    task.run = [weak, check, backend = privacy_backend(), cache = &ctx_.registry.blocked_by(),
                generation = cached.generation, user = principal_->user] {
      check->started = true;
      if (weak.expired()) return;
      GroupCheck result;
      std::shared_ptr<const std::set<UserId>> blockers;
      auto read = read_blocked_by(*backend, *cache, user, generation);
      if (!read.ok()) {
        result.code = wire_code_of(read.code());
        result.message = "the block check failed: " + read.error().message();
      } else {
        blockers = *std::move(read);
        result.member = GroupMemberRecord{};  // read: each SEND is decided against its own peer
      }
      if (auto self = weak.lock()) {
        net::post(self->ws_.get_executor(),
                  [self, check, result = std::move(result), blockers = std::move(blockers)]() mutable {
                    check->result = std::move(result);
                    check->blockers = std::move(blockers);
                    self->check_done(check);
                  });
      }
    };
    task.expired = [weak, check, deadline_ms = ctx_.options.pending_deadline_ms] {
      check->started = true;
      if (auto self = weak.lock()) {
        net::post(self->ws_.get_executor(), [self, check, deadline_ms] {
          check->result.member.reset();
          check->result.code = WireCode::kUnavailable;
          check->result.message = "the block check: " + not_started(deadline_ms);
          self->check_done(check);
        });
      }
    };
    if (!ctx_.blocking.submit(id_, std::move(task))) {
      check->started = true;
      check->result.code = WireCode::kUnavailable;
      check->result.message = "the gateway is stopping";
      check->done = true;
      --pending_;
      if (open_direct_check_ == check) open_direct_check_.reset();
    }
  }
  writes_.push_back(
      OutboxWrite{ref, std::move(f), std::move(conversation), std::move(check), nullptr, std::move(attach)});
  drain_writes();
}

void Connection::check_done(const std::shared_ptr<SendCheck>& check) {
  check->done = true;
  --pending_;
  if (auto it = open_checks_.find(check->group); it != open_checks_.end() && it->second == check)
    open_checks_.erase(it);
  if (open_direct_check_ == check) open_direct_check_.reset();
  drain_writes();
}

void Connection::drain_writes() {
  while (!writes_.empty()) {
    OutboxWrite& w = writes_.front();
    if (w.change ? !w.change->planned : ((w.check && !w.check->done) || !attachment_check_done(w))) return;
    OutboxWrite next = std::move(w);
    writes_.pop_front();
    if (close_) continue;  // closing: nothing more is appended (the client retries what it has no ack for)
    if (next.change) {
      if (!next.change->plan.answer.empty()) {
        group_change_answered(next.change, std::move(next.change->plan.answer));  // refused at the check
      } else {
        append_group_change(next.change);
      }
    } else if (next.check && !next.check->result.member) {
      send_error(next.ref, next.check->result.code, next.check->result.message);
    } else if (auto blocked = next.check && next.check->group.empty()
                                  ? blocked_send(principal_->user, next.conversation, *next.check->blockers)
                                  : std::nullopt) {
      send_error(next.ref, blocked->code, blocked->message);  // the rule both doors share (send_request.h)
    } else if (next.attach) {
      append_checked_send(next);
    } else {
      append_send(next.ref, std::move(*next.send), std::move(next.conversation));
    }
  }
}

void Connection::handle_group(const std::string& ref, const GroupFrame& f) {
  if (ctx_.deps.groups == nullptr) {
    send_error(ref, WireCode::kUnavailable, "groups are not served by this gateway");
    return;
  }
  GroupRequestDeps deps{ctx_.deps.groups,
                        ctx_.deps.outbox,
                        ctx_.deps.clock.get(),
                        ctx_.options.group_max_members,
                        ctx_.options.group_apply_wait_ms,
                        privacy_backend(),
                        ctx_.deps.users};
  if (f.request == GroupRequest::kList || f.request == GroupRequest::kMembers) {
    run_pooled(ctx_.group_ops, ref,
               [deps, ref, f, who = *principal_] { return plan_group_frame(deps, ref, who, f).answer; });
    return;
  }
  // A change: counted from now until its answer (through check, append and fanout's outcome).
  if (writes_full(ref) || !take_pending(ref, "group change")) return;
  auto change = std::make_shared<GroupChangeWork>();
  change->ref = ref;
  change->frame = f;
  writes_.push_back(OutboxWrite{ref, std::nullopt, ConversationId{}, nullptr, change, nullptr});
  group_changes_.push_back(std::move(change));
  start_next_group_change();
}

// A connection's group changes are checked one at a time, each once the previous one was answered (applied
// or refused by fanout): a change pipelined after another is checked against the membership that one made.
void Connection::start_next_group_change() {
  if (group_change_ || group_changes_.empty()) return;
  group_change_ = std::move(group_changes_.front());
  group_changes_.pop_front();
  auto change = group_change_;
  GroupRequestDeps deps{ctx_.deps.groups,
                        ctx_.deps.outbox,
                        ctx_.deps.clock.get(),
                        ctx_.options.group_max_members,
                        ctx_.options.group_apply_wait_ms,
                        privacy_backend(),
                        ctx_.deps.users};
  std::weak_ptr<Connection> weak = weak_from_this();
  FairPool::Task task;
  task.deadline = work_deadline();
  task.run = [weak, change, deps, who = *principal_] {
    if (weak.expired()) return;
    GroupPlan plan = plan_group_frame(deps, change->ref, who, change->frame);
    if (auto self = weak.lock()) {
      net::post(self->ws_.get_executor(), [self, change, plan = std::move(plan)]() mutable {
        change->plan = std::move(plan);
        change->planned = true;
        self->drain_writes();
      });
    }
  };
  task.expired = [weak, change, deadline_ms = ctx_.options.pending_deadline_ms] {
    if (auto self = weak.lock()) {
      net::post(self->ws_.get_executor(), [self, change, deadline_ms] {
        change->plan.answer = encode_error(change->ref, WireCode::kUnavailable, not_started(deadline_ms));
        change->planned = true;
        self->drain_writes();
      });
    }
  };
  if (!ctx_.group_ops.submit(id_, std::move(task))) {
    change->plan.answer = encode_error(change->ref, WireCode::kUnavailable, "the gateway is stopping");
    change->planned = true;
    drain_writes();
  }
}

void Connection::append_group_change(const std::shared_ptr<GroupChangeWork>& change) {
  const OutboxRecord& record = *change->plan.record;
  ctx_.send_started();
  GatewayContext* ctx = &ctx_;
  ctx_.deps.outbox->append(
      change->plan.partition, record.conversation.str(), encode_outbox_record(record),
      [self = shared_from_this(), ctx, change](Result<Offset> offset) {
        net::post(self->ws_.get_executor(), [self, change, offset = std::move(offset)] {
          if (!offset.ok()) {
            self->group_change_answered(change, group_append_failed(change->ref, offset.error()));
            return;
          }
          // Fanout decides at the offset; its outcome is polled so the next frame of any client sees it.
          change->offset = *offset;
          change->apply_deadline = std::chrono::steady_clock::now() +
                                   std::chrono::milliseconds(self->ctx_.options.group_apply_wait_ms);
          self->poll_group_outcome(change);
        });
        ctx->send_answered();
      });
}

// One outcome read on the group pool; undecided, the next after a pause (2 ms doubling to 50 ms) on a
// timer: no thread waits for fanout.
void Connection::poll_group_outcome(const std::shared_ptr<GroupChangeWork>& change) {
  std::weak_ptr<Connection> weak = weak_from_this();
  auto decided = [weak, change](std::optional<std::string> answer) {
    auto self = weak.lock();
    if (!self) return;
    net::post(self->ws_.get_executor(), [self, change, answer = std::move(answer)]() mutable {
      if (answer) {
        self->group_change_answered(change, std::move(*answer));
      } else if (std::chrono::steady_clock::now() >= change->apply_deadline) {
        self->group_change_answered(change, group_not_applied(change->ref));
      } else {
        self->group_timer_.expires_after(change->pause);
        change->pause = std::min(change->pause * 2, std::chrono::milliseconds(kLongestPoll));
        self->group_timer_.async_wait(
            [weak = std::weak_ptr<Connection>(self), change](boost::system::error_code ec) {
              auto again = weak.lock();
              if (!ec && again) again->poll_group_outcome(change);
            });
      }
    });
  };
  FairPool::Task task;
  task.deadline = change->apply_deadline;
  task.run = [weak, change, decided, store = ctx_.deps.groups] {
    if (weak.expired()) return;
    decided(group_outcome_answer(*store, change->ref, change->plan, change->offset));
  };
  task.expired = [decided] { decided(std::nullopt); };  // past the apply deadline: "not applied yet"
  if (!ctx_.group_ops.submit(id_, std::move(task)))
    group_change_answered(change, group_not_applied(change->ref));
}

void Connection::group_change_answered(const std::shared_ptr<GroupChangeWork>& change, std::string frame) {
  enqueue(std::make_shared<const std::string>(std::move(frame)));
  --pending_;
  if (group_change_ == change) group_change_.reset();
  start_next_group_change();
}

}  // namespace qim
