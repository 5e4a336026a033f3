#include "client/privacy_fields.h"

#include "gateway/protocol/json_fields.h"
#include "gateway/protocol/json_writer.h"

namespace qim::client {

namespace {

using json_fields::str;
using json_fields::u64;
using simdjson::dom::element;
using simdjson::dom::object;

JsonWriter start(std::string_view type, std::string_view ref) {
  JsonWriter w;
  w.begin_object().field("type", type);
  if (!ref.empty()) w.field("ref", ref);
  return w;
}

}  // namespace

std::string block_frame(std::string_view user, bool blocked, std::string_view ref) {
  auto w = start(blocked ? "BLOCK" : "UNBLOCK", ref);
  w.field("user", user);
  return w.end_object().take();
}

std::string blocks_frame(std::string_view ref) {
  return start("BLOCKS", ref).end_object().take();
}

std::string mute_frame(std::string_view conversation, bool muted, std::optional<int64_t> until_ms,
                       std::string_view ref) {
  auto w = start(muted ? "MUTE" : "UNMUTE", ref);
  w.field("conversation", conversation);
  if (muted && until_ms) w.key("until").int64(*until_ms);
  return w.end_object().take();
}

std::string delete_for_me_frame(std::string_view conversation, std::optional<uint64_t> message_id,
                                std::string_view ref) {
  auto w = start("DELETE_FOR_ME", ref);
  w.field("conversation", conversation);
  if (message_id) w.key("message_id").uint64_as_string(*message_id);
  return w.end_object().take();
}

void read_privacy_fields(const object& o, ServerFrame& f) {
  bool b = false;
  if (o.at_key("blocked").get_bool().get(b) == simdjson::SUCCESS) f.blocked = b;
  if (o.at_key("muted").get_bool().get(b) == simdjson::SUCCESS) f.muted = b;
  int64_t until = 0;
  if (o.at_key("muted_until").get_int64().get(until) == simdjson::SUCCESS) f.muted_until = until;
  f.through = u64(o, "through");
  simdjson::dom::array list;
  if (f.type == "BLOCKS_LIST" && o.at_key("users").get_array().get(list) == simdjson::SUCCESS) {
    for (element u : list) {
      std::string_view s;
      if (u.get_string().get(s) == simdjson::SUCCESS) f.users.emplace_back(s);
    }
  }
}

}  // namespace qim::client
