#pragma once
// Big-endian u64 in RocksDB keys: bytewise key order is then numeric order, so a range scan reads ids and
// offsets ascending. (Values are little-endian, core/bytes.h.) Shared by the embedded history and group
// stores.

#include <cstdint>
#include <string>
#include <string_view>

namespace qim {

inline void put_be64(std::string& out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// The u64 in the first 8 bytes of `in` (fewer bytes read as if the missing ones were absent: callers pass
// key suffixes they sized themselves).
inline uint64_t get_be64(std::string_view in) {
  uint64_t v = 0;
  for (char c : in.substr(0, 8)) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}

}  // namespace qim
