#include "attachments/thumbnailer.h"

#include <vips/vips.h>

#include <memory>
#include <mutex>

namespace qim::attachments {

namespace {

// libvips must be initialised once per process before any other call (its own requirement: VIPS_INIT sets
// up GLib's type system and the operation table), and its operation cache is process-wide: capped here,
// in the same single place, so that thumbnails of large images do not keep decoded pixels around.
bool vips_ready() {
  static const bool ready = [] {
    if (VIPS_INIT("qim") != 0) return false;
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    return true;
  }();
  return ready;
}

// The error text libvips keeps per process, taken and cleared (it is not per thread; good enough for a
// message, never for a decision).
std::string vips_error() {
  std::string e = vips_error_buffer();
  vips_error_clear();
  while (!e.empty() && (e.back() == '\n' || e.back() == ' ')) e.pop_back();
  return e;
}

struct Unref {
  void operator()(VipsImage* i) const { g_object_unref(i); }
};
using ImagePtr = std::unique_ptr<VipsImage, Unref>;

}  // namespace

Result<Thumbnail> make_thumbnail(std::string_view bytes) {
  if (!vips_ready()) return Error(Errc::kIo, "libvips could not be initialised");
  // The loader is chosen from the bytes, not from the declared type: a "png" that is a JPEG still decodes
  // (its HEAD type is what was checked); bytes no loader recognises are not an image.
  if (vips_foreign_find_load_buffer(bytes.data(), bytes.size()) == nullptr) {
    vips_error_clear();
    return Error(Errc::kInvalidArgument, "not an image that can be decoded");
  }
  // The header only (lazy): the original's dimensions.
  ImagePtr header(vips_image_new_from_buffer(bytes.data(), bytes.size(), "", nullptr));
  if (!header) return Error(Errc::kInvalidArgument, "not an image that can be decoded: " + vips_error());
  Thumbnail t;
  t.width = static_cast<uint32_t>(vips_image_get_width(header.get()));
  t.height = static_cast<uint32_t>(vips_image_get_height(header.get()));
  header.reset();
  if (uint64_t{t.width} * t.height > kThumbnailMaxPixels)
    return Error(Errc::kResourceExhausted, std::to_string(t.width) + " x " + std::to_string(t.height) +
                                               " pixels: too many for a thumbnail");

  VipsImage* raw = nullptr;
  // "size": VIPS_SIZE_DOWN never enlarges a small image; the whole image is decoded here, so a truncated
  // or corrupt body fails now (fail_on: error) and is refused like any other non-image.
  if (vips_thumbnail_buffer(const_cast<char*>(bytes.data()), bytes.size(), &raw, kThumbnailBox, "height",
                            kThumbnailBox, "size", VIPS_SIZE_DOWN, "fail_on", VIPS_FAIL_ON_ERROR,
                            nullptr) != 0)
    return Error(Errc::kInvalidArgument, "not an image that can be decoded: " + vips_error());
  ImagePtr thumb(raw);
  void* out = nullptr;
  size_t len = 0;
  // strip: no metadata (camera EXIF, GPS) is copied into the thumbnail.
  if (vips_jpegsave_buffer(thumb.get(), &out, &len, "Q", kThumbnailQuality, "strip", TRUE, nullptr) != 0)
    return Error(Errc::kIo, "the thumbnail could not be encoded: " + vips_error());
  t.jpeg.assign(static_cast<const char*>(out), len);
  g_free(out);
  return t;
}

}  // namespace qim::attachments
