#pragma once
// Where attachment bytes live (issue 41): an S3-compatible object store that clients upload to and download
// from directly, through short-lived presigned URLs, so that no byte of a file passes through a QIM process
// on its way between two clients. QIM itself only signs URLs, looks objects up (HEAD) when a message
// references them, reads an image back to make its thumbnail, writes the thumbnail, and deletes objects
// (recall, retention, the sweep of uploads never referenced).
//
// Implementations: S3 (attachments/s3/, AWS SigV4 through a maintained crate behind a C ABI; against
// SeaweedFS in tests, any S3 / R2 / GCS in production) and memory (tests of the rules above it).
//
// Keys are chosen by the caller (attachments/attachment_service.h makes them unguessable); they are
// printable ASCII without spaces, at most 512 bytes. Every call is thread-safe.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace qim::attachments {

// Where the store is and who we are to it. From QIM_S3_* (docs/operations.md "Attachments").
struct S3Config {
  std::string endpoint;         // the URL QIM itself talks to, e.g. http://127.0.0.1:41333
  std::string public_endpoint;  // the URL presigned links name for clients (default: endpoint)
  std::string region = "us-east-1";
  std::string bucket;
  std::string access_key;
  std::string secret_key;
  bool path_style = true;  // http://host/bucket/key (SeaweedFS, MinIO); false: http://bucket.host/key
};

// What a HEAD of an object answers.
struct ObjectInfo {
  uint64_t size = 0;
  std::string content_type;
  int64_t last_modified_ms = 0;  // the store's clock; the orphan sweep compares it with its own "now"
};

struct ListedObject {
  std::string key;
  uint64_t size = 0;
  int64_t last_modified_ms = 0;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // A URL a client may PUT exactly `size` bytes of `content_type` to, for `ttl`. The signature covers the
  // content length and type, so an upload of another size or type is refused by the store itself.
  // InvalidArgument for a bad key or a ttl outside (0, 7 days].
  virtual Result<std::string> presign_put(std::string_view key, uint64_t size, std::string_view content_type,
                                          std::chrono::seconds ttl) = 0;
  // A URL a client may GET the object from, for `ttl`. InvalidArgument as presign_put.
  virtual Result<std::string> presign_get(std::string_view key, std::chrono::seconds ttl) = 0;

  // The object's size and type; nullopt if there is none at `key`. Transport / Timeout.
  virtual Result<std::optional<ObjectInfo>> head(std::string_view key) = 0;
  // The object's bytes; NotFound if none; ResourceExhausted if it is larger than `max_bytes`.
  virtual Result<std::string> get(std::string_view key, uint64_t max_bytes) = 0;
  // Writes an object (thumbnails: QIM's own small writes). Transport / Timeout.
  virtual Status put(std::string_view key, std::string_view content_type, std::string_view bytes) = 0;
  // Deletes an object; deleting a missing one succeeds (a retry after a lost answer is not an error).
  virtual Status remove(std::string_view key) = 0;
  // Up to `limit` objects whose key starts with `prefix`, in key order, after `start_after` (exclusive).
  virtual Result<std::vector<ListedObject>> list(std::string_view prefix, std::string_view start_after,
                                                 uint32_t limit) = 0;
};

// For tests of the rules above the store: objects in memory; its presigned URLs are opaque strings
// (attachments/memory_object_store.h says what tests may do with them).
std::unique_ptr<ObjectStore> make_memory_object_store();

}  // namespace qim::attachments
