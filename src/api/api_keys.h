#pragma once
// API keys of the server API (docs/api.md "Keys", docs/adr/0101-server-api-keys.md). A key is
// "qim_<id>_<secret>": `id` (12 hex digits) names it in lists and revocations, `secret` is 256 random bits
// (base64url). Only SHA-256 of the whole key is stored, one line per key in a key file that every gateway of
// a deployment reads (`<data dir>/api-keys` for `qim up`; QIM_API_KEYS_FILE, e.g. a mounted secret, for a
// distributed deployment). The file is re-read when it changes, so a revocation takes effect at the next
// request without a restart. Hashes are compared in constant time.
//
// Line format (text, '\t'-separated): "v1 id sha256-hex scopes created-ms revoked-ms label"; revoked-ms 0
// means live. Lines starting with '#' and blank lines are skipped.

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace qim::api {

// What a key may do, one bit each.
enum class Scope : uint32_t { kSend = 1, kGroups = 2, kRead = 4, kTokens = 8, kUsers = 16 };
using Scopes = uint32_t;
inline constexpr Scopes kAllScopes = 31;

std::string_view scope_name(Scope scope);
// "send,groups" -> bits. InvalidArgument naming an unknown or empty scope (the known: send, groups, read,
// tokens, users); "all" means every scope.
Result<Scopes> parse_scopes(std::string_view text);
// Bits -> "send,groups" (in the order above).
std::string format_scopes(Scopes scopes);

struct ApiKeyRecord {
  std::string id;          // 12 hex digits
  std::string sha256_hex;  // of the whole key text
  Scopes scopes = 0;
  int64_t created_ms = 0;
  int64_t revoked_ms = 0;  // 0: live
  std::string label;       // free text without tabs or newlines
};

// SHA-256 of `key` as 64 lower-case hex digits.
std::string sha256_hex(std::string_view key);
// Whether two equally long strings are equal, in time that depends only on their length (CRYPTO_memcmp);
// false for different lengths.
bool equal_constant_time(std::string_view a, std::string_view b);
// The id of a key text "qim_<id>_<secret>", or nullopt if it does not have that shape.
std::optional<std::string> key_id_of(std::string_view key);

// The key file's text of `records` and back. parse: InvalidArgument naming the line for a malformed one.
std::string format_key_file(const std::vector<ApiKeyRecord>& records);
Result<std::vector<ApiKeyRecord>> parse_key_file(std::string_view text);

// Operations on a key file (`qim admin api-key`). Each rewrites the whole file atomically (a temporary file
// renamed over it, mode 0600).
struct CreatedKey {
  std::string key;  // shown once; never stored
  ApiKeyRecord record;
};
// A new key with `scopes` (non-zero) and `label`. Io if the file cannot be read or written; InvalidArgument
// for no scope or a label with a tab or newline.
Result<CreatedKey> create_api_key(const std::string& path, Scopes scopes, const std::string& label,
                                  int64_t now_ms);
// Every key in the file (none when it does not exist). Io, InvalidArgument for a malformed file.
Result<std::vector<ApiKeyRecord>> list_api_keys(const std::string& path);
// Marks key `id` revoked at `now_ms`. NotFound for an unknown id; revoking twice keeps the first time.
Status revoke_api_key(const std::string& path, const std::string& id, int64_t now_ms);

// The server's view of the key file: verify() re-reads it when its size or modification time changed.
// Thread-safe.
class ApiKeyVerifier {
 public:
  explicit ApiKeyVerifier(std::string path) : path_(std::move(path)) {}
  // The record of a live key whose hash matches `key` (compared in constant time). Unauthenticated with
  // "unknown API key" (no such key, malformed, wrong secret) or "API key <id> was revoked"; Io /
  // InvalidArgument when the file cannot be read.
  Result<ApiKeyRecord> verify(std::string_view key);
  const std::string& path() const { return path_; }

 private:
  Status reload_locked();

  const std::string path_;
  std::mutex mu_;
  std::vector<ApiKeyRecord> records_;
  int64_t seen_mtime_ns_ = -1;
  int64_t seen_size_ = -1;
};

}  // namespace qim::api
