#include "attachments/message_body.h"

#include <simdjson.h>

#include "gateway/protocol/json_writer.h"

namespace qim::attachments {

std::string encode_message_body(const MessageBody& body) {
  JsonWriter w;
  w.begin_object().field("qim", "attachments").field("text", body.text).key("attachments").begin_array();
  for (const StoredAttachment& a : body.attachments) {
    w.begin_object()
        .field("attachment", a.ref.attachment)
        .field("kind", a.kind)
        .field("name", a.ref.name)
        .field("content_type", a.ref.content_type)
        .key("size")
        .uint64(a.ref.size);
    if (a.ref.sha256) w.field("sha256", *a.ref.sha256);
    if (a.width > 0) w.key("width").uint64(a.width).key("height").uint64(a.height);
    if (a.thumbnail) w.field("thumbnail", true);
    w.end_object();
  }
  w.end_array().end_object();
  return w.take();
}

std::optional<MessageBody> decode_message_body(std::string_view text) {
  if (!looks_like_attachment_body(text)) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size()).get(root) != simdjson::SUCCESS) return std::nullopt;
  MessageBody out;
  std::string_view s;
  if (root["text"].get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
  out.text = std::string(s);
  simdjson::dom::array list;
  if (root["attachments"].get_array().get(list) != simdjson::SUCCESS) return std::nullopt;
  for (simdjson::dom::element e : list) {
    StoredAttachment a;
    auto str = [&](const char* k, std::string& into) {
      std::string_view v;
      if (e[k].get_string().get(v) != simdjson::SUCCESS) return false;
      into = std::string(v);
      return true;
    };
    if (!str("attachment", a.ref.attachment) || !str("kind", a.kind) || !str("name", a.ref.name) ||
        !str("content_type", a.ref.content_type) ||
        e["size"].get_uint64().get(a.ref.size) != simdjson::SUCCESS)
      return std::nullopt;
    std::string sha;
    if (str("sha256", sha)) a.ref.sha256 = sha;
    uint64_t d = 0;
    if (e["width"].get_uint64().get(d) == simdjson::SUCCESS) a.width = static_cast<uint32_t>(d);
    if (e["height"].get_uint64().get(d) == simdjson::SUCCESS) a.height = static_cast<uint32_t>(d);
    bool thumb = false;
    if (e["thumbnail"].get_bool().get(thumb) == simdjson::SUCCESS) a.thumbnail = thumb;
    out.attachments.push_back(std::move(a));
  }
  return out;
}

std::string edited_body(std::string_view original, std::string_view new_text) {
  auto parsed = decode_message_body(original);
  if (!parsed) return std::string(new_text);
  parsed->text = std::string(new_text);
  return encode_message_body(*parsed);
}

}  // namespace qim::attachments
