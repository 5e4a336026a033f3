#include "inbox/redis/redis_inbox_backend.h"

#include <atomic>
#include <map>
#include <set>

#include "inbox/entry_ref.h"
#include "inbox/redis/redis_inbox_instance.h"
#include "inbox/redis/redis_inbox_keys.h"
#include "inbox/redis/redis_inbox_values.h"
#include "mailbox/redis/redis_instance.h"
#include "mailbox/redis/redis_keys.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace {

// Entries per put_rows call: a few hundred microseconds of server time at most (as the mailbox's).
constexpr size_t kEntriesPerScript = 128;
// Bounds of a setting (InvalidArgument beyond them): a short name, a short value.
constexpr size_t kMaxSettingKeyBytes = 160;  // a conversation id and a message id (privacy.h)
constexpr size_t kMaxSettingValueBytes = 1024;
constexpr int64_t kMaxSettingVersion = int64_t{1} << 48;

Error unexpected(const RedisEndpoint& endpoint, std::string_view what) {
  return Error(Errc::kTransport,
               "redis " + endpoint.to_string() + ": unexpected reply to " + std::string(what));
}

class RedisInboxBackend final : public InboxBackend {
 public:
  RedisInboxBackend(BackendContext context, const RedisInboxOptions& options,
                    const std::vector<RedisEndpoint>& endpoints)
      : context_(std::move(context)), keys_(options.key_prefix) {
    const RedisTimeouts timeouts{options.connect_timeout, options.command_timeout};
    for (const auto& e : endpoints) {
      instances_.push_back(
          std::make_unique<RedisInboxInstance>(e, timeouts, options.pool_size, counters_, round_trips_));
    }
  }

  Status load_scripts() {
    for (auto& instance : instances_) QIM_RETURN_IF_ERROR(instance->load_scripts());
    return {};
  }

  std::string_view name() const override { return "redis"; }

  Status entries_written(ShardId, Epoch, std::span<const MailboxEntry> entries) override {
    if (entries.empty()) return {};
    const int64_t ttl_ms = context_.entry_ttl_ms();
    const int64_t now = context_.clock->now_ms();
    // The mailbox's write_entries gave these entries now + TTL by the same clock just before: the clock
    // read again gives the same expiry under a test's ManualClock, a few milliseconds later under a real
    // one (docs/adr/0072: the trim hides both a day before either expires).
    const std::string expires = std::to_string(now + ttl_ms);
    std::map<size_t, std::vector<InboxScriptCall>> batches;  // instance -> calls, one pipeline each
    for (const auto& e : entries) {
      const UserId& u = e.user;
      const ConversationId& c = e.message.conversation;
      const InboxEntryRef ref = inbox_ref_of(e);
      auto& batch = batches[user_instance(u)];
      if (batch.empty() || batch.back().args.size() >= 3 + 4 * kEntriesPerScript) {
        batch.push_back(InboxScriptCall{
            InboxScript::kPutRows, {}, {std::to_string(ttl_ms), expires, std::to_string(now)}});
      }
      InboxScriptCall& call = batch.back();
      call.keys.insert(call.keys.end(), {keys_.rows(u), keys_.index(u, c), keys_.counting(u, c),
                                         keys_.values(u, c), keys_.expiries(u, c), keys_.activity(u)});
      call.args.insert(call.args.end(), {seq_hex(e.seq), ref.counts ? "1" : "0", c.str(),
                                         encode_inbox_value(ref, now + ttl_ms)});
    }
    for (const auto& [index, batch] : batches) {
      RedisInboxInstance& inst = *instances_[index];
      QIM_ASSIGN_OR_RETURN(auto replies, inst.eval(batch));
      for (auto& r : replies) QIM_RETURN_IF_ERROR(reply_or_error(std::move(r), inst.endpoint()));
    }
    counters_.inserts += entries.size();
    return {};
  }

