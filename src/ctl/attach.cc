// qimctl send --file and qimctl download (docs/protocol.md "Attachments"): the bytes go between qimctl and
// the object store over the presigned URLs the gateway answers (libcurl, which the project links already
// for push and the S3 tests); only ATTACH, SEND and ATTACHMENT_URL pass through the gateway.
#include <curl/curl.h>
#include <openssl/evp.h>
#include <simdjson.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "ctl/commands.h"
#include "ctl/format.h"
#include "gateway/protocol/json_writer.h"

namespace qim::ctl {

namespace {

constexpr size_t kHashMaxBytes = size_t{16} << 20;  // the server's limit for a declared sha256

std::string fresh_id(const char* prefix) {
  auto ns = std::chrono::system_clock::now().time_since_epoch() / std::chrono::nanoseconds(1);
  return std::string(prefix) + std::to_string(ns) + "-" + std::to_string(::getpid());
}

// The content type to declare for a file name, when --type does not say (the server's default list).
std::string guess_type(const std::string& path) {
  static const std::array<std::pair<const char*, const char*>, 15> kTypes{{
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".webp", "image/webp"},
      {".gif", "image/gif"},
      {".pdf", "application/pdf"},
      {".txt", "text/plain"},
      {".zip", "application/zip"},
      {".mp3", "audio/mpeg"},
      {".ogg", "audio/ogg"},
      {".m4a", "audio/mp4"},
      {".mp4", "video/mp4"},
      {".webm", "video/webm"},
      {".mov", "video/quicktime"},
      {".md", "text/plain"},
  }};
  std::string lower = path;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [ext, type] : kTypes)
    if (lower.ends_with(ext)) return type;
  return "application/octet-stream";
}

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string sha256_hex(const std::string& bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md.data(), &len, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

// Sends `frame` (which carries `ref`) and returns the answer; an ERROR as "<CODE>: <message>".
Result<client::ServerFrame> ask(client::Client& c, std::string frame, const std::string& ref,
                                std::chrono::milliseconds timeout) {
  c.send_text(std::move(frame));
  auto reply = c.wait_ref(ref, timeout);
  if (!reply.ok()) return reply;
  if (reply->type == "ERROR") return Error(Errc::kInvalidArgument, reply->code + ": " + reply->message);
  return reply;
}

struct Http {
  long status = 0;
  std::string body;
};

size_t on_write(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

struct Upload {
  const std::string* bytes;
  size_t at = 0;
};
size_t on_read(char* buf, size_t size, size_t n, void* user) {
  auto* u = static_cast<Upload*>(user);
  size_t take = std::min(size * n, u->bytes->size() - u->at);
  std::copy_n(u->bytes->data() + u->at, take, buf);
  u->at += take;
  return take;
}

// One HTTP request to a presigned URL: a PUT of `put` with `headers`, or (put null) a GET.
Result<Http> http(const std::string& method, const std::string& url,
                  const std::vector<std::pair<std::string, std::string>>& headers, const std::string* put) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> h(curl_easy_init(), curl_easy_cleanup);
  if (!h) return Error(Errc::kTransport, "libcurl: no handle");
  curl_slist* list = nullptr;
  for (const auto& [k, v] : headers) {
    std::string lower = k;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == "content-length" || lower == "host") continue;  // curl sets them: the same values
    list = curl_slist_append(list, (k + ": " + v).c_str());
  }
  list = curl_slist_append(list, "Expect:");  // no 100-continue round trip
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> free_list(list, curl_slist_free_all);
  Http out;
  Upload up{put, 0};
  curl_easy_setopt(h.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &out.body);
  curl_easy_setopt(h.get(), CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);
  if (put != nullptr) {
    curl_easy_setopt(h.get(), CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(h.get(), CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(h.get(), CURLOPT_READDATA, &up);
    curl_easy_setopt(h.get(), CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(put->size()));
    if (method != "PUT") curl_easy_setopt(h.get(), CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  CURLcode rc = curl_easy_perform(h.get());
  if (rc != CURLE_OK) return Error(Errc::kTransport, std::string("HTTP ") + curl_easy_strerror(rc));
  curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &out.status);
  return out;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(Errc::kIo, "cannot read '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return bytes;
}

}  // namespace

int run_send_file(const SendRequest& r, std::ostream& out, std::ostream& err) {
  auto bytes = read_file(r.file);
  if (!bytes.ok()) return fail(err, "send --file", bytes.error());
  if (bytes->empty())
    return fail(err, "send --file", Error(Errc::kInvalidArgument, "'" + r.file + "' is empty"));
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  std::string conversation = r.conversation;
  if (conversation.empty()) {
    // d:<a>:<b>, a before b bytewise (docs/protocol.md "Names").
    const std::string& me = session->auth_ok.user;
    conversation = me < r.to ? "d:" + me + ":" + r.to : "d:" + r.to + ":" + me;
  }
  const std::string name = base_name(r.file);
  const std::string type = r.content_type.empty() ? guess_type(r.file) : r.content_type;
  const std::string sha = bytes->size() <= kHashMaxBytes ? sha256_hex(*bytes) : "";
  const auto timeout = r.connection.request_timeout;

  const std::string aref = fresh_id("ctl-attach-");
  JsonWriter a;
  a.begin_object().field("type", "ATTACH").field("ref", aref).field("conversation", conversation);
  a.field("name", name).field("content_type", type).field("size", static_cast<int64_t>(bytes->size()));
  if (!sha.empty()) a.field("sha256", sha);
  auto ok = ask(*session->client, a.end_object().take(), aref, timeout);
  if (!ok.ok()) return fail(err, "send --file: attach", ok.error());

  simdjson::dom::parser p;
  simdjson::dom::element doc;
  std::string_view id, url, method = "PUT";
  std::vector<std::pair<std::string, std::string>> headers;
  if (p.parse(ok->raw).get(doc) != simdjson::SUCCESS || doc["attachment"].get(id) != simdjson::SUCCESS ||
      doc["upload_url"].get(url) != simdjson::SUCCESS)
    return fail(err, "send --file", Error(Errc::kInvalidArgument, "a malformed ATTACH_OK: " + ok->raw));
  if (doc["method"].get(method) != simdjson::SUCCESS) method = "PUT";
  simdjson::dom::object hs;
  if (doc["headers"].get(hs) == simdjson::SUCCESS) {
    for (auto [k, v] : hs) {
      std::string_view s;
      if (v.get(s) == simdjson::SUCCESS) headers.emplace_back(std::string(k), std::string(s));
    }
  }
  const std::string attachment(id);
  auto put = http(std::string(method), std::string(url), headers, &*bytes);
  if (!put.ok()) return fail(err, "send --file: upload", put.error());
  if (put->status < 200 || put->status >= 300)
    return fail(err, "send --file: upload",
                Error(Errc::kTransport, "the object store answered HTTP " + std::to_string(put->status)));

  const std::string sref = fresh_id("ctl-send-");
  JsonWriter s;
  s.begin_object().field("type", "SEND").field("ref", sref);
  s.field("client_msg_id", r.client_msg_id.empty() ? fresh_id("qimctl-") : r.client_msg_id);
  s.field("conversation", conversation).field("body", r.body);
  s.key("attachments").begin_array().begin_object();
  s.field("attachment", attachment).field("name", name).field("content_type", type);
  s.field("size", static_cast<int64_t>(bytes->size()));
  if (!sha.empty()) s.field("sha256", sha);
  s.end_object().end_array().end_object();
  auto ack = ask(*session->client, s.take(), sref, timeout);
  if (!ack.ok()) return fail(err, "send --file", ack.error());
  out << ack_line(*ack) << " attachment=" << attachment << " size=" << bytes->size() << '\n';
  return 0;
}

int run_download(const DownloadRequest& r, std::ostream& out, std::ostream& err) {
  if (auto c = ConversationId::parse(r.conversation); !c.ok())
    return fail(err, "download --conversation", c.error());
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  const std::string ref = fresh_id("ctl-url-");
  JsonWriter w;
  w.begin_object().field("type", "ATTACHMENT_URL").field("ref", ref).field("conversation", r.conversation);
  w.field("message_id", std::to_string(r.message_id)).field("attachment", r.attachment);
  w.field("thumbnail", r.thumbnail).end_object();
  auto ok = ask(*session->client, w.take(), ref, r.connection.request_timeout);
  if (!ok.ok()) return fail(err, "download", ok.error());
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  std::string_view url;
  if (p.parse(ok->raw).get(doc) != simdjson::SUCCESS || doc["url"].get(url) != simdjson::SUCCESS)
    return fail(err, "download", Error(Errc::kInvalidArgument, "a malformed ATTACHMENT_URL_OK: " + ok->raw));
  auto got = http("GET", std::string(url), {}, nullptr);
  if (!got.ok()) return fail(err, "download", got.error());
  if (got->status != 200)
    return fail(err, "download",
                Error(Errc::kTransport, "the object store answered HTTP " + std::to_string(got->status)));
  if (r.output.empty() || r.output == "-") {
    out << got->body;
    return 0;
  }
  std::ofstream file(r.output, std::ios::binary | std::ios::trunc);
  file << got->body;
  if (!file.flush()) return fail(err, "download -o", Error(Errc::kIo, "cannot write '" + r.output + "'"));
  out << "saved=" << r.output << " size=" << got->body.size() << " sha256=" << sha256_hex(got->body) << '\n';
  return 0;
}

}  // namespace qim::ctl
