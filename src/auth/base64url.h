#pragma once
// Base64url without padding (RFC 4648 section 5): the alphabet tokens travel in, safe in URLs and headers.

#include <optional>
#include <string>
#include <string_view>

namespace qim {

std::string base64url_encode(std::string_view bytes);
// nullopt for a character outside the alphabet, padding, or an impossible length (4n + 1).
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace qim
