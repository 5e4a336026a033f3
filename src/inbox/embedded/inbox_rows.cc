#include "inbox/embedded/inbox_rows.h"

#include "core/big_endian.h"

namespace qim::inbox_rows {

namespace {

Error corrupt(std::string_view what) {
  return Error(Errc::kCorruptEntry, "embedded inbox: malformed " + std::string(what));
}

// Reads a name (length byte, bytes) at `pos`, moving `pos` past it.
Result<std::string_view> take_name(std::string_view in, size_t& pos, std::string_view what) {
  if (pos >= in.size()) return corrupt(what);
  const size_t n = static_cast<uint8_t>(in[pos]);
  if (pos + 1 + n > in.size()) return corrupt(what);
  std::string_view out = in.substr(pos + 1, n);
  pos += 1 + n;
  return out;
}

constexpr size_t kRefFixed = 8 + 8 + 1 + 8 + 8;  // seq, expires, counts, message, time

}  // namespace

void put_name(std::string& out, std::string_view name) {
  out.push_back(static_cast<char>(static_cast<uint8_t>(name.size())));
  out.append(name);
}

std::string pair_prefix(std::string_view first, std::string_view second) {
  std::string out;
  out.reserve(2 + first.size() + second.size() + 8);
  put_name(out, first);
  put_name(out, second);
  return out;
}

std::string index_key(const UserId& user, const ConversationId& c, MailboxSeq seq) {
  std::string out = pair_prefix(user.str(), c.str());
  put_be64(out, seq.raw());
  return out;
}

Result<MailboxSeq> index_key_seq(std::string_view key, size_t prefix_size) {
  if (key.size() != prefix_size + 8) return corrupt("index key");
  return MailboxSeq::from_raw(get_be64(key.substr(prefix_size)));
}

Result<std::string> second_name(std::string_view key) {
  size_t pos = 0;
  QIM_RETURN_IF_ERROR(take_name(key, pos, "key"));
  QIM_ASSIGN_OR_RETURN(std::string_view second, take_name(key, pos, "key"));
  return std::string(second);
}

Result<std::string> after_first_name(std::string_view key) {
  size_t pos = 0;
  QIM_RETURN_IF_ERROR(take_name(key, pos, "key"));
  return std::string(key.substr(pos));
}

std::string activity_key(const UserId& user, MailboxSeq seq, const ConversationId& c) {
  std::string out;
  put_name(out, user.str());
  put_be64(out, seq.raw());
  out.append(c.str());
  return out;
}

Result<ActivityPosition> activity_position(std::string_view key, size_t prefix_size) {
  if (key.size() <= prefix_size + 8) return corrupt("activity key");
  const uint64_t seq = get_be64(key.substr(prefix_size, 8));
  return ActivityPosition{MailboxSeq::from_raw(seq),
                          ConversationId::unchecked(std::string(key.substr(prefix_size + 8)))};
}

std::string ref_value(const InboxEntryRef& ref, int64_t expires_ms) {
  std::string out;
  out.reserve(kRefFixed + 1 + ref.sender.str().size() + ref.preview.size());
  put_be64(out, ref.seq.raw());
  put_be64(out, static_cast<uint64_t>(expires_ms));
  out.push_back(ref.counts ? 1 : 0);
  put_be64(out, ref.message.value);
  put_be64(out, static_cast<uint64_t>(ref.server_time_ms));
  put_name(out, ref.sender.str());
  out.append(ref.preview);
  return out;
}

Result<InboxEntryRef> decode_ref(std::string_view value) {
  if (value.size() < kRefFixed) return corrupt("entry ref");
  InboxEntryRef ref;
  ref.seq = MailboxSeq::from_raw(get_be64(value));
  ref.counts = value[16] != 0;
  ref.message = MessageId{get_be64(value.substr(17))};
  ref.server_time_ms = static_cast<int64_t>(get_be64(value.substr(25)));
  size_t pos = kRefFixed;
  QIM_ASSIGN_OR_RETURN(std::string_view sender, take_name(value, pos, "entry ref sender"));
  ref.sender = UserId::unchecked(std::string(sender));
  ref.preview = std::string(value.substr(pos));
  return ref;
}

Result<int64_t> ref_expiry(std::string_view value) {
  if (value.size() < kRefFixed) return corrupt("entry ref");
  return static_cast<int64_t>(get_be64(value.substr(8)));
}

Result<bool> ref_counts(std::string_view value) {
  if (value.size() < kRefFixed) return corrupt("entry ref");
  return value[16] != 0;
}

std::string max16_value(uint64_t first, std::string_view rest) {
  std::string out;
  out.reserve(16 + rest.size());
  put_be64(out, first);
  put_be64(out, 0);
  out.append(rest);
  return out;
}

Result<uint64_t> max16_first(std::string_view value, std::string_view what) {
  if (value.size() < 16) return corrupt(what);
  return get_be64(value);
}

}  // namespace qim::inbox_rows
