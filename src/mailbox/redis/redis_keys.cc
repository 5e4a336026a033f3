#include "mailbox/redis/redis_keys.h"

namespace qim {

std::string seq_hex(MailboxSeq seq) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  uint64_t v = seq.raw();
  for (int i = 15; i >= 0; --i, v >>= 4) out[i] = kDigits[v & 0xF];
  return out;
}

Result<MailboxSeq> parse_seq_hex(std::string_view hex) {
  auto bad = [&] {
    return Error(Errc::kCorruptEntry,
                 "mailbox seq '" + std::string(hex.substr(0, 32)) + "' is not 16 lowercase hex digits");
  };
  if (hex.size() != 16) return bad();
  uint64_t v = 0;
  for (char c : hex) {
    uint64_t d;
    if (c >= '0' && c <= '9') {
      d = static_cast<uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<uint64_t>(c - 'a' + 10);
    } else {
      return bad();
    }
    v = (v << 4) | d;
  }
  return MailboxSeq::from_raw(v);
}

}  // namespace qim
