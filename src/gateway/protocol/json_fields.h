#pragma once
// Reading fields of a parsed JSON object (simdjson DOM) as the protocol writes them: strings, and 64-bit
// ids as decimal strings (a plain number is read too). Shared by the client's frame parser and the
// operation histories of src/checker/; each returns "absent" rather than failing, and the caller decides
// whether a missing field is an error.

#include <simdjson.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qim::json_fields {

// The string at `key`; empty if absent or not a string.
inline std::string str(const simdjson::dom::object& o, std::string_view key) {
  std::string_view s;
  if (o.at_key(key).get_string().get(s) != simdjson::SUCCESS) return {};
  return std::string(s);
}

// The unsigned 64-bit value at `key`, written as a decimal string or a number; nullopt if absent, null,
// or not such a value.
inline std::optional<uint64_t> u64(const simdjson::dom::object& o, std::string_view key) {
  simdjson::dom::element e;
  if (o.at_key(key).get(e) != simdjson::SUCCESS || e.is_null()) return std::nullopt;
  uint64_t v = 0;
  if (e.get_uint64().get(v) == simdjson::SUCCESS) return v;
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace qim::json_fields
