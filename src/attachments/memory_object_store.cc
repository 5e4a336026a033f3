#include "attachments/memory_object_store.h"

namespace qim::attachments {

namespace {

constexpr std::string_view kPutPrefix = "memory://put/";
constexpr std::string_view kGetPrefix = "memory://get/";
constexpr std::chrono::seconds kMaxTtl = std::chrono::hours(24 * 7);

Status check_presign(std::string_view key, std::chrono::seconds ttl) {
  if (!valid_object_key(key))
    return Error(Errc::kInvalidArgument, "bad object key '" + std::string(key) + "'");
  if (ttl <= std::chrono::seconds(0) || ttl > kMaxTtl)
    return Error(Errc::kInvalidArgument, "presign ttl must be within (0, 7 days]");
  return {};
}

}  // namespace

bool valid_object_key(std::string_view key) {
  if (key.empty() || key.size() > 512) return false;
  for (char c : key)
    if (c <= ' ' || c > '~') return false;
  return true;
}

MemoryObjectStore::MemoryObjectStore(std::shared_ptr<const Clock> clock) : clock_(std::move(clock)) {}

Result<std::string> MemoryObjectStore::presign_put(std::string_view key, uint64_t size,
                                                   std::string_view content_type, std::chrono::seconds ttl) {
  if (Status s = check_presign(key, ttl); !s.ok()) return s.error();
  std::lock_guard lock(mu_);
  const std::string token = std::to_string(next_token_++);
  urls_[token] = Signed{true, std::string(key), size, std::string(content_type),
                        clock_->now_ms() + std::chrono::milliseconds(ttl).count()};
  return std::string(kPutPrefix) + token;
}

Result<std::string> MemoryObjectStore::presign_get(std::string_view key, std::chrono::seconds ttl) {
  if (Status s = check_presign(key, ttl); !s.ok()) return s.error();
  std::lock_guard lock(mu_);
  const std::string token = std::to_string(next_token_++);
  urls_[token] =
      Signed{false, std::string(key), 0, {}, clock_->now_ms() + std::chrono::milliseconds(ttl).count()};
  return std::string(kGetPrefix) + token;
}

Result<std::optional<ObjectInfo>> MemoryObjectStore::head(std::string_view key) {
  std::lock_guard lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return std::optional<ObjectInfo>();
  return std::optional<ObjectInfo>(
      ObjectInfo{it->second.bytes.size(), it->second.content_type, it->second.modified_ms});
}

Result<std::string> MemoryObjectStore::get(std::string_view key, uint64_t max_bytes) {
  std::lock_guard lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return Error(Errc::kNotFound, "no object '" + std::string(key) + "'");
  if (it->second.bytes.size() > max_bytes)
    return Error(Errc::kResourceExhausted,
                 "object '" + std::string(key) + "' is over " + std::to_string(max_bytes) + " bytes");
  return it->second.bytes;
}

Status MemoryObjectStore::put(std::string_view key, std::string_view content_type, std::string_view bytes) {
  if (!valid_object_key(key))
    return Error(Errc::kInvalidArgument, "bad object key '" + std::string(key) + "'");
  put_at(key, content_type, bytes, clock_->now_ms());
  return {};
}

void MemoryObjectStore::put_at(std::string_view key, std::string_view content_type, std::string_view bytes,
                               int64_t modified_ms) {
  std::lock_guard lock(mu_);
  objects_[std::string(key)] = Object{std::string(content_type), std::string(bytes), modified_ms};
}

Status MemoryObjectStore::remove(std::string_view key) {
  std::lock_guard lock(mu_);
  if (auto it = objects_.find(key); it != objects_.end()) objects_.erase(it);
  return {};
}

Result<std::vector<ListedObject>> MemoryObjectStore::list(std::string_view prefix,
                                                          std::string_view start_after, uint32_t limit) {
  std::lock_guard lock(mu_);
  std::vector<ListedObject> out;
  auto it = start_after.empty() ? objects_.lower_bound(prefix) : objects_.upper_bound(start_after);
  for (; it != objects_.end() && out.size() < limit; ++it) {
    if (!it->first.starts_with(prefix)) {
      if (it->first > prefix) break;
      continue;
    }
    out.push_back(ListedObject{it->first, it->second.bytes.size(), it->second.modified_ms});
  }
  return out;
}

Result<MemoryObjectStore::Signed> MemoryObjectStore::signed_of(std::string_view url, bool put) const {
  const std::string_view prefix = put ? kPutPrefix : kGetPrefix;
  if (!url.starts_with(prefix)) return Error(Errc::kPermissionDenied, "not a presigned URL for this method");
  auto it = urls_.find(url.substr(prefix.size()));
  if (it == urls_.end()) return Error(Errc::kPermissionDenied, "signature does not match");
  if (clock_->now_ms() >= it->second.expires_ms) return Error(Errc::kPermissionDenied, "request has expired");
  return it->second;
}

Status MemoryObjectStore::upload(std::string_view url, std::string_view content_type,
                                 std::string_view bytes) {
  std::lock_guard lock(mu_);
  auto s = signed_of(url, true);
  if (!s.ok()) return s.error();
  if (bytes.size() != s->size) return Error(Errc::kPermissionDenied, "content length other than signed");
  if (content_type != s->content_type)
    return Error(Errc::kPermissionDenied, "content type other than signed");
  objects_[s->key] = Object{std::string(content_type), std::string(bytes), clock_->now_ms()};
  return {};
}

Result<std::string> MemoryObjectStore::download(std::string_view url) {
  std::lock_guard lock(mu_);
  auto s = signed_of(url, false);
  if (!s.ok()) return s.error();
  auto it = objects_.find(s->key);
  if (it == objects_.end()) return Error(Errc::kNotFound, "no such key");
  return it->second.bytes;
}

std::vector<std::string> MemoryObjectStore::keys() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [k, v] : objects_) out.push_back(k);
  return out;
}

std::unique_ptr<MemoryObjectStore> make_memory_object_store(std::shared_ptr<const Clock> clock) {
  return std::make_unique<MemoryObjectStore>(std::move(clock));
}

std::unique_ptr<ObjectStore> make_memory_object_store() {
  return make_memory_object_store(std::make_shared<SystemClock>());
}

}  // namespace qim::attachments
