// The S3 object store against a real SeaweedFS (scripts/engines/objstore.sh; scripts/test.sh starts it and
// sets QIM_TEST_S3_*). The client side of presigned URLs is libcurl, as a browser or an app would be: not
// the store's own HTTP code.

#include <curl/curl.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "attachments/s3/s3_object_store.h"
#include "attachments/s3/s3_options.h"

namespace qim::attachments {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

// ---- a plain HTTP client (libcurl)
// -------------------------------------------------------------------------

struct CurlResult {
  long status = 0;
  std::string body;
  std::string error;  // curl's own failure, empty when an answer came
};

size_t append_body(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

struct Hasher {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  Hasher() { EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr); }
  ~Hasher() { EVP_MD_CTX_free(ctx); }
  void add(const void* p, size_t n) { EVP_DigestUpdate(ctx, p, n); }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_DigestFinal_ex(ctx, md, &len);
    std::string out;
    char buf[3];
    for (unsigned i = 0; i < len; ++i) {
      std::snprintf(buf, sizeof buf, "%02x", md[i]);
      out += buf;
    }
    return out;
  }
};

size_t hash_body(char* data, size_t size, size_t n, void* out) {
  static_cast<Hasher*>(out)->add(data, size * n);
  return size * n;
}

std::string sha256(std::string_view bytes) {
  Hasher h;
  h.add(bytes.data(), bytes.size());
  return h.hex();
}

// A request with libcurl. `upload`: a FILE* streamed as the body of a PUT (size `upload_size`), or `body`.
// `hasher`: the answer body is hashed instead of kept.
CurlResult curl_request(const std::string& method, const std::string& url,
                        const std::vector<std::string>& headers, const std::string* body = nullptr,
                        FILE* upload = nullptr, curl_off_t upload_size = 0, Hasher* hasher = nullptr) {
  CurlResult r;
  CURL* c = curl_easy_init();
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  // No "Expect: 100-continue": the store answers the headers of a refused PUT either way.
  list = curl_slist_append(list, "Expect:");
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
  if (hasher) {
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, hash_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, hasher);
  } else {
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, append_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  }
  if (method == "PUT") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    if (upload) {
      curl_easy_setopt(c, CURLOPT_READDATA, upload);  // the default read function fread()s it
      curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, upload_size);
    } else {
      // The body from memory, through a FILE over it.
      FILE* f = fmemopen(const_cast<char*>(body->data()), body->size(), "rb");
      curl_easy_setopt(c, CURLOPT_READDATA, f);
      curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body->size()));
      CURLcode rc = curl_easy_perform(c);
      std::fclose(f);
      if (rc != CURLE_OK) r.error = curl_easy_strerror(rc);
      curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
      curl_slist_free_all(list);
      curl_easy_cleanup(c);
      return r;
    }
  } else if (method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (method != "GET") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) r.error = curl_easy_strerror(rc);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(list);
  curl_easy_cleanup(c);
  return r;
}

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (auto& ch : s) ch = static_cast<char>(gen());
  return s;
}

// ---- the fixture ---------------------------------------------------------------------------------------

class S3ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto endpoint = env("QIM_TEST_S3_ENDPOINT");
    if (!endpoint) {
      GTEST_SKIP() << "QIM_TEST_S3_ENDPOINT is unset: no S3 store to test against (scripts/test.sh starts "
                      "SeaweedFS with scripts/engines/objstore.sh and sets it)";
    }
    config_.endpoint = *endpoint;
    config_.public_endpoint = *endpoint;
    config_.bucket = env("QIM_TEST_S3_BUCKET").value_or("qim-test");
    config_.access_key = env("QIM_TEST_S3_ACCESS_KEY").value_or("");
    config_.secret_key = env("QIM_TEST_S3_SECRET_KEY").value_or("");
    auto store = open_s3_object_store(config_);
    ASSERT_TRUE(store.ok()) << store.error().to_string();
    store_ = std::move(store).value();
    // Every test its own key space: the bucket is shared by the run (and by earlier runs).
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    prefix_ = std::string("t/") + info->name() + "-" +
              std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + "/";
  }

  S3Config config_;
  std::unique_ptr<ObjectStore> store_;
  std::string prefix_;
};

