#pragma once
// The S3 backend of the object store contract (attachments/object_store.h): presigned URLs and QIM's own
// requests signed with AWS Signature V4 (the rusty-s3 crate behind sign/qim_s3_sign.h), sent with
// Boost.Beast. Works against SeaweedFS (the tests' engine, scripts/engines/objstore.sh), AWS S3, Cloudflare
// R2 and Google Cloud Storage's XML API (HMAC keys).

#include <chrono>
#include <memory>

#include "attachments/object_store.h"
#include "core/status.h"

namespace qim::attachments {

struct S3ClientOptions {
  // Bounds each request QIM makes itself, connection included. Timeout past it.
  std::chrono::milliseconds timeout{10'000};
  // How long the signature of QIM's own requests stays valid (room for the store's clock being ahead).
  std::chrono::seconds own_request_ttl{300};
};

// Config when an endpoint, the bucket or a key cannot make a signer (the message names which). It does
// not contact the store: a store that is down shows at the first request (Transport naming the store).
Result<std::unique_ptr<ObjectStore>> open_s3_object_store(const S3Config& config,
                                                          S3ClientOptions options = {});

}  // namespace qim::attachments
