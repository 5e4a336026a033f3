#pragma once
// Thumbnails of image attachments (issue 41 item 4; docs/adr/0115): libvips decodes the uploaded image,
// shrinks it into a square box (aspect kept, never enlarged) and encodes the result as a JPEG. Thread-safe:
// libvips operations run concurrently on the caller's threads (the gateway's worker pool; never an I/O
// thread: decoding a 20 MiB image takes a while).

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qim::attachments {

inline constexpr int kThumbnailBox = 320;     // pixels: the thumbnail's longer side, at most
inline constexpr int kThumbnailQuality = 80;  // JPEG quality
// Larger images (a few-KiB PNG can declare 100000 x 100000 pixels) are not decoded: no thumbnail.
inline constexpr uint64_t kThumbnailMaxPixels = 100'000'000;

struct Thumbnail {
  uint32_t width = 0;  // the original image's dimensions, from its decoded header
  uint32_t height = 0;
  std::string jpeg;  // the thumbnail, at most kThumbnailBox on either side
};

// InvalidArgument when `bytes` are not an image libvips can decode (a declared image that is not one);
// ResourceExhausted when the image has over kThumbnailMaxPixels; Io when libvips could not be started or
// could not encode the result.
Result<Thumbnail> make_thumbnail(std::string_view bytes);

}  // namespace qim::attachments