  // One HGETALL; a row whose entry has expired is replaced (in one more pipeline) by the highest index
  // row left, or dropped when none is.
  Result<std::vector<ConversationRow>> conversation_rows(const UserId& user) override {
    RedisInboxInstance& inst = of_user(user);
    const int64_t now = context_.clock->now_ms();
    counters_.reads++;
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, {"HGETALL", keys_.rows(user)}));
    if (reply.kind != RedisReply::Kind::kArray || reply.elements.size() % 2 != 0) {
      return unexpected(inst.endpoint(), "HGETALL conversation rows");
    }
    std::vector<ConversationRow> out;
    std::vector<InboxScriptCall> refresh;
    std::vector<ConversationId> expired;
    for (size_t i = 0; i < reply.elements.size(); i += 2) {
      ConversationId c = ConversationId::unchecked(std::move(reply.elements[i].str));
      QIM_ASSIGN_OR_RETURN(StoredInboxValue row, decode_row(user, c, reply.elements[i + 1].str));
      if (row.expires_ms > now) {
        out.push_back(ConversationRow{std::move(c), std::move(row.ref)});
        continue;
      }
      refresh.push_back(refresh_call(user, c, now));
      expired.push_back(std::move(c));
    }
    if (refresh.empty()) return out;
    QIM_ASSIGN_OR_RETURN(auto replies, inst.eval(refresh));
    for (size_t i = 0; i < replies.size(); ++i) {
      QIM_ASSIGN_OR_RETURN(RedisReply r, reply_or_error(std::move(replies[i]), inst.endpoint()));
      if (r.is_nil()) continue;  // nothing of that conversation is left
      if (r.kind != RedisReply::Kind::kString) return unexpected(inst.endpoint(), "refresh_row");
      QIM_ASSIGN_OR_RETURN(StoredInboxValue row, decode_row(user, expired[i], r.str));
      out.push_back(ConversationRow{std::move(expired[i]), std::move(row.ref)});
    }
    return out;
  }

  // One script: ZREVRANGEBYLEX over the user's positions.
  Result<std::vector<ActivityPosition>> activity_desc(const UserId& user, MailboxSeq after, MailboxSeq before,
                                                      uint32_t limit) override {
    std::vector<ActivityPosition> out;
    if (limit == 0 || before.raw() <= after.raw() + 1) return out;
    RedisInboxInstance& inst = of_user(user);
    counters_.reads++;
    // Members are seq hex + conversation: below "(before" is every seq < before; from "[after+1" every
    // seq > after.
    const InboxScriptCall call{
        InboxScript::kReadActivity,
        {keys_.activity(user), keys_.rows(user)},
        {"(" + seq_hex(before), "[" + seq_hex(MailboxSeq::from_raw(after.raw() + 1)), std::to_string(limit)}};
    QIM_ASSIGN_OR_RETURN(RedisReply reply, eval_one(inst, call));
    if (reply.kind != RedisReply::Kind::kArray) return unexpected(inst.endpoint(), "read_activity");
    for (RedisReply& m : reply.elements) {
      if (m.str.size() <= 16)
        return corrupt_in(keys_.activity(user), Error(Errc::kCorruptEntry, "short member"));
      auto seq = parse_seq_hex(std::string_view(m.str).substr(0, 16));
      if (!seq.ok()) return corrupt_in(keys_.activity(user), seq.error());
      out.push_back(ActivityPosition{*seq, ConversationId::unchecked(m.str.substr(16))});
    }
    return out;
  }

  // One HMGET; a row whose entry expired is refreshed as in conversation_rows (its position with it).
  Result<std::vector<std::optional<InboxEntryRef>>> rows_of(
      const UserId& user, std::span<const ConversationId> conversations) override {
    std::vector<std::optional<InboxEntryRef>> out(conversations.size());
    if (conversations.empty()) return out;
    RedisInboxInstance& inst = of_user(user);
    const int64_t now = context_.clock->now_ms();
    counters_.reads++;
    RedisCommand hmget{"HMGET", keys_.rows(user)};
    for (const ConversationId& c : conversations) hmget.push_back(c.str());
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, std::move(hmget)));
    if (reply.kind != RedisReply::Kind::kArray || reply.elements.size() != conversations.size()) {
      return unexpected(inst.endpoint(), "HMGET conversation rows");
    }
    std::vector<InboxScriptCall> refresh;
    std::vector<size_t> expired;
    for (size_t i = 0; i < conversations.size(); ++i) {
      if (reply.elements[i].is_nil()) continue;
      QIM_ASSIGN_OR_RETURN(StoredInboxValue row, decode_row(user, conversations[i], reply.elements[i].str));
      if (row.expires_ms > now) {
        out[i] = std::move(row.ref);
        continue;
      }
      refresh.push_back(refresh_call(user, conversations[i], now));
      expired.push_back(i);
    }
    if (refresh.empty()) return out;
    QIM_ASSIGN_OR_RETURN(auto replies, inst.eval(refresh));
    for (size_t k = 0; k < replies.size(); ++k) {
      QIM_ASSIGN_OR_RETURN(RedisReply r, reply_or_error(std::move(replies[k]), inst.endpoint()));
      if (r.is_nil()) continue;
      if (r.kind != RedisReply::Kind::kString) return unexpected(inst.endpoint(), "refresh_row");
      QIM_ASSIGN_OR_RETURN(StoredInboxValue row, decode_row(user, conversations[expired[k]], r.str));
      out[expired[k]] = std::move(row.ref);
    }
    return out;
  }

  Result<std::vector<MailboxSeq>> read_marks_of(const UserId& user,
                                                std::span<const ConversationId> conversations) override {
    std::vector<MailboxSeq> out(conversations.size());
    if (conversations.empty()) return out;
    RedisInboxInstance& inst = of_user(user);
    counters_.reads++;
    RedisCommand hmget{"HMGET", keys_.read_marks(user)};
    for (const ConversationId& c : conversations) hmget.push_back(c.str());
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, std::move(hmget)));
    if (reply.kind != RedisReply::Kind::kArray || reply.elements.size() != conversations.size()) {
      return unexpected(inst.endpoint(), "HMGET read marks");
    }
    for (size_t i = 0; i < conversations.size(); ++i) {
      if (reply.elements[i].is_nil()) continue;
      auto seq = parse_seq_hex(reply.elements[i].str);
      if (!seq.ok()) return corrupt_in(keys_.read_marks(user), seq.error());
      out[i] = *seq;
    }
    return out;
  }

  Result<std::vector<InboxEntryRef>> index_rows_desc(const UserId& user, const ConversationId& c,
                                                     MailboxSeq after, MailboxSeq upto,
                                                     uint32_t limit) override {
    std::vector<InboxEntryRef> out;
    if (limit == 0 || upto <= after) return out;
    RedisInboxInstance& inst = of_user(user);
    QIM_ASSIGN_OR_RETURN(RedisReply reply, eval_one(inst, index_call(user, c, after, upto, limit)));
    return decode_index(inst, user, c, std::move(reply));
  }

  Result<uint32_t> count_unread(const UserId& user, const ConversationId& c, MailboxSeq after,
                                MailboxSeq upto, uint32_t cap) override {
    if (cap == 0 || upto <= after) return uint32_t{0};
    RedisInboxInstance& inst = of_user(user);
    QIM_ASSIGN_OR_RETURN(RedisReply reply, eval_one(inst, count_call(user, c, after, upto, cap)));
    return decode_count(inst, std::move(reply), cap);
  }

  Status raise_read_mark(const UserId& user, const ConversationId& c, MailboxSeq seq) override {
    const InboxScriptCall call{InboxScript::kRaiseCell, {keys_.read_marks(user)}, {c.str(), seq_hex(seq)}};
    QIM_RETURN_IF_ERROR(eval_one(of_user(user), call));
    return {};
  }

  Result<std::vector<ReadMark>> read_marks(const UserId& user) override {
    RedisInboxInstance& inst = of_user(user);
    counters_.reads++;
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, {"HGETALL", keys_.read_marks(user)}));
    if (reply.kind != RedisReply::Kind::kArray || reply.elements.size() % 2 != 0) {
      return unexpected(inst.endpoint(), "HGETALL read marks");
    }
    std::vector<ReadMark> out;
    for (size_t i = 0; i < reply.elements.size(); i += 2) {
      auto seq = parse_seq_hex(reply.elements[i + 1].str);
      if (!seq.ok()) return corrupt_in(keys_.read_marks(user), seq.error());
      out.push_back(ReadMark{ConversationId::unchecked(std::move(reply.elements[i].str)), *seq});
    }
    return out;
  }

  Result<MailboxSeq> read_mark(const UserId& user, const ConversationId& c) override {
    RedisInboxInstance& inst = of_user(user);
    counters_.reads++;
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, {"HGET", keys_.read_marks(user), c.str()}));
    if (reply.is_nil()) return MailboxSeq();
    if (reply.kind != RedisReply::Kind::kString) return unexpected(inst.endpoint(), "HGET read mark");
    auto seq = parse_seq_hex(reply.str);
    if (!seq.ok()) return corrupt_in(keys_.read_marks(user), seq.error());
    return *seq;
  }

  Status raise_receipt(const ConversationId& c, const UserId& user, MessageId read_through) override {
    const InboxScriptCall call{
        InboxScript::kRaiseCell, {keys_.receipts(c)}, {user.str(), message_id_hex(read_through)}};
    QIM_RETURN_IF_ERROR(eval_one(of_conversation(c), call));
    return {};
  }

  // HSCAN pages until `limit` receipts (a hash of the conversation's readers, bounded by its members).
  Result<std::vector<ReceiptMark>> receipts(const ConversationId& c, uint32_t limit) override {
    std::vector<ReceiptMark> out;
    if (limit == 0) return out;
    RedisInboxInstance& inst = of_conversation(c);
    std::set<std::string> seen;  // HSCAN may return a field twice while the hash is rehashed
    std::string cursor = "0";
    do {
      counters_.reads++;
      QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, {"HSCAN", keys_.receipts(c), cursor, "COUNT",
                                                            std::to_string(std::max<uint32_t>(limit, 100))}));
      QIM_ASSIGN_OR_RETURN(cursor, decode_receipts_page(inst, c, std::move(reply), limit, seen, out));
    } while (cursor != "0" && out.size() < limit);
    return out;
  }

  Status put_setting(const UserId& user, const std::string& key, const std::string& value,
                     int64_t version) override {
    if (key.empty() || key.size() > kMaxSettingKeyBytes || value.size() > kMaxSettingValueBytes) {
      return Error(Errc::kInvalidArgument, "setting '" + key.substr(0, kMaxSettingKeyBytes) +
                                               "': a name of 1.." + std::to_string(kMaxSettingKeyBytes) +
                                               " bytes and a value of at most " +
                                               std::to_string(kMaxSettingValueBytes) + " bytes");
    }
    if (version < 0 || version >= kMaxSettingVersion) {
      return Error(Errc::kInvalidArgument,
                   "setting '" + key + "': version " + std::to_string(version) + " is not in [0, 2^48)");
    }
    const InboxScriptCall call{
        InboxScript::kPutSetting, {keys_.settings(user)}, {key, encode_setting(version, value)}};
    QIM_RETURN_IF_ERROR(eval_one(of_user(user), call));
    return {};
  }

  Result<std::map<std::string, std::string>> settings(const UserId& user) override {
    RedisInboxInstance& inst = of_user(user);
    counters_.reads++;
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run_one(inst, {"HGETALL", keys_.settings(user)}));
    return decode_settings(inst, user, std::move(reply));
  }

  // Per instance, one pipeline of the scripts (counts, index reads) and one of the plain commands
  // (HGETALL settings, HSCAN's first page of receipts), instance after instance: at most two round trips
  // per instance whatever the batch's size (docs/adr/0153). A receipts hash larger than one HSCAN page
  // (not a direct conversation's) is finished by receipts(), page by page.
  Result<BatchAnswers> read_batch(const BatchReads& reads, uint32_t) override {
    BatchAnswers out;
    out.counts.resize(reads.counts.size());
    out.index.resize(reads.index.size());
    out.settings.resize(reads.settings.size());
    out.receipts.resize(reads.receipts.size());
    enum class Kind : uint8_t { kCount, kIndex, kSettings, kReceipts };
    struct Plan {
      std::vector<InboxScriptCall> scripts;
      std::vector<std::pair<Kind, size_t>> script_of;
      std::vector<RedisCommand> commands;
      std::vector<std::pair<Kind, size_t>> command_of;
    };
    std::map<size_t, Plan> plans;  // instance -> its pipelines
    for (size_t i = 0; i < reads.counts.size(); ++i) {
      const CountQuery& q = reads.counts[i];
      if (q.cap == 0 || q.upto <= q.after) continue;  // 0, as count_unread answers without a read
      Plan& plan = plans[user_instance(q.user)];
      plan.scripts.push_back(count_call(q.user, q.conversation, q.after, q.upto, q.cap));
      plan.script_of.emplace_back(Kind::kCount, i);
    }
    for (size_t i = 0; i < reads.index.size(); ++i) {
      const IndexQuery& q = reads.index[i];
      if (q.limit == 0 || q.upto <= q.after) continue;  // none, as index_rows_desc answers
      Plan& plan = plans[user_instance(q.user)];
      plan.scripts.push_back(index_call(q.user, q.conversation, q.after, q.upto, q.limit));
      plan.script_of.emplace_back(Kind::kIndex, i);
    }
    for (size_t i = 0; i < reads.settings.size(); ++i) {
      Plan& plan = plans[user_instance(reads.settings[i])];
      plan.commands.push_back({"HGETALL", keys_.settings(reads.settings[i])});
      plan.command_of.emplace_back(Kind::kSettings, i);
    }
    const uint32_t receipts_count = std::max<uint32_t>(reads.receipts_limit, 100);
    for (size_t i = 0; i < reads.receipts.size(); ++i) {
      if (reads.receipts_limit == 0) continue;
      Plan& plan = plans[conversation_instance(reads.receipts[i])];
      plan.commands.push_back(
          {"HSCAN", keys_.receipts(reads.receipts[i]), "0", "COUNT", std::to_string(receipts_count)});
      plan.command_of.emplace_back(Kind::kReceipts, i);
    }
    std::vector<size_t> unfinished;  // receipts hashes longer than one page
    for (auto& [index, plan] : plans) {
      RedisInboxInstance& inst = *instances_[index];
      if (!plan.scripts.empty()) {
        QIM_ASSIGN_OR_RETURN(auto replies, inst.eval(plan.scripts));
        for (size_t k = 0; k < replies.size(); ++k) {
          QIM_ASSIGN_OR_RETURN(RedisReply r, reply_or_error(std::move(replies[k]), inst.endpoint()));
          const auto [kind, i] = plan.script_of[k];
          if (kind == Kind::kCount) {
            QIM_ASSIGN_OR_RETURN(out.counts[i], decode_count(inst, std::move(r), reads.counts[i].cap));
          } else {
            const IndexQuery& q = reads.index[i];
            QIM_ASSIGN_OR_RETURN(out.index[i], decode_index(inst, q.user, q.conversation, std::move(r)));
          }
        }
      }
      if (plan.commands.empty()) continue;
      counters_.reads += plan.commands.size();
      QIM_ASSIGN_OR_RETURN(auto replies, inst.run(plan.commands));
      for (size_t k = 0; k < replies.size(); ++k) {
        QIM_ASSIGN_OR_RETURN(RedisReply r, reply_or_error(std::move(replies[k]), inst.endpoint()));
        const auto [kind, i] = plan.command_of[k];
        if (kind == Kind::kSettings) {
          QIM_ASSIGN_OR_RETURN(out.settings[i], decode_settings(inst, reads.settings[i], std::move(r)));
          continue;
        }
        std::set<std::string> seen;
        QIM_ASSIGN_OR_RETURN(std::string cursor,
                             decode_receipts_page(inst, reads.receipts[i], std::move(r), reads.receipts_limit,
                                                  seen, out.receipts[i]));
        if (cursor != "0" && out.receipts[i].size() < reads.receipts_limit) unfinished.push_back(i);
      }
    }
    for (size_t i : unfinished) {
      QIM_ASSIGN_OR_RETURN(out.receipts[i], receipts(reads.receipts[i], reads.receipts_limit));
    }
    return out;
  }

  OpCounters& counters() override { return counters_; }
  uint64_t round_trips() const override { return round_trips_.load(); }

 private:
  // As the mailbox store places them: a user on the instance of the user's shard, a conversation on the
  // instance of its Outbox partition hash (as its history and group rows).
  size_t user_instance(const UserId& user) const {
    return context_.shards.shard_of(user).value % instances_.size();
  }
  RedisInboxInstance& of_user(const UserId& user) { return *instances_[user_instance(user)]; }
  size_t conversation_instance(const ConversationId& c) const {
    return outbox_partition_of(c, static_cast<uint32_t>(instances_.size()));
  }
  RedisInboxInstance& of_conversation(const ConversationId& c) {
    return *instances_[conversation_instance(c)];
  }

  // The calls and decodings of the reads that read_batch pipelines, shared with the single calls.
  InboxScriptCall count_call(const UserId& user, const ConversationId& c, MailboxSeq after, MailboxSeq upto,
                             uint32_t cap) const {
    return InboxScriptCall{
        InboxScript::kCountUnread,
        {keys_.index(user, c), keys_.counting(user, c), keys_.values(user, c), keys_.expiries(user, c)},
        {std::to_string(context_.clock->now_ms()), "(" + seq_hex(after), "[" + seq_hex(upto),
         std::to_string(cap)}};
  }
  Result<uint32_t> decode_count(RedisInboxInstance& inst, RedisReply reply, uint32_t cap) const {
    if (reply.kind != RedisReply::Kind::kInteger || reply.integer < 0 || reply.integer > cap) {
      return unexpected(inst.endpoint(), "count_unread");
    }
    return static_cast<uint32_t>(reply.integer);
  }
  InboxScriptCall index_call(const UserId& user, const ConversationId& c, MailboxSeq after, MailboxSeq upto,
                             uint32_t limit) const {
    return InboxScriptCall{
        InboxScript::kReadIndex,
        {keys_.index(user, c), keys_.counting(user, c), keys_.values(user, c), keys_.expiries(user, c)},
        {std::to_string(context_.clock->now_ms()), "[" + seq_hex(upto), "(" + seq_hex(after),
         std::to_string(limit)}};
  }
  Result<std::vector<InboxEntryRef>> decode_index(RedisInboxInstance& inst, const UserId& user,
                                                  const ConversationId& c, RedisReply reply) const {
    if (reply.kind != RedisReply::Kind::kArray || reply.elements.size() % 2 != 0) {
      return unexpected(inst.endpoint(), "read_index");
    }
    std::vector<InboxEntryRef> out;
    for (size_t i = 0; i < reply.elements.size(); i += 2) {
      QIM_ASSIGN_OR_RETURN(MailboxSeq seq, parse_seq_hex(reply.elements[i].str));
      auto value = decode_inbox_value(reply.elements[i + 1].str);
      if (!value.ok()) return corrupt_in(keys_.values(user, c), value.error());
      value->ref.seq = seq;
      out.push_back(std::move(value->ref));
    }
    return out;
  }
  Result<std::map<std::string, std::string>> decode_settings(RedisInboxInstance& inst, const UserId& user,
                                                             RedisReply reply) const {
    if (reply.kind != RedisReply::Kind::kArray || reply.elements.size() % 2 != 0) {
      return unexpected(inst.endpoint(), "HGETALL settings");
    }
    std::map<std::string, std::string> out;
    for (size_t i = 0; i < reply.elements.size(); i += 2) {
      auto value = decode_setting_value(reply.elements[i + 1].str);
      if (!value.ok()) return corrupt_in(keys_.settings(user), value.error());
      out.emplace(std::move(reply.elements[i].str), std::move(value).value());
    }
    return out;
  }
  // One HSCAN page of c's receipts appended to `out` (up to `limit`, skipping fields in `seen`); returns
  // the next cursor ("0": done).
  Result<std::string> decode_receipts_page(RedisInboxInstance& inst, const ConversationId& c,
                                           RedisReply reply, uint32_t limit, std::set<std::string>& seen,
                                           std::vector<ReceiptMark>& out) const {
    if (reply.kind != RedisReply::Kind::kArray || reply.elements.size() != 2 ||
        reply.elements[1].elements.size() % 2 != 0) {
      return unexpected(inst.endpoint(), "HSCAN receipts");
    }
    auto& fields = reply.elements[1].elements;
    for (size_t i = 0; i < fields.size() && out.size() < limit; i += 2) {
      if (!seen.insert(fields[i].str).second) continue;
      auto id = parse_message_id_hex(fields[i + 1].str);
      if (!id.ok()) return corrupt_in(keys_.receipts(c), id.error());
      out.push_back(ReceiptMark{UserId::unchecked(fields[i].str), *id});
    }
    return std::move(reply.elements[0].str);
  }

  Result<RedisReply> run_one(RedisInboxInstance& inst, RedisCommand command) {
    QIM_ASSIGN_OR_RETURN(auto replies, inst.run(std::span(&command, 1)));
    return reply_or_error(std::move(replies.front()), inst.endpoint());
  }
  Result<RedisReply> eval_one(RedisInboxInstance& inst, const InboxScriptCall& call) {
    QIM_ASSIGN_OR_RETURN(auto replies, inst.eval(std::span(&call, 1)));
    return reply_or_error(std::move(replies.front()), inst.endpoint());
  }

  InboxScriptCall refresh_call(const UserId& user, const ConversationId& c, int64_t now) const {
    return InboxScriptCall{InboxScript::kRefreshRow,
                           {keys_.rows(user), keys_.index(user, c), keys_.counting(user, c),
                            keys_.values(user, c), keys_.expiries(user, c), keys_.activity(user)},
                           {c.str(), std::to_string(now)}};
  }

  Result<StoredInboxValue> decode_row(const UserId& user, const ConversationId& c, std::string_view bytes) {
    auto row = decode_inbox_row(bytes);
    if (!row.ok()) return corrupt_in(keys_.rows(user) + " field " + c.str(), row.error());
    return row;
  }
  static Error corrupt_in(const std::string& where, const Error& e) {
    return Error(Errc::kCorruptEntry, where + ": " + e.message());
  }

  BackendContext context_;
  RedisInboxKeys keys_;
  OpCounters counters_;
  std::atomic<uint64_t> round_trips_{0};
  std::vector<std::unique_ptr<RedisInboxInstance>> instances_;
};

}  // namespace

