#include "gateway/protocol/attachment_frames.h"

#include <simdjson.h>

#include "gateway/protocol/json_writer.h"

namespace qim {

namespace {

using simdjson::dom::element;
using simdjson::dom::object;

std::variant<std::string_view, std::string> str(const object& o, std::string_view field, bool required) {
  element e;
  if (o.at_key(field).get(e) != simdjson::SUCCESS) {
    if (required) return "field '" + std::string(field) + "' is required";
    return std::string_view();
  }
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS)
    return "field '" + std::string(field) + "' must be a string";
  return s;
}

std::variant<uint64_t, std::string> size_field(const object& o) {
  element e;
  uint64_t u = 0;
  if (o.at_key("size").get(e) != simdjson::SUCCESS) return std::string("field 'size' is required");
  if (e.get_uint64().get(u) != simdjson::SUCCESS)
    return std::string("field 'size' must be a positive integer");
  return u;
}

// Fills the declaration shared by ATTACH and a SEND's entry; an error message or empty.
std::string read_declaration(const object& o, std::string& name, std::string& type, uint64_t& size,
                             std::optional<std::string>& sha256) {
  auto n = str(o, "name", true);
  if (auto* err = std::get_if<std::string>(&n)) return *err;
  name = std::string(std::get<0>(n));
  auto t = str(o, "content_type", true);
  if (auto* err = std::get_if<std::string>(&t)) return *err;
  type = std::string(std::get<0>(t));
  auto s = size_field(o);
  if (auto* err = std::get_if<std::string>(&s)) return *err;
  size = std::get<0>(s);
  element e;
  if (o.at_key("sha256").get(e) == simdjson::SUCCESS) {
    std::string_view h;
    if (e.get_string().get(h) != simdjson::SUCCESS) return "field 'sha256' must be a string";
    sha256 = std::string(h);
  }
  return {};
}

std::variant<ConversationId, std::string> conversation_field(const object& o) {
  auto c = str(o, "conversation", true);
  if (auto* err = std::get_if<std::string>(&c)) return *err;
  auto id = ConversationId::parse(std::get<0>(c));
  if (!id.ok()) return "field 'conversation': " + id.error().message();
  return std::move(id).value();
}

}  // namespace

bool is_attachment_frame_type(std::string_view type) {
  return type == "ATTACH" || type == "ATTACHMENT_URL";
}

std::variant<AttachmentFrame, std::string> parse_attachment_frame(std::string_view type, const object& o) {
  auto c = conversation_field(o);
  if (auto* err = std::get_if<std::string>(&c)) return *err;
  if (type == "ATTACH") {
    AttachFrame f;
    f.conversation = std::get<0>(std::move(c));
    std::string err =
        read_declaration(o, f.request.name, f.request.content_type, f.request.size, f.request.sha256);
    if (!err.empty()) return err;
    // Optional: the client's id of this upload (its rules are the attachment service's).
    auto cu = str(o, "client_upload_id", false);
    if (auto* bad = std::get_if<std::string>(&cu)) return *bad;
    element present;
    if (o.at_key("client_upload_id").get(present) == simdjson::SUCCESS)
      f.request.client_upload_id = std::string(std::get<0>(cu));
    return AttachmentFrame{std::move(f)};
  }
  AttachmentUrlFrame f;
  f.conversation = std::get<0>(std::move(c));
  element e;
  uint64_t id = 0;
  std::string_view text;
  if (o.at_key("message_id").get(e) != simdjson::SUCCESS)
    return std::string("field 'message_id' is required");
  if (e.get_uint64().get(id) != simdjson::SUCCESS) {
    if (e.get_string().get(text) != simdjson::SUCCESS || text.empty() || text.size() > 20 ||
        text.find_first_not_of("0123456789") != std::string_view::npos)
      return std::string("field 'message_id' must be an unsigned 64-bit integer or its decimal string");
    id = std::stoull(std::string(text));
  }
  f.message_id = MessageId{id};
  auto a = str(o, "attachment", true);
  if (auto* err = std::get_if<std::string>(&a)) return *err;
  f.attachment = std::string(std::get<0>(a));
  if (o.at_key("thumbnail").get(e) == simdjson::SUCCESS && e.get_bool().get(f.thumbnail) != simdjson::SUCCESS)
    return std::string("field 'thumbnail' must be true or false");
  return AttachmentFrame{std::move(f)};
}

std::variant<std::vector<attachments::AttachmentRef>, std::string> parse_attachment_refs(const element& e) {
  simdjson::dom::array list;
  if (e.get_array().get(list) != simdjson::SUCCESS)
    return std::string("field 'attachments' must be an array of objects");
  std::vector<attachments::AttachmentRef> out;
  for (element item : list) {
    if (out.size() == attachments::kMaxAttachmentsPerMessage)
      return "field 'attachments' holds more than " + std::to_string(attachments::kMaxAttachmentsPerMessage) +
             " entries";
    object o;
    if (item.get_object().get(o) != simdjson::SUCCESS)
      return std::string("field 'attachments' must be an array of objects");
    attachments::AttachmentRef r;
    auto id = str(o, "attachment", true);
    if (auto* err = std::get_if<std::string>(&id)) return "attachments: " + *err;
    r.attachment = std::string(std::get<0>(id));
    std::string err = read_declaration(o, r.name, r.content_type, r.size, r.sha256);
    if (!err.empty()) return "attachments: " + err;
    out.push_back(std::move(r));
  }
  if (out.empty()) return std::string("field 'attachments' must not be empty (omit it instead)");
  return out;
}

std::string encode_attach_ok(const std::string& ref, const ConversationId& conversation,
                             const std::string& attachment, const std::string& upload_url,
                             const std::string& method,
                             const std::vector<std::pair<std::string, std::string>>& headers,
                             int64_t expires_at_ms) {
  JsonWriter w;
  w.begin_object().field("type", "ATTACH_OK");
  if (!ref.empty()) w.field("ref", ref);
  w.field("conversation", conversation.str())
      .field("attachment", attachment)
      .field("upload_url", upload_url)
      .field("method", method)
      .key("headers")
      .begin_object();
  for (const auto& [k, v] : headers) w.field(k, v);
  w.end_object().field("expires_at", expires_at_ms).end_object();
  return w.take();
}

std::string encode_attachment_url_ok(const std::string& ref, const AttachmentUrlFrame& f,
                                     const std::string& url, int64_t expires_at_ms) {
  JsonWriter w;
  w.begin_object().field("type", "ATTACHMENT_URL_OK");
  if (!ref.empty()) w.field("ref", ref);
  w.field("conversation", f.conversation.str())
      .key("message_id")
      .uint64_as_string(f.message_id.value)
      .field("attachment", f.attachment)
      .field("thumbnail", f.thumbnail)
      .field("url", url)
      .field("expires_at", expires_at_ms)
      .end_object();
  return w.take();
}

}  // namespace qim
