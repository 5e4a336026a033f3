#include "api/api_keys.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "auth/base64url.h"

namespace qim::api {

namespace {

constexpr std::array<std::pair<Scope, std::string_view>, 5> kScopes{{{Scope::kSend, "send"},
                                                                     {Scope::kGroups, "groups"},
                                                                     {Scope::kRead, "read"},
                                                                     {Scope::kTokens, "tokens"},
                                                                     {Scope::kUsers, "users"}}};

std::string hex(const unsigned char* bytes, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0xf]);
  }
  return out;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

std::optional<int64_t> to_int(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!std::filesystem::exists(path)) return std::string();
    return Error(Errc::kIo, "cannot read the API key file " + path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Status write_file(const std::string& path, const std::string& text) {
  // The data directory of an instance that never ran: made here, as `qim up` would.
  std::error_code ec;
  if (auto parent = std::filesystem::path(path).parent_path(); !parent.empty())
    std::filesystem::create_directories(parent, ec);
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Error(Errc::kIo, "cannot write the API key file " + tmp);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      ::close(fd);
      return Error(Errc::kIo, "cannot write the API key file " + tmp);
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || std::rename(tmp.c_str(), path.c_str()) != 0)
    return Error(Errc::kIo, "cannot replace the API key file " + path);
  return {};
}

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) out.clear();
  return out;
}

}  // namespace

std::string_view scope_name(Scope scope) {
  for (const auto& [s, name] : kScopes)
    if (s == scope) return name;
  return "?";
}

Result<Scopes> parse_scopes(std::string_view text) {
  if (text == "all") return kAllScopes;
  Scopes out = 0;
  for (std::string_view part : split(text, ',')) {
    bool known = false;
    for (const auto& [s, name] : kScopes) {
      if (part == name) {
        out |= static_cast<Scopes>(s);
        known = true;
      }
    }
    if (!known)
      return Error(Errc::kInvalidArgument, "unknown API key scope '" + std::string(part) +
                                               "' (known: send, groups, read, tokens, users, or all)");
  }
  return out;
}

std::string format_scopes(Scopes scopes) {
  std::string out;
  for (const auto& [s, name] : kScopes) {
    if ((scopes & static_cast<Scopes>(s)) == 0) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

std::string sha256_hex(std::string_view key) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
  return hex(digest, sizeof digest);
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<std::string> key_id_of(std::string_view key) {
  if (!key.starts_with("qim_") || key.size() < 4 + 12 + 1 + 1 || key[16] != '_') return std::nullopt;
  std::string_view id = key.substr(4, 12);
  for (char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  return std::string(id);
}

std::string format_key_file(const std::vector<ApiKeyRecord>& records) {
  std::string out = "# QIM server API keys (docs/api.md): SHA-256 of each key, never the key itself\n";
  for (const auto& r : records) {
    out += "v1\t" + r.id + '\t' + r.sha256_hex + '\t' + format_scopes(r.scopes) + '\t' +
           std::to_string(r.created_ms) + '\t' + std::to_string(r.revoked_ms) + '\t' + r.label + '\n';
  }
  return out;
}

Result<std::vector<ApiKeyRecord>> parse_key_file(std::string_view text) {
  std::vector<ApiKeyRecord> out;
  size_t line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    if (line.empty() || line.starts_with('#')) continue;
    auto fields = split(line, '\t');
    auto bad = [&](std::string_view why) {
      return Error(Errc::kInvalidArgument,
                   "API key file line " + std::to_string(line_no) + ": " + std::string(why));
    };
    if (fields.size() != 7 || fields[0] != "v1")
      return bad("expected 7 tab-separated fields starting with v1");
    ApiKeyRecord r;
    r.id = std::string(fields[1]);
    if (!key_id_of("qim_" + r.id + "_x")) return bad("malformed key id");
    r.sha256_hex = std::string(fields[2]);
    if (r.sha256_hex.size() != 64) return bad("malformed SHA-256");
    auto scopes = parse_scopes(fields[3]);
    if (!scopes.ok()) return bad(scopes.error().message());
    r.scopes = *scopes;
    auto created = to_int(fields[4]);
    auto revoked = to_int(fields[5]);
    if (!created || !revoked) return bad("malformed time");
    r.created_ms = *created;
    r.revoked_ms = *revoked;
    r.label = std::string(fields[6]);
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<ApiKeyRecord>> list_api_keys(const std::string& path) {
  QIM_ASSIGN_OR_RETURN(auto text, read_file(path));
  return parse_key_file(text);
}

Result<CreatedKey> create_api_key(const std::string& path, Scopes scopes, const std::string& label,
                                  int64_t now_ms) {
  if (scopes == 0 || (scopes & ~kAllScopes) != 0)
    return Error(Errc::kInvalidArgument, "an API key needs at least one scope");
  if (label.find_first_of("\t\r\n") != std::string::npos)
    return Error(Errc::kInvalidArgument, "the label cannot hold a tab or a newline");
  QIM_ASSIGN_OR_RETURN(auto records, list_api_keys(path));
  const std::string id_bytes = random_bytes(6);
  const std::string secret = random_bytes(32);
  if (id_bytes.empty() || secret.empty()) return Error(Errc::kIo, "the random number generator failed");
  CreatedKey created;
  created.record.id = hex(reinterpret_cast<const unsigned char*>(id_bytes.data()), id_bytes.size());
  created.key = "qim_" + created.record.id + "_" + base64url_encode(secret);
  created.record.sha256_hex = sha256_hex(created.key);
  created.record.scopes = scopes;
  created.record.created_ms = now_ms;
  created.record.label = label;
  records.push_back(created.record);
  QIM_RETURN_IF_ERROR(write_file(path, format_key_file(records)));
  return created;
}

Status revoke_api_key(const std::string& path, const std::string& id, int64_t now_ms) {
  QIM_ASSIGN_OR_RETURN(auto records, list_api_keys(path));
  bool found = false;
  for (auto& r : records) {
    if (r.id != id) continue;
    found = true;
    if (r.revoked_ms == 0) r.revoked_ms = now_ms;
  }
  if (!found) return Error(Errc::kNotFound, "no API key with id '" + id + "' in " + path);
  return write_file(path, format_key_file(records));
}

Status ApiKeyVerifier::reload_locked() {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    records_.clear();  // no file: no key
    seen_mtime_ns_ = seen_size_ = -1;
    return {};
  }
  const int64_t mtime = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  if (mtime == seen_mtime_ns_ && st.st_size == seen_size_) return {};
  QIM_ASSIGN_OR_RETURN(auto records, list_api_keys(path_));
  records_ = std::move(records);
  seen_mtime_ns_ = mtime;
  seen_size_ = st.st_size;
  return {};
}

Result<ApiKeyRecord> ApiKeyVerifier::verify(std::string_view key) {
  std::lock_guard lock(mu_);
  QIM_RETURN_IF_ERROR(reload_locked());
  const auto id = key_id_of(key);
  const std::string hash = sha256_hex(key);
  if (id) {
    for (const auto& r : records_) {
      if (r.id != *id || !equal_constant_time(r.sha256_hex, hash)) continue;
      if (r.revoked_ms != 0) return Error(Errc::kUnauthenticated, "API key " + r.id + " was revoked");
      return r;
    }
  }
  return Error(Errc::kUnauthenticated, "unknown API key");
}

}  // namespace qim::api