Result<std::unique_ptr<InboxBackend>> open_redis_inbox_backend(const BackendContext& context,
                                                               const RedisInboxOptions& options) {
  if (options.endpoints.empty()) {
    return Error(Errc::kConfig, "the redis inbox needs at least one endpoint (QIM_MAILBOX_REDIS)");
  }
  std::vector<RedisEndpoint> endpoints;
  for (const auto& text : options.endpoints) {
    QIM_ASSIGN_OR_RETURN(RedisEndpoint e, RedisEndpoint::parse(text));
    endpoints.push_back(std::move(e));
  }
  BackendContext with_clock = context;
  if (!with_clock.clock) with_clock.clock = std::make_shared<SystemClock>();
  auto backend = std::make_unique<RedisInboxBackend>(std::move(with_clock), options, endpoints);
  QIM_RETURN_IF_ERROR(backend->load_scripts());
  return std::unique_ptr<InboxBackend>(std::move(backend));
}

Result<std::unique_ptr<InboxBackend>> open_redis_inbox(const BackendContext& context,
                                                       const StoreOptions& store) {
  RedisInboxOptions options;
  options.endpoints = store.redis_endpoints;
  options.key_prefix = store.redis_key_prefix;
  return open_redis_inbox_backend(context, options);
}

}  // namespace qim
