// Thumbnails of image attachments (issue 41 item 4): made with libvips when a SEND's references are
// checked, stored beside the object as a JPEG within a box; images that do not decode are refused.
#include <gtest/gtest.h>
#include <vips/vips.h>

#include <random>

#include "attachments/attachment_id.h"
#include "attachments/attachment_service.h"
#include "attachments/memory_object_store.h"

namespace qim::attachments {
namespace {

const ConversationId kConv = ConversationId::parse("d:alice:bob").value();
const UserId kAlice = UserId::parse("alice").value();

// The test's own images, encoded by libvips: a grey `width` x `height` picture in `format` ("png", "jpeg").
std::string encode_image(int width, int height, std::string_view format) {
  if (VIPS_INIT("qim_attachments_test") != 0) ADD_FAILURE() << vips_error_buffer();
  VipsImage* black = nullptr;
  EXPECT_EQ(vips_black(&black, width, height, "bands", 3, nullptr), 0) << vips_error_buffer();
  VipsImage* grey = nullptr;
  EXPECT_EQ(vips_linear1(black, &grey, 1.0, 128.0, "uchar", TRUE, nullptr), 0) << vips_error_buffer();
  g_object_unref(black);
  void* buf = nullptr;
  size_t len = 0;
  const int rc = format == "png" ? vips_pngsave_buffer(grey, &buf, &len, nullptr)
                                 : vips_jpegsave_buffer(grey, &buf, &len, nullptr);
  EXPECT_EQ(rc, 0) << vips_error_buffer();
  g_object_unref(grey);
  std::string out(static_cast<const char*>(buf), len);
  g_free(buf);
  return out;
}

struct Decoded {
  std::string loader;
  int width = 0;
  int height = 0;
};
Decoded decode(const std::string& bytes) {
  Decoded d;
  if (const char* l = vips_foreign_find_load_buffer(bytes.data(), bytes.size())) d.loader = l;
  if (VipsImage* img = vips_image_new_from_buffer(bytes.data(), bytes.size(), "", nullptr)) {
    d.width = vips_image_get_width(img);
    d.height = vips_image_get_height(img);
    g_object_unref(img);
  }
  return d;
}

class ThumbnailTest : public ::testing::Test {
 protected:
  ThumbnailTest()
      : clock(std::make_shared<ManualClock>(10 * kDayMs + 1000)), store(make_memory_object_store(clock)) {}

  // ATTACH and the client's PUT, then the SEND's check of the reference.
  Decided<std::vector<StoredAttachment>> send(AttachmentService& s, const std::string& bytes,
                                              const std::string& type, std::string* key_out) {
    auto g = s.grant_upload(kAlice, kConv, UploadRequest{"f", type, bytes.size(), std::nullopt});
    EXPECT_TRUE(std::holds_alternative<UploadGrant>(g));
    const std::string id = std::get<UploadGrant>(g).attachment;
    EXPECT_TRUE(store->upload(std::get<UploadGrant>(g).upload_url, type, bytes).ok());
    *key_out = *key_of_attachment("secret", id, kAlice, kConv);
    return s.check_references(kAlice, kConv,
                              std::vector<AttachmentRef>{{id, "f", type, bytes.size(), std::nullopt}});
  }

  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<MemoryObjectStore> store;
};

TEST_F(ThumbnailTest, PngAndJpegGetAJpegThumbnailWithinTheBox) {
  AttachmentService s(*store, "secret", AttachmentOptions{}, clock);
  for (auto [format, type, w, h] :
       {std::tuple{"png", "image/png", 1200, 800}, std::tuple{"jpeg", "image/jpeg", 500, 900}}) {
    SCOPED_TRACE(format);
    std::string key;
    auto checked = send(s, encode_image(w, h, format), type, &key);
    ASSERT_TRUE(std::holds_alternative<std::vector<StoredAttachment>>(checked));
    const StoredAttachment& a = std::get<0>(checked).at(0);
    EXPECT_TRUE(a.thumbnail);
    EXPECT_EQ(a.width, static_cast<uint32_t>(w));  // the original's, not the thumbnail's
    EXPECT_EQ(a.height, static_cast<uint32_t>(h));
    auto info = store->head(thumbnail_key(key));
    ASSERT_TRUE(info.ok());
    ASSERT_TRUE(info->has_value()) << "no thumbnail object";
    EXPECT_EQ((*info)->content_type, "image/jpeg");
    auto thumb = store->get(thumbnail_key(key), 1 << 20);
    ASSERT_TRUE(thumb.ok());
    const Decoded d = decode(*thumb);
    EXPECT_EQ(d.loader, "VipsForeignLoadJpegBuffer");
    EXPECT_LE(d.width, 320);
    EXPECT_LE(d.height, 320);
    EXPECT_EQ(std::max(d.width, d.height), 320);  // shrunk to the box, aspect kept
  }
}

TEST_F(ThumbnailTest, AnImageThatDoesNotDecodeIsRefusedAndNothingIsWritten) {
  AttachmentService s(*store, "secret", AttachmentOptions{}, clock);
  std::string noise(4096, '\0');
  std::mt19937 rng(41);
  for (char& c : noise) c = static_cast<char>(rng());
  std::string key;
  auto checked = send(s, noise, "image/png", &key);
  ASSERT_TRUE(std::holds_alternative<Refusal>(checked));
  EXPECT_EQ(std::get<Refusal>(checked).code, WireCode::kAttachmentMismatch);
  EXPECT_FALSE(store->head(thumbnail_key(key))->has_value());
  EXPECT_FALSE(store->head(referenced_marker_key(key))->has_value());
}

TEST_F(ThumbnailTest, FilesAndImagesOverTheBoundGetNone) {
  AttachmentOptions o;
  const std::string png = encode_image(400, 300, "png");
  o.thumb_max_bytes = png.size() - 1;
  AttachmentService s(*store, "secret", o, clock);
  std::string key;
  auto big = send(s, png, "image/png", &key);
  ASSERT_TRUE(std::holds_alternative<std::vector<StoredAttachment>>(big));
  EXPECT_FALSE(std::get<0>(big).at(0).thumbnail);
  EXPECT_FALSE(store->head(thumbnail_key(key))->has_value());
  EXPECT_TRUE(store->head(referenced_marker_key(key))->has_value());  // accepted all the same

  auto file = send(s, "just some text", "text/plain", &key);
  ASSERT_TRUE(std::holds_alternative<std::vector<StoredAttachment>>(file));
  EXPECT_FALSE(std::get<0>(file).at(0).thumbnail);
  EXPECT_EQ(std::get<0>(file).at(0).kind, "file");
  EXPECT_FALSE(store->head(thumbnail_key(key))->has_value());
}

}  // namespace
}  // namespace qim::attachments