TEST_F(S3ObjectStoreTest, PresignedPutThenPresignedGetGiveTheSameBytes) {
  const std::string key = prefix_ + "photo.jpg";
  const std::string bytes = random_bytes(300'000, 1);
  auto put_url = store_->presign_put(key, bytes.size(), "image/jpeg", std::chrono::seconds(300));
  ASSERT_TRUE(put_url.ok()) << put_url.error().to_string();
  auto put = curl_request("PUT", *put_url, {"Content-Type: image/jpeg"}, &bytes);
  ASSERT_EQ(put.error, "");
  ASSERT_EQ(put.status, 200) << put.body;

  auto get_url = store_->presign_get(key, std::chrono::seconds(300));
  ASSERT_TRUE(get_url.ok()) << get_url.error().to_string();
  auto got = curl_request("GET", *get_url, {});
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(sha256(got.body), sha256(bytes));

  auto info = store_->head(key);
  ASSERT_TRUE(info.ok()) << info.error().to_string();
  ASSERT_TRUE(info->has_value());
  EXPECT_EQ((*info)->size, bytes.size());
  EXPECT_EQ((*info)->content_type, "image/jpeg");
  EXPECT_GT((*info)->last_modified_ms, 0);
}

TEST_F(S3ObjectStoreTest, PresignedPutRefusesAnotherSizeOrType) {
  const std::string key = prefix_ + "doc.pdf";
  const std::string bytes = random_bytes(1000, 2);
  auto url = store_->presign_put(key, bytes.size(), "application/pdf", std::chrono::seconds(300));
  ASSERT_TRUE(url.ok()) << url.error().to_string();

  const std::string longer = bytes + "x";
  auto bigger = curl_request("PUT", *url, {"Content-Type: application/pdf"}, &longer);
  EXPECT_EQ(bigger.status, 403) << bigger.error << bigger.body;
  auto other_type = curl_request("PUT", *url, {"Content-Type: text/html"}, &bytes);
  EXPECT_EQ(other_type.status, 403) << other_type.error << other_type.body;
  auto stored = store_->head(key);
  ASSERT_TRUE(stored.ok()) << stored.error().to_string();
  EXPECT_FALSE(stored->has_value()) << "a refused upload left an object";

  // The very same URL with the signed size and type is accepted: the refusals above were about them.
  auto right = curl_request("PUT", *url, {"Content-Type: application/pdf"}, &bytes);
  EXPECT_EQ(right.status, 200) << right.error << right.body;
}

TEST_F(S3ObjectStoreTest, ExpiredUrlIsRefused) {
  const std::string key = prefix_ + "short";
  ASSERT_TRUE(store_->put(key, "text/plain", "soon gone").ok());
  auto url = store_->presign_get(key, std::chrono::seconds(1));
  ASSERT_TRUE(url.ok()) << url.error().to_string();
  // Valid for a second, then refused: poll (bounded) until the store refuses it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  long status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    status = curl_request("GET", *url, {}).status;
    if (status == 403) break;
    ASSERT_EQ(status, 200) << "neither served nor refused";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(status, 403) << "a URL signed for 1 s still served after 30 s";
}

TEST_F(S3ObjectStoreTest, UnsignedRequestsAreRefused) {
  const std::string key = prefix_ + "private";
  ASSERT_TRUE(store_->put(key, "text/plain", "secret").ok());
  const std::string plain = config_.endpoint + "/" + config_.bucket + "/" + key;
  auto get = curl_request("GET", plain, {});
  EXPECT_EQ(get.error, "");
  EXPECT_EQ(get.status, 403) << get.body;
  const std::string body = "overwrite";
  auto put = curl_request("PUT", plain, {"Content-Type: text/plain"}, &body);
  EXPECT_EQ(put.status, 403) << put.body;
  auto bytes = store_->get(key, 100);
  ASSERT_TRUE(bytes.ok()) << bytes.error().to_string();
  EXPECT_EQ(*bytes, "secret");
}

TEST_F(S3ObjectStoreTest, HeadGetPutRemove) {
  const std::string key = prefix_ + "thumb.webp";
  auto none = store_->head(key);
  ASSERT_TRUE(none.ok()) << none.error().to_string();
  EXPECT_FALSE(none->has_value());
  auto missing = store_->get(key, 100);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.code(), Errc::kNotFound);

  const std::string bytes = random_bytes(5000, 3);
  auto put = store_->put(key, "image/webp", bytes);
  ASSERT_TRUE(put.ok()) << put.error().to_string();
  auto info = store_->head(key);
  ASSERT_TRUE(info.ok() && info->has_value());
  EXPECT_EQ((*info)->size, 5000u);
  EXPECT_EQ((*info)->content_type, "image/webp");
  auto got = store_->get(key, 5000);
  ASSERT_TRUE(got.ok()) << got.error().to_string();
  EXPECT_EQ(*got, bytes);
  auto too_big = store_->get(key, 4999);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.code(), Errc::kResourceExhausted) << too_big.error().to_string();

  ASSERT_TRUE(store_->remove(key).ok());
  auto gone = store_->head(key);
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
  auto again = store_->remove(key);  // a missing object: still success
  EXPECT_TRUE(again.ok()) << again.error().to_string();
  auto never = store_->remove(prefix_ + "never-was");
  EXPECT_TRUE(never.ok()) << never.error().to_string();
}

