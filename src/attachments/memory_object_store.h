#pragma once
// The object store in memory (object_store.h), for tests of the attachment rules above it. Its presigned
// URLs are opaque strings ("memory://put/<token>", "memory://get/<token>"); a test plays the client's side
// of a real store through upload() and download(), which enforce what S3 enforces on a presigned request:
// the URL must be one this store signed, not expired by the store's clock, and a PUT must carry exactly the
// signed size and content type. Thread-safe.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "attachments/object_store.h"
#include "core/clock.h"

namespace qim::attachments {

class MemoryObjectStore final : public ObjectStore {
 public:
  explicit MemoryObjectStore(std::shared_ptr<const Clock> clock);

  Result<std::string> presign_put(std::string_view key, uint64_t size, std::string_view content_type,
                                  std::chrono::seconds ttl) override;
  Result<std::string> presign_get(std::string_view key, std::chrono::seconds ttl) override;
  Result<std::optional<ObjectInfo>> head(std::string_view key) override;
  Result<std::string> get(std::string_view key, uint64_t max_bytes) override;
  Status put(std::string_view key, std::string_view content_type, std::string_view bytes) override;
  Status remove(std::string_view key) override;
  Result<std::vector<ListedObject>> list(std::string_view prefix, std::string_view start_after,
                                         uint32_t limit) override;

  // The client's PUT through a presigned URL. PermissionDenied (what S3 answers 403) for a URL this store
  // did not sign, one for GET, one past its expiry, or a size or content type other than the signed ones.
  Status upload(std::string_view url, std::string_view content_type, std::string_view bytes);
  // The client's GET through a presigned URL: the bytes. PermissionDenied as upload(); NotFound when the
  // object is gone.
  Result<std::string> download(std::string_view url);

  // A test's direct write with a chosen modification time (the orphan sweep's tests), and the keys held.
  void put_at(std::string_view key, std::string_view content_type, std::string_view bytes,
              int64_t modified_ms);
  std::vector<std::string> keys() const;

 private:
  struct Object {
    std::string content_type;
    std::string bytes;
    int64_t modified_ms = 0;
  };
  struct Signed {
    bool put = false;
    std::string key;
    uint64_t size = 0;
    std::string content_type;
    int64_t expires_ms = 0;
  };
  Result<Signed> signed_of(std::string_view url, bool put) const;

  std::shared_ptr<const Clock> clock_;
  mutable std::mutex mu_;
  std::map<std::string, Object, std::less<>> objects_;
  std::map<std::string, Signed, std::less<>> urls_;  // by token
  uint64_t next_token_ = 1;
};

// The same store as make_memory_object_store() but with a clock of the caller's (tests that expire URLs).
std::unique_ptr<MemoryObjectStore> make_memory_object_store(std::shared_ptr<const Clock> clock);

// Whether `key` is one the store contract accepts: printable ASCII without spaces, 1..512 bytes.
bool valid_object_key(std::string_view key);

}  // namespace qim::attachments
