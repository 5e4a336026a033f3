#pragma once
// `qim admin api-key create|list|revoke` (docs/api.md "Keys"): the server API's keys in the key file
// (QIM_API_KEYS_FILE, else <data dir>/api-keys). Works whether the instance runs or not: a running API
// re-reads the file at its next request.

#include <string>

#include "mailbox/store_options.h"

namespace qim {

struct ApiKeyRequest {
  std::string action;  // "create", "list" or "revoke"
  std::string scopes;  // create: "send,groups,read,tokens,users" or "all"
  std::string label;   // create: free text
  std::string id;      // revoke
  bool json = false;   // list: JSON lines
};
// create prints the key once (stdout, then what it may do on stderr); list prints one line per key (id,
// scopes, created, revoked, label), never a hash; revoke prints the id. Exit 0, or 2 for bad arguments, 1
// for a file that cannot be read or written or an unknown id.
int run_api_key(const EnvLookup& env, const ApiKeyRequest& request);

}  // namespace qim
