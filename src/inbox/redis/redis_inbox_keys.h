#pragma once
// The Redis key layout of the inbox (docs/redis-store.md, "Inbox"), under the mailbox store's prefix and
// on the mailbox store's instances: a user's keys on the instance of the user's shard (as its mailbox
// entries, so one script touches one instance), a conversation's receipts on the instance of the
// conversation (as its history and group rows).
//
//   {p}ic:{user}            HASH conversation -> row: seq hex (16) + entry value (the highest seq held)
//   {p}ix:{user}:{conv}     ZSET index of (user, conv): seq hex, score 0 (lexicographic = numeric)
//   {p}iu:{user}:{conv}     ZSET the members of ix that count toward unread: ZLEXCOUNT is the count
//   {p}iv:{user}:{conv}     HASH seq hex -> entry value (redis_inbox_values.h)
//   {p}ie:{user}:{conv}     ZSET seq hex by expiry ms (score: an integer below 2^53, exact): what expired
//   {p}ia:{user}            ZSET activity: seq hex (16) + conversation, score 0, one per row (0089)
//   {p}ir:{user}            HASH conversation -> read mark, seq hex
//   {p}is:{user}            HASH setting -> version hex (16) + value
//   {p}rr:{conv}            HASH user -> message id hex (16): the conversation's read receipts
//
// A user id holds no ':' (core/name.h), so "{user}:{conv}" has one reading. Seqs carry the epoch in their
// top 16 bits (above 2^53): as in the mailbox's keys, they are fixed-width hex members with score 0, never
// scores (redis_keys.h).

#include <string>

#include "core/ids.h"

namespace qim {

class RedisInboxKeys {
 public:
  explicit RedisInboxKeys(std::string prefix) : p_(std::move(prefix)) {}

  std::string rows(const UserId& u) const { return p_ + "ic:" + u.str(); }
  std::string index(const UserId& u, const ConversationId& c) const { return of("ix:", u, c); }
  std::string counting(const UserId& u, const ConversationId& c) const { return of("iu:", u, c); }
  std::string values(const UserId& u, const ConversationId& c) const { return of("iv:", u, c); }
  std::string expiries(const UserId& u, const ConversationId& c) const { return of("ie:", u, c); }
  std::string activity(const UserId& u) const { return p_ + "ia:" + u.str(); }
  std::string read_marks(const UserId& u) const { return p_ + "ir:" + u.str(); }
  std::string settings(const UserId& u) const { return p_ + "is:" + u.str(); }
  std::string receipts(const ConversationId& c) const { return p_ + "rr:" + c.str(); }

 private:
  std::string of(const char* kind, const UserId& u, const ConversationId& c) const {
    return p_ + kind + u.str() + ":" + c.str();
  }
  std::string p_;
};

}  // namespace qim
