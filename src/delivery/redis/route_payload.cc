#include "delivery/redis/route_payload.h"

#include <algorithm>

#include "core/bytes.h"

namespace qim {

namespace {

constexpr uint8_t kMagic = 'R';
constexpr uint8_t kVersion = 1;
// Version 1's fields, each entry then followed by u8 1 and its reply_to, or u8 0 (docs/adr/0125): written
// only when an entry is a reply, so a payload of plain messages stays version 1 byte for byte.
constexpr uint8_t kReplyVersion = 2;
// The smallest encoded entry (empty strings): bounds a count before anything is allocated.
constexpr size_t kMinEntryBytes = 4 + 8 + 8 + 4 + 4 + 4 + 4 + 8 + 4;

}  // namespace

std::string encode_route_payload(const RoutePayload& p) {
  ByteWriter w;
  const bool replies = std::any_of(p.entries.begin(), p.entries.end(),
                                   [](const MailboxEntry& e) { return e.message.reply_to.has_value(); });
  w.u8(kMagic);
  w.u8(replies ? kReplyVersion : kVersion);
  w.u8(p.unknown ? 1 : 0);
  w.u32(p.shard.value);
  w.u64(p.from.raw());
  w.u64(p.to.raw());
  w.u32(static_cast<uint32_t>(p.entries.size()));
  for (const auto& e : p.entries) {
    w.str(e.user.str());
    w.u64(e.seq.raw());
    w.u64(e.message.id.value);
    w.str(e.message.conversation.str());
    w.str(e.message.sender.str());
    w.str(e.message.sender_device.str());
    w.str(e.message.client_msg_id);
    w.i64(e.message.server_time_ms);
    w.str(e.message.body);
    if (replies) {
      w.u8(e.message.reply_to ? 1 : 0);
      if (e.message.reply_to) w.u64(e.message.reply_to->value);
    }
  }
  return w.take();
}

Result<RoutePayload> decode_route_payload(std::string_view bytes) {
  ByteReader r(bytes, "route payload");
  QIM_ASSIGN_OR_RETURN(uint8_t magic, r.u8("magic"));
  if (magic != kMagic) return r.corrupt("magic", "not a route payload");
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kVersion && version != kReplyVersion)
    return r.corrupt("version", "version " + std::to_string(version) + " is not 1 or 2");
  QIM_ASSIGN_OR_RETURN(uint8_t kind, r.u8("kind"));
  if (kind > 1) return r.corrupt("kind", "kind " + std::to_string(kind) + " is not 0 or 1");
  RoutePayload p;
  p.unknown = kind == 1;
  QIM_ASSIGN_OR_RETURN(uint32_t shard, r.u32("shard"));
  p.shard = ShardId{shard};
  QIM_ASSIGN_OR_RETURN(uint64_t from, r.u64("from"));
  QIM_ASSIGN_OR_RETURN(uint64_t to, r.u64("to"));
  p.from = MailboxSeq::from_raw(from);
  p.to = MailboxSeq::from_raw(to);
  if (to < from) return r.corrupt("to", "below from");
  QIM_ASSIGN_OR_RETURN(uint32_t count, r.u32("entry count"));
  if (p.unknown && count != 0) return r.corrupt("entry count", "a range unknown holds no entries");
  if (count > bytes.size() / kMinEntryBytes) return r.corrupt("entry count", "more entries than bytes");
  p.entries.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    MailboxEntry e;
    QIM_ASSIGN_OR_RETURN(e.user, r.name<UserId>("user"));
    QIM_ASSIGN_OR_RETURN(uint64_t seq, r.u64("seq"));
    e.seq = MailboxSeq::from_raw(seq);
    if (seq <= from || seq > to) return r.corrupt("seq", "outside (from, to]");
    if (!p.entries.empty() && seq < p.entries.back().seq.raw()) return r.corrupt("seq", "not ascending");
    QIM_ASSIGN_OR_RETURN(e.message.id.value, r.u64("message id"));
    QIM_ASSIGN_OR_RETURN(std::string conversation, r.str("conversation", ConversationId::kMaxBytes));
    auto c = ConversationId::parse(conversation);
    if (!c.ok()) return r.corrupt("conversation", c.error().message());
    e.message.conversation = std::move(c).value();
    QIM_ASSIGN_OR_RETURN(e.message.sender, r.name<UserId>("sender"));
    QIM_ASSIGN_OR_RETURN(e.message.sender_device, r.name<DeviceId>("sender device", true));
    QIM_ASSIGN_OR_RETURN(e.message.client_msg_id, r.str("client_msg_id", 64));
    QIM_ASSIGN_OR_RETURN(e.message.server_time_ms, r.i64("server time"));
    QIM_ASSIGN_OR_RETURN(e.message.body, r.str("body", kMaxBodyBytes));
    if (version == kReplyVersion) {
      QIM_ASSIGN_OR_RETURN(uint8_t reply, r.u8("reply"));
      if (reply > 1) return r.corrupt("reply", "neither 0 nor 1");
      if (reply == 1) {
        QIM_ASSIGN_OR_RETURN(uint64_t reply_to, r.u64("reply_to"));
        e.message.reply_to = MessageId{reply_to};
      }
    }
    p.entries.push_back(std::move(e));
  }
  QIM_RETURN_IF_ERROR(r.finish());
  return p;
}

}  // namespace qim
