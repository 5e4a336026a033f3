// The orphan sweep on a running `qim up` with a real object store (issue 41; docs/protocol.md "Attachments",
// "Lifecycle"): with QIM_ATTACH_ORPHAN_AGE_MS and QIM_ATTACH_SWEEP_INTERVAL_MS made short, an upload no SEND
// referenced is deleted by the sweep, and a sent image (its object, its thumbnail, its marker) is kept past
// that age; checked by listing the bucket through the S3 API itself, and on /metrics.
//
// Its own `qim up` sweeps a bucket of its own (QIM_TEST_S3_SWEEP_BUCKET, which scripts/test.sh's objstore
// group creates beside QIM_S3_BUCKET), so the short age never reaches other tests' uploads. It needs the
// store's QIM_S3_* (the e2e phase that runs the attachment scenarios sets them) and runs on the single
// deployment (`qim up`) only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <thread>

#include "attachments/s3/s3_object_store.h"
#include "attachments/s3/s3_options.h"
#include "attachments/tests/one_pixel_png.h"
#include "e2e/attachment_support.h"
#include "e2e/deployment.h"
#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

constexpr int64_t kOrphanAgeMs = 2000;
constexpr int64_t kSweepIntervalMs = 200;

const std::string& kPng = ::qim::test::kOnePixelPng;

// The object key of attachment id "a1.<random>.<mac>" (attachments/attachment_id.h): "att/<random>".
std::string key_of(const std::string& id) {
  const size_t first = id.find('.');
  const size_t second = id.find('.', first + 1);
  return "att/" + id.substr(first + 1, second - first - 1);
}

std::set<std::string> listed(attachments::ObjectStore& store) {
  auto page = store.list("att/", "", 1000);
  EXPECT_TRUE(page.ok()) << page.error().to_string();
  std::set<std::string> keys;
  if (page.ok())
    for (const auto& o : *page) keys.insert(o.key);
  return keys;
}

TEST(E2ESweep, AnUnsentUploadIsSweptAndASentImageIsKept) {
  if (!store_configured()) GTEST_SKIP() << "QIM_S3_ENDPOINT is unset: no object store for attachments";
  const char* bucket = std::getenv("QIM_TEST_S3_SWEEP_BUCKET");
  if (bucket == nullptr || *bucket == '\0')
    GTEST_SKIP() << "QIM_TEST_S3_SWEEP_BUCKET is unset: no bucket of its own to sweep";
  if (deployment_under_test() != "single") GTEST_SKIP() << "the sweep scenario runs on `qim up` only";

  // The test's own view of the bucket, through the S3 API (the same client QIM uses, its own requests).
  auto config = attachments::s3_config_from_env([&](const std::string& name) -> std::optional<std::string> {
    if (name == "QIM_S3_BUCKET") return std::string(bucket);
    const char* v = std::getenv(name.c_str());
    return v == nullptr ? std::nullopt : std::optional<std::string>(v);
  });
  ASSERT_TRUE(config.ok() && config->has_value())
      << (config.ok() ? "no endpoint" : config.error().to_string());
  auto store = attachments::open_s3_object_store(**config);
  ASSERT_TRUE(store.ok()) << store.error().to_string();

  auto qim = new_deployment("sweep");
  ASSERT_TRUE(qim->start({{"QIM_S3_BUCKET", bucket},
                          {"QIM_ATTACH_ORPHAN_AGE_MS", std::to_string(kOrphanAgeMs)},
                          {"QIM_ATTACH_SWEEP_INTERVAL_MS", std::to_string(kSweepIntervalMs)}})
                  .ok());
  const auto a = user("sweep", "alice"), b = user("sweep", "bob");
  auto alice = login(*qim, a);
  ASSERT_NE(alice, nullptr);
  const std::string conversation = conv(a, b);

  // An upload never sent, and an image sent at once (its thumbnail and marker written by the SEND).
  const std::string orphan = upload(*alice, conversation, pattern_bytes(40'000, 7));
  ASSERT_FALSE(orphan.empty());
  const std::string image = upload(*alice, conversation, kPng, "image/png");
  ASSERT_FALSE(image.empty());
  auto ack = send_with(*alice, conversation, "sw1", image, kPng.size(), "kept", "image/png");
  ASSERT_EQ(ack.type, "SEND_ACK") << ack.raw;
  const auto sent_at = std::chrono::steady_clock::now();
  const std::string orphan_key = key_of(orphan), image_key = key_of(image);
  const std::set<std::string> kept{image_key, image_key + ".ref", image_key + ".thumb.jpg"};
  {
    auto now = listed(**store);
    EXPECT_TRUE(now.contains(orphan_key)) << "the upload is in the bucket before the sweep";
    for (const auto& k : kept) EXPECT_TRUE(now.contains(k)) << k;
  }

  // The sweep deletes the orphan once it is older than the age (a poll with a bound).
  const auto until = std::chrono::steady_clock::now() + kWait;
  std::set<std::string> now;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(kSweepIntervalMs));
    now = listed(**store);
  } while (now.contains(orphan_key) && std::chrono::steady_clock::now() < until);
  EXPECT_FALSE(now.contains(orphan_key))
      << "the unsent upload was not swept within " << kWait.count() << " s";

  // The sent image is past the orphan age too by now, and more sweeps run: it stays, with its thumbnail
  // and marker.
  const double sweeps = metric(*qim, "qim_attachment_sweeps_total");
  while (std::chrono::steady_clock::now() - sent_at < std::chrono::milliseconds(2 * kOrphanAgeMs) ||
         metric(*qim, "qim_attachment_sweeps_total") < sweeps + 2) {
    ASSERT_LT(std::chrono::steady_clock::now(), until + kWait) << "the sweeps stopped";
    std::this_thread::sleep_for(std::chrono::milliseconds(kSweepIntervalMs));
  }
  now = listed(**store);
  for (const auto& k : kept) EXPECT_TRUE(now.contains(k)) << k << " was deleted";

  // The sweep's metrics moved.
  EXPECT_GE(metric(*qim, "qim_attachment_orphans_deleted_total"), 1);
  EXPECT_GE(metric(*qim, "qim_attachment_objects_listed_total"), 4);  // the orphan, the image's three
  EXPECT_EQ(metric(*qim, "qim_attachment_sweep_failures_total"), 0);
  EXPECT_EQ(metric(*qim, "qim_attachment_expired_deleted_total"), 0);

  // And the kept image still downloads.
  auto bob = login(*qim, b);
  auto url = url_when_archived(*bob, conversation, ack.message_id, image, /*thumbnail=*/true);
  ASSERT_EQ(url.type, "ATTACHMENT_URL_OK") << url.raw;
  EXPECT_EQ(http_request(http::verb::get, field(url.raw, "url")).status, 200u);
  EXPECT_EQ(qim->stop(), 0);
}

}  // namespace
}  // namespace qim::e2e
