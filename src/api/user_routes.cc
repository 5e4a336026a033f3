// The server API's user registry routes (docs/api.md "Users", scope users; off unless QIM_USER_REGISTRY=1):
// create, get, list, update and delete users (users/user_registry.h). Deleting a user also revokes all its
// sessions through the SessionService (docs/adr/0099): its tokens stop working at AUTH and its live
// connections are closed, as `DELETE /v1/users/{user}/sessions` would.
#include <boost/json.hpp>

#include <charconv>

#include "api/api_router.h"
#include "sessions/session_service.h"
#include "users/user_registry.h"

namespace qim::api {

namespace json = boost::json;

namespace {

json::object user_json(const UserRecord& r) {
  json::object o;
  o["id"] = r.id.str();
  o["display_name"] = r.display_name;
  o["avatar_url"] = r.avatar_url;
  o["updated_at"] = r.updated_ms;
  return o;
}

ApiResponse json_answer(unsigned status, const json::value& v) {
  ApiResponse r;
  r.status = status;
  r.body = json::serialize(v);
  return r;
}

ApiResponse refused(const UserRegistry::Outcome& o) {
  switch (o.refusal) {
    case UserRegistry::Refusal::kExists:
    case UserRegistry::Refusal::kLookAlike:
      return ApiRouter::problem(WireCode::kUserExists, o.message);
    case UserRegistry::Refusal::kNotFound:
      return ApiRouter::problem(WireCode::kUnknownUser, o.message);
    case UserRegistry::Refusal::kTooLong:
    case UserRegistry::Refusal::kNone:
      break;
  }
  return ApiRouter::problem(WireCode::kInvalidArgument, o.message);
}

// The string fields of a create or update body; INVALID_ARGUMENT for another field or type.
std::variant<std::map<std::string, std::string>, ApiResponse> user_fields(const std::string& body,
                                                                          bool with_id) {
  json::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object())
    return ApiRouter::problem(WireCode::kBadFrame,
                              ec ? "the body is not JSON: " + ec.message() : "the body is not a JSON object");
  std::map<std::string, std::string> out;
  for (const auto& [k, value] : v.as_object()) {
    const bool known = k == "display_name" || k == "avatar_url" || (with_id && k == "id");
    if (!known)
      return ApiRouter::problem(WireCode::kInvalidArgument, "unknown field '" + std::string(k) + "'");
    if (!value.is_string())
      return ApiRouter::problem(WireCode::kInvalidArgument,
                                "field '" + std::string(k) + "': expected a string");
    out[std::string(k)] = std::string(value.as_string());
  }
  return out;
}

}  // namespace

ApiResponse ApiRouter::users(const ApiRequest& r, const std::map<std::string, std::string>& q,
                             const std::vector<std::string>& parts) {
  if (deps_.users == nullptr)
    return problem(WireCode::kUnavailable, "the user registry is off (QIM_USER_REGISTRY=1 turns it on)");
  UserRegistry& reg = *deps_.users;
  if (parts.size() == 2 && r.method == "GET") {
    std::string after;
    int64_t limit = 100;
    for (const auto& [k, v] : q) {
      if (k == "after") {
        after = v;
      } else if (k == "limit") {
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), limit);
        if (ec != std::errc() || end != v.data() + v.size() || limit < 1 || limit > 1000)
          return problem(WireCode::kInvalidArgument, "query parameter 'limit': an integer in 1..1000");
      } else {
        return problem(WireCode::kInvalidArgument, "unknown query parameter '" + k + "'");
      }
    }
    auto page = reg.list(after, static_cast<size_t>(limit) + 1);
    json::object out;
    json::array list;
    for (size_t i = 0; i < page.size() && i < static_cast<size_t>(limit); ++i)
      list.push_back(user_json(page[i]));
    out["users"] = std::move(list);
    if (page.size() > static_cast<size_t>(limit)) out["next"] = page[static_cast<size_t>(limit) - 1].id.str();
    return json_answer(200, out);
  }
  if (parts.size() == 2) {  // POST: create
    auto fields = user_fields(r.body, true);
    if (auto* p = std::get_if<ApiResponse>(&fields)) return std::move(*p);
    auto& f = std::get<std::map<std::string, std::string>>(fields);
    if (!f.contains("id")) return problem(WireCode::kInvalidArgument, "field 'id' is missing");
    auto id = UserId::parse(f["id"]);
    if (!id.ok()) return problem(WireCode::kInvalidArgument, "field 'id': " + id.error().message());
    auto made = reg.create(*id, f["display_name"], f["avatar_url"]);
    if (!made.ok()) return problem(wire_code_of(made.code()), made.error().message());
    if (made->refusal != UserRegistry::Refusal::kNone) return refused(*made);
    return json_answer(201, user_json(made->record));
  }
  auto id = UserId::parse(parts[2]);
  if (!id.ok()) return problem(WireCode::kInvalidArgument, "user: " + id.error().message());
  if (r.method == "GET") {
    auto u = reg.get(*id);
    if (!u) return problem(WireCode::kUnknownUser, "no user '" + id->str() + "'");
    return json_answer(200, user_json(*u));
  }
  if (r.method == "PATCH") {
    auto fields = user_fields(r.body, false);
    if (auto* p = std::get_if<ApiResponse>(&fields)) return std::move(*p);
    auto& f = std::get<std::map<std::string, std::string>>(fields);
    std::optional<std::string> name, avatar;
    if (f.contains("display_name")) name = f["display_name"];
    if (f.contains("avatar_url")) avatar = f["avatar_url"];
    auto changed = reg.update(*id, std::move(name), std::move(avatar));
    if (!changed.ok()) return problem(wire_code_of(changed.code()), changed.error().message());
    if (changed->refusal != UserRegistry::Refusal::kNone) return refused(*changed);
    return json_answer(200, user_json(changed->record));
  }
  // DELETE: the tombstone, then every session of the user revoked (its tokens stop working).
  auto removed = reg.remove(*id);
  if (!removed.ok()) return problem(wire_code_of(removed.code()), removed.error().message());
  if (removed->refusal != UserRegistry::Refusal::kNone) return refused(*removed);
  json::object out;
  out["id"] = id->str();
  out["deleted"] = true;
  if (deps_.sessions != nullptr) {
    auto not_before = deps_.sessions->revoke(*id, std::nullopt);
    if (!not_before.ok())
      return problem(wire_code_of(not_before.code()),
                     "the user was deleted but its sessions were not revoked (retry the revocation: DELETE "
                     "/v1/users/" +
                         id->str() + "/sessions): " + not_before.error().message());
    out["not_before"] = *not_before;
  }
  return json_answer(200, out);
}

}  // namespace qim::api
