#include "lifecycle/reaction.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace qim {

namespace {

// The code points of `s`, nullopt if it is not well-formed UTF-8 (overlong, surrogate, past U+10FFFF).
std::optional<std::vector<uint32_t>> code_points(std::string_view s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    uint32_t cp = 0;
    size_t n = 0;
    if (b < 0x80) {
      cp = b;
      n = 1;
    } else if ((b & 0xE0) == 0xC0) {
      cp = b & 0x1F;
      n = 2;
    } else if ((b & 0xF0) == 0xE0) {
      cp = b & 0x0F;
      n = 3;
    } else if ((b & 0xF8) == 0xF0) {
      cp = b & 0x07;
      n = 4;
    } else {
      return std::nullopt;
    }
    if (i + n > s.size()) return std::nullopt;
    for (size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (c & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
    out.push_back(cp);
    i += n;
  }
  return out;
}

bool regional_indicator(uint32_t c) {
  return c >= 0x1F1E6 && c <= 0x1F1FF;
}
bool skin_tone(uint32_t c) {
  return c >= 0x1F3FB && c <= 0x1F3FF;
}
bool variation(uint32_t c) {
  return c == 0xFE0E || c == 0xFE0F;
}
bool tag(uint32_t c) {
  return c >= 0xE0020 && c <= 0xE007F;
}

bool emoji_base(uint32_t c) {
  if (regional_indicator(c) || skin_tone(c)) return false;
  if (c >= 0x1F000 && c <= 0x1FAFF) return true;  // the pictographic and emoticon blocks
  if (c >= 0x2600 && c <= 0x27BF) return true;    // miscellaneous symbols, dingbats
  if (c >= 0x2300 && c <= 0x23FF) return true;    // technical (watch, hourglass, ...)
  if (c >= 0x2B00 && c <= 0x2BFF) return true;    // arrows and stars (U+2B50 ...)
  if (c >= 0x2190 && c <= 0x21FF) return true;    // arrows
  if (c >= 0x25A0 && c <= 0x25FF) return true;    // geometric shapes
  switch (c) {
    case 0x00A9:
    case 0x00AE:
    case 0x203C:
    case 0x2049:
    case 0x2122:
    case 0x2139:
    case 0x24C2:
    case 0x3030:
    case 0x303D:
    case 0x3297:
    case 0x3299:
      return true;
    default:
      return false;
  }
}

bool short_code(std::string_view s) {
  if (s.size() < 3 || s.size() > 34 || s.front() != ':' || s.back() != ':') return false;
  for (char c : s.substr(1, s.size() - 2)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool valid_reaction(std::string_view reaction) {
  if (reaction.empty() || reaction.size() > kMaxReactionBytes) return false;
  if (reaction.front() == ':') return short_code(reaction);
  auto cps = code_points(reaction);
  if (!cps || cps->empty() || cps->size() > 8) return false;
  const std::vector<uint32_t>& c = *cps;
  size_t i = 0;
  // Keycap: [0-9#*] U+FE0F? U+20E3, and nothing else.
  if ((c[0] >= '0' && c[0] <= '9') || c[0] == '#' || c[0] == '*') {
    i = 1;
    if (i < c.size() && c[i] == 0xFE0F) ++i;
    return i + 1 == c.size() && c[i] == 0x20E3;
  }
  // A flag: exactly two regional indicators.
  if (regional_indicator(c[0])) return c.size() == 2 && regional_indicator(c[1]);
  while (true) {
    if (i >= c.size() || !emoji_base(c[i])) return false;
    ++i;
    while (i < c.size() && (variation(c[i]) || skin_tone(c[i]) || tag(c[i]))) ++i;
    if (i == c.size()) return true;
    if (c[i] != 0x200D) return false;
    ++i;  // a ZWJ joins the next base
  }
}

}  // namespace qim
