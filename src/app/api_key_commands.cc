#include "app/api_key_commands.h"

#include <fmt/core.h>

#include <chrono>

#include "api/api_keys.h"
#include "api/api_options.h"
#include "app/commands.h"
#include "app/config.h"

namespace qim {

namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int fail(const std::string& what, const Error& e, int code) {
  fmt::print(stderr, "{}: {}\n", what, e.message());
  return code;
}

}  // namespace

int run_api_key(const EnvLookup& env, const ApiKeyRequest& request) {
  const std::string what = "qim admin api-key " + request.action;
  const std::string data_dir = env("QIM_DATA_DIR").value_or(AppConfig{}.data_dir);
  const std::string path = api::api_keys_file(env, data_dir);
  if (request.action == "create") {
    auto scopes = api::parse_scopes(request.scopes);
    if (!scopes.ok()) return fail(what, scopes.error(), kExitRefused);
    auto created = api::create_api_key(path, *scopes, request.label, now_ms());
    if (!created.ok())
      return fail(what, created.error(),
                  created.code() == Errc::kInvalidArgument ? kExitRefused : kExitFailed);
    fmt::print("{}\n", created->key);
    fmt::print(stderr, "API key {} (scopes {}) stored hashed in {}; the key is shown only now\n",
               created->record.id, api::format_scopes(created->record.scopes), path);
    return kExitOk;
  }
  if (request.action == "list") {
    auto keys = api::list_api_keys(path);
    if (!keys.ok()) return fail(what, keys.error(), kExitFailed);
    for (const auto& k : *keys) {
      if (request.json) {
        fmt::print(
            "{{\"id\":\"{}\",\"scopes\":\"{}\",\"created_ms\":{},\"revoked_ms\":{},\"label\":\"{}\"}}\n",
            k.id, api::format_scopes(k.scopes), k.created_ms, k.revoked_ms, k.label);
      } else {
        fmt::print("{}  {:<30}  {}  {}\n", k.id, api::format_scopes(k.scopes),
                   k.revoked_ms ? "revoked" : "live", k.label);
      }
    }
    return kExitOk;
  }
  Status s = api::revoke_api_key(path, request.id, now_ms());
  if (!s.ok()) return fail(what, s.error(), kExitFailed);
  fmt::print("revoked {}\n", request.id);
  return kExitOk;
}

}  // namespace qim
