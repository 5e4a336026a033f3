#include "core/name.h"

namespace qim {

std::string shown_text(std::string_view text, size_t max) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : text.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xf]);
    }
  }
  if (text.size() > max) out += "...";
  return out;
}

Status check_name(std::string_view kind, std::string_view text, size_t max_bytes) {
  if (text.empty() || text.size() > max_bytes) {
    return Error(Errc::kInvalidArgument, std::string(kind) + " must be 1.." + std::to_string(max_bytes) +
                                             " bytes, got " + std::to_string(text.size()));
  }
  for (size_t i = 0; i < text.size(); ++i) {
    if (is_name_char(text[i])) continue;
    const std::string c = shown_text(text.substr(i, 1));
    std::string why = std::string(kind) + " '" + shown_text(text) + "' has '" + c + "' at byte " +
                      std::to_string(i + 1) + "; names are 1.." + std::to_string(max_bytes) + " bytes of " +
                      std::string(kNameAlphabet);
    if (text[i] == ':') why += " (':' separates the members of a conversation id)";
    return Error(Errc::kInvalidArgument, std::move(why));
  }
  return {};
}

}  // namespace qim
