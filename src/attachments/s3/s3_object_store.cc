#include "attachments/s3/s3_object_store.h"

#include <charconv>
#include <ctime>
#include <string>
#include <utility>

#include "attachments/s3/s3_http.h"
#include "attachments/s3/sign/qim_s3_sign.h"

namespace qim::attachments {
namespace {

using s3::HttpClient;
using s3::HttpRequest;
using s3::HttpResponse;

constexpr std::chrono::seconds kMaxTtl{7 * 24 * 3600};  // S3's bound on X-Amz-Expires
constexpr size_t kMaxKeyBytes = 512;
constexpr uint64_t kMaxErrorBody = 64 << 10;  // the XML error of a refusal
constexpr uint64_t kMaxListBody = 16 << 20;   // a 1000-key listing is ~350 KB

// A string the signing library allocated; released with it.
struct RustString {
  char* p = nullptr;
  RustString() = default;
  RustString(const RustString&) = delete;
  RustString& operator=(const RustString&) = delete;
  ~RustString() { qim_s3_string_free(p); }
  std::string str() const { return p ? std::string(p) : std::string(); }
};

struct SignerDeleter {
  void operator()(qim_s3_signer* s) const { qim_s3_signer_free(s); }
};
using SignerPtr = std::unique_ptr<qim_s3_signer, SignerDeleter>;

struct ListingDeleter {
  void operator()(qim_s3_listing* l) const { qim_s3_listing_free(l); }
};

Result<SignerPtr> make_signer(const S3Config& c, const std::string& endpoint, std::string_view variable) {
  RustString err;
  SignerPtr s(qim_s3_signer_new(endpoint.c_str(), c.region.c_str(), c.bucket.c_str(), c.access_key.c_str(),
                                c.secret_key.c_str(), c.path_style ? 1 : 0, &err.p));
  if (!s) return Error(Errc::kConfig, std::string(variable) + ": " + err.str());
  return s;
}

Status check_key(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyBytes) {
    return Error(Errc::kInvalidArgument, "object key of " + std::to_string(key.size()) + " bytes (1-512)");
  }
  for (char ch : key) {
    if (ch <= ' ' || ch > '~')
      return Error(Errc::kInvalidArgument,
                   "object key '" + std::string(key) + "' is not printable ASCII without spaces");
  }
  return ok_status();
}

Status check_ttl(std::chrono::seconds ttl) {
  if (ttl.count() <= 0 || ttl > kMaxTtl) {
    return Error(Errc::kInvalidArgument, "ttl " + std::to_string(ttl.count()) + " s outside (0, 7 days]");
  }
  return ok_status();
}

// "<Code>AccessDenied</Code>" of an S3 error body, for the message; the body's start when there is none.
std::string s3_error_code(const std::string& body) {
  auto b = body.find("<Code>");
  auto e = body.find("</Code>");
  if (b != std::string::npos && e != std::string::npos && e > b) return body.substr(b + 6, e - b - 6);
  return body.substr(0, 120);
}

// "Sat, 05 Dec 2026 22:00:00 GMT" (an HTTP date) in ms since the epoch; 0 when unreadable.
int64_t http_date_ms(const std::string* value) {
  if (!value) return 0;
  std::tm tm{};
  if (!strptime(value->c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm)) return 0;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

class S3ObjectStore final : public ObjectStore {
 public:
  S3ObjectStore(S3Config config, S3ClientOptions options, SignerPtr internal, SignerPtr public_signer)
      : config_(std::move(config)),
        options_(options),
        internal_(std::move(internal)),
        public_(std::move(public_signer)),
        http_(options.timeout) {}

  Result<std::string> presign_put(std::string_view key, uint64_t size, std::string_view content_type,
                                  std::chrono::seconds ttl) override {
    QIM_RETURN_IF_ERROR(check_key(key));
    QIM_RETURN_IF_ERROR(check_ttl(ttl));
    if (content_type.empty()) return Error(Errc::kInvalidArgument, "presign_put: empty content type");
    return sign(public_.get(), QIM_S3_PUT, key, ttl, content_type, static_cast<int64_t>(size));
  }

  Result<std::string> presign_get(std::string_view key, std::chrono::seconds ttl) override {
    QIM_RETURN_IF_ERROR(check_key(key));
    QIM_RETURN_IF_ERROR(check_ttl(ttl));
    return sign(public_.get(), QIM_S3_GET, key, ttl, {}, -1);
  }

  Result<std::optional<ObjectInfo>> head(std::string_view key) override {
    QIM_RETURN_IF_ERROR(check_key(key));
    QIM_ASSIGN_OR_RETURN(auto url, sign(internal_.get(), QIM_S3_HEAD, key, options_.own_request_ttl, {}, -1));
    QIM_ASSIGN_OR_RETURN(auto res, send("HEAD", url, {}, "", 0, key));
    if (res.status == 404) return std::optional<ObjectInfo>();
    if (res.status != 200) return refused("HEAD", key, res);
    ObjectInfo info;
    const auto* len = res.header("content-length");
    if (!len || std::from_chars(len->data(), len->data() + len->size(), info.size).ec != std::errc()) {
      return Error(Errc::kTransport, "HEAD of object '" + std::string(key) + "' in " + where() +
                                         ": the answer has no readable Content-Length");
    }
    if (const auto* type = res.header("content-type")) info.content_type = *type;
    info.last_modified_ms = http_date_ms(res.header("last-modified"));
    return std::optional<ObjectInfo>(std::move(info));
  }

  Result<std::string> get(std::string_view key, uint64_t max_bytes) override {
    QIM_RETURN_IF_ERROR(check_key(key));
    QIM_ASSIGN_OR_RETURN(auto url, sign(internal_.get(), QIM_S3_GET, key, options_.own_request_ttl, {}, -1));
    auto res = send("GET", url, {}, "", std::max(max_bytes, kMaxErrorBody), key);
    if (!res.ok()) return res.error();
    if (res->status == 404)
      return Error(Errc::kNotFound, "no object '" + std::string(key) + "' in " + where());
    if (res->status != 200) return refused("GET", key, *res);
    if (res->body.size() > max_bytes) {
      return Error(Errc::kResourceExhausted, "object '" + std::string(key) + "' is larger than " +
                                                 std::to_string(max_bytes) + " bytes");
    }
    return std::move(res->body);
  }

  Status put(std::string_view key, std::string_view content_type, std::string_view bytes) override {
    QIM_RETURN_IF_ERROR(check_key(key));
    QIM_ASSIGN_OR_RETURN(auto url, sign(internal_.get(), QIM_S3_PUT, key, options_.own_request_ttl,
                                        content_type, static_cast<int64_t>(bytes.size())));
    std::vector<std::pair<std::string, std::string>> headers;
    if (!content_type.empty()) headers.emplace_back("Content-Type", std::string(content_type));
    QIM_ASSIGN_OR_RETURN(auto res, send("PUT", url, std::move(headers), bytes, kMaxErrorBody, key));
    if (res.status != 200) return refused("PUT", key, res);
    return ok_status();
  }

  Status remove(std::string_view key) override {
    QIM_RETURN_IF_ERROR(check_key(key));
    QIM_ASSIGN_OR_RETURN(auto url,
                         sign(internal_.get(), QIM_S3_DELETE, key, options_.own_request_ttl, {}, -1));
    QIM_ASSIGN_OR_RETURN(auto res, send("DELETE", url, {}, "", kMaxErrorBody, key));
    // S3 answers 204 for a missing key too; 404 from a store that does not is the same outcome.
    if (res.status != 204 && res.status != 200 && res.status != 404) return refused("DELETE", key, res);
    return ok_status();
  }

  Result<std::vector<ListedObject>> list(std::string_view prefix, std::string_view start_after,
                                         uint32_t limit) override {
    std::vector<ListedObject> out;
    if (limit == 0) return out;
    std::string after(start_after);
    const std::string pre(prefix);
    // A store may answer fewer keys than asked (S3: at most 1000 a page): ask again after the last one.
    while (out.size() < limit) {
      const auto want = static_cast<uint32_t>(std::min<size_t>(limit - out.size(), 1000));
      RustString err;
      RustString url{};
      url.p = qim_s3_presign_list(internal_.get(), pre.c_str(), after.c_str(), want,
                                  static_cast<uint64_t>(options_.own_request_ttl.count()), &err.p);
      if (!url.p) return Error(Errc::kInvalidArgument, "listing '" + pre + "': " + err.str());
      QIM_ASSIGN_OR_RETURN(auto res, send("GET", url.str(), {}, "", kMaxListBody, "(list " + pre + ")"));
      if (res.status != 200) return refused("LIST", "(prefix " + pre + ")", res);
      std::unique_ptr<qim_s3_listing, ListingDeleter> listing(
          qim_s3_parse_list(reinterpret_cast<const uint8_t*>(res.body.data()), res.body.size(), &err.p));
      if (!listing) return Error(Errc::kTransport, "listing '" + pre + "' in " + where() + ": " + err.str());
      const size_t n = qim_s3_listing_len(listing.get());
      for (size_t i = 0; i < n && out.size() < limit; ++i) {
        ListedObject o;
        o.key = qim_s3_listing_get(listing.get(), i, &o.size, &o.last_modified_ms);
        out.push_back(std::move(o));
      }
      if (n == 0 || !qim_s3_listing_truncated(listing.get())) break;
      after = out.back().key;
    }
    return out;
  }

 private:
  std::string where() const { return "bucket " + config_.bucket + " at " + config_.endpoint; }

  Result<std::string> sign(const qim_s3_signer* signer, int method, std::string_view key,
                           std::chrono::seconds ttl, std::string_view content_type, int64_t length) {
    const std::string k(key);
    const std::string type(content_type);
    RustString err;
    RustString url;
    url.p = qim_s3_presign(signer, method, k.c_str(), static_cast<uint64_t>(ttl.count()),
                           type.empty() ? nullptr : type.c_str(), length, &err.p);
    if (!url.p) return Error(Errc::kInvalidArgument, "signing for object '" + k + "': " + err.str());
    return url.str();
  }

  Result<HttpResponse> send(std::string_view method, const std::string& url,
                            std::vector<std::pair<std::string, std::string>> headers, std::string_view body,
                            uint64_t max_body, std::string_view key) {
    HttpRequest req{
        .method = method, .url = url, .headers = std::move(headers), .body = body, .max_body = max_body};
    auto res = http_.send(req);
    if (!res.ok()) {
      return Error(res.code(), std::string(method) + " of object '" + std::string(key) + "' in " + where() +
                                   ": " + res.error().message());
    }
    return res;
  }

  Error refused(std::string_view method, std::string_view key, const HttpResponse& res) const {
    const auto code = res.status == 403 ? Errc::kPermissionDenied : Errc::kTransport;
    return Error(code, std::string(method) + " of object '" + std::string(key) + "' in " + where() +
                           ": the store answered " + std::to_string(res.status) + " " +
                           s3_error_code(res.body));
  }

  const S3Config config_;
  const S3ClientOptions options_;
  SignerPtr internal_;
  SignerPtr public_;
  HttpClient http_;
};

}  // namespace

Result<std::unique_ptr<ObjectStore>> open_s3_object_store(const S3Config& config, S3ClientOptions options) {
  if (config.endpoint.empty()) return Error(Errc::kConfig, "QIM_S3_ENDPOINT: empty");
  if (config.bucket.empty()) return Error(Errc::kConfig, "QIM_S3_BUCKET: empty");
  if (config.access_key.empty() || config.secret_key.empty()) {
    return Error(Errc::kConfig, "QIM_S3_ACCESS_KEY / QIM_S3_SECRET_KEY: empty (requests must be signed)");
  }
  if (options.own_request_ttl.count() <= 0 || options.own_request_ttl > kMaxTtl ||
      options.timeout.count() <= 0) {
    return Error(Errc::kConfig, "S3 client options: timeout or own_request_ttl out of range");
  }
  QIM_ASSIGN_OR_RETURN(auto internal, make_signer(config, config.endpoint, "QIM_S3_ENDPOINT"));
  const std::string& pub = config.public_endpoint.empty() ? config.endpoint : config.public_endpoint;
  QIM_ASSIGN_OR_RETURN(auto public_signer, make_signer(config, pub, "QIM_S3_PUBLIC_ENDPOINT"));
  return std::unique_ptr<ObjectStore>(
      std::make_unique<S3ObjectStore>(config, options, std::move(internal), std::move(public_signer)));
}

}  // namespace qim::attachments
