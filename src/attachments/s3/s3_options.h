#pragma once
// S3Config (attachments/object_store.h) from the QIM_S3_* environment (docs/operations.md, "Attachments:
// the object store").

#include <functional>
#include <optional>
#include <string>

#include "attachments/object_store.h"
#include "core/status.h"

namespace qim::attachments {

// The same shape as mailbox/store_options.h's EnvLookup: a variable's value, nullopt when unset.
using S3EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Reads QIM_S3_ENDPOINT (http:// or https:// URL QIM talks to), QIM_S3_PUBLIC_ENDPOINT (the URL presigned
// links name; default the endpoint), QIM_S3_REGION (us-east-1), QIM_S3_BUCKET, QIM_S3_ACCESS_KEY and
// QIM_S3_SECRET_KEY (each also as QIM_S3_..._FILE: the first line of that file; not both), QIM_S3_PATH_STYLE
// (1/true/0/false; default 1).
// nullopt when QIM_S3_ENDPOINT is unset or empty (attachments off). Config error naming the variable when a
// value is malformed, a required one is missing, or a _FILE cannot be read.
Result<std::optional<S3Config>> s3_config_from_env(const S3EnvLookup& getenv);

}  // namespace qim::attachments