TEST_F(S3ObjectStoreTest, ListPagesWithStartAfter) {
  std::vector<std::string> keys;
  for (int i = 0; i < 7; ++i) keys.push_back(prefix_ + "a/" + std::to_string(i));
  for (const auto& k : keys) ASSERT_TRUE(store_->put(k, "text/plain", k).ok());
  ASSERT_TRUE(store_->put(prefix_ + "b/other", "text/plain", "x").ok());

  std::vector<std::string> seen;
  std::string after;
  for (int page = 0; page < 10; ++page) {
    auto got = store_->list(prefix_ + "a/", after, 3);
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    ASSERT_LE(got->size(), 3u);
    if (got->empty()) break;
    for (const auto& o : *got) {
      seen.push_back(o.key);
      EXPECT_EQ(o.size, o.key.size());
      EXPECT_GT(o.last_modified_ms, 0);
    }
    after = got->back().key;
  }
  EXPECT_EQ(seen, keys);
  auto all = store_->list(prefix_, "", 100);
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  EXPECT_EQ(all->size(), 8u);
  auto none = store_->list(prefix_ + "zzz", "", 10);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(S3ObjectStoreTest, BadKeysAndTtlsAreRefusedBeforeSigning) {
  EXPECT_EQ(store_->presign_get("", std::chrono::seconds(10)).code(), Errc::kInvalidArgument);
  EXPECT_EQ(store_->presign_get("a b", std::chrono::seconds(10)).code(), Errc::kInvalidArgument);
  EXPECT_EQ(store_->presign_get(std::string(513, 'k'), std::chrono::seconds(10)).code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(store_->presign_get("k", std::chrono::seconds(0)).code(), Errc::kInvalidArgument);
  EXPECT_EQ(store_->presign_put("k", 1, "a/b", std::chrono::hours(24 * 7 + 1)).code(),
            Errc::kInvalidArgument);
}

TEST_F(S3ObjectStoreTest, StoreDownIsATransportErrorNamingTheStore) {
  S3Config down = config_;
  down.endpoint = "http://127.0.0.1:1";  // nothing listens on port 1
  auto store = open_s3_object_store(down, {.timeout = std::chrono::milliseconds(3000)});
  ASSERT_TRUE(store.ok());
  auto r = (*store)->head("k");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Errc::kTransport);
  EXPECT_NE(r.error().message().find("127.0.0.1:1"), std::string::npos) << r.error().message();
}

TEST_F(S3ObjectStoreTest, HundredMebibyteUploadThroughAPresignedPut) {
  constexpr size_t kSize = 100u << 20;
  // The file the "client" uploads, streamed from disk.
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  Hasher written;
  std::mt19937 gen(4);
  std::string chunk(1 << 20, '\0');
  for (size_t done = 0; done < kSize; done += chunk.size()) {
    for (auto& ch : chunk) ch = static_cast<char>(gen());
    written.add(chunk.data(), chunk.size());
    ASSERT_EQ(std::fwrite(chunk.data(), 1, chunk.size(), f), chunk.size());
  }
  std::rewind(f);
  const std::string key = prefix_ + "video.mp4";
  auto url = store_->presign_put(key, kSize, "video/mp4", std::chrono::seconds(600));
  ASSERT_TRUE(url.ok()) << url.error().to_string();
  const auto t0 = std::chrono::steady_clock::now();
  auto put =
      curl_request("PUT", *url, {"Content-Type: video/mp4"}, nullptr, f, static_cast<curl_off_t>(kSize));
  std::fclose(f);
  ASSERT_EQ(put.error, "");
  ASSERT_EQ(put.status, 200) << put.body;
  const auto upload_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  std::printf("100 MiB presigned PUT took %lld ms\n", static_cast<long long>(upload_ms));

  auto info = store_->head(key);
  ASSERT_TRUE(info.ok() && info->has_value());
  EXPECT_EQ((*info)->size, kSize);
  auto get_url = store_->presign_get(key, std::chrono::seconds(600));
  ASSERT_TRUE(get_url.ok());
  Hasher read;
  auto got = curl_request("GET", *get_url, {}, nullptr, nullptr, 0, &read);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(read.hex(), written.hex());
  EXPECT_TRUE(store_->remove(key).ok());
}

}  // namespace
}  // namespace qim::attachments
