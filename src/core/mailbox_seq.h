#pragma once
// mailbox_seq = compose(epoch, offset) = (epoch << 48) | offset: the sequence of an entry in a mailbox.
// The epoch (ownership generation of a shard) sorts first, so a new owner's entries follow the old ones.

#include <compare>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace qim {

inline constexpr int kOffsetBits = 48;
inline constexpr uint64_t kMaxOffset = (uint64_t{1} << kOffsetBits) - 1;  // offsets are < 2^48
inline constexpr uint32_t kMaxEpoch = (uint32_t{1} << 16) - 1;            // epochs are < 2^16

// An ownership generation of a shard; a new owner takes a higher one.
struct Epoch {
  uint32_t value = 0;
  auto operator<=>(const Epoch&) const = default;
};

// A record's position in its log partition.
struct Offset {
  uint64_t value = 0;
  auto operator<=>(const Offset&) const = default;
};

class MailboxSeq {
 public:
  constexpr MailboxSeq() = default;
  // From a stored raw value (any 64-bit value is a valid seq: 16 bits epoch, 48 bits offset).
  static constexpr MailboxSeq from_raw(uint64_t raw) { return MailboxSeq(raw); }

  constexpr uint64_t raw() const { return raw_; }
  constexpr Epoch epoch() const { return Epoch{static_cast<uint32_t>(raw_ >> kOffsetBits)}; }
  constexpr Offset offset() const { return Offset{raw_ & kMaxOffset}; }
  constexpr bool is_zero() const { return raw_ == 0; }
  auto operator<=>(const MailboxSeq&) const = default;
  std::string to_string() const;  // "3:1042" (epoch:offset)

 private:
  constexpr explicit MailboxSeq(uint64_t raw) : raw_(raw) {}
  uint64_t raw_ = 0;
};

// InvalidArgument for offset >= 2^48 or epoch >= 2^16.
Result<MailboxSeq> compose(Epoch epoch, Offset offset);
Status check_offset(Offset offset);
Status check_epoch(Epoch epoch);

}  // namespace qim
