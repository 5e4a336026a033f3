#include "gateway/close_reason_stream.h"

#include <algorithm>

namespace qim {

std::string_view reason_for_bare_close(uint16_t code) {
  switch (code) {
    case 1000:
      return "closing as the client asked";
    case 1001:
      return "going away";
    case 1002:
      return "protocol error: a frame breaks RFC 6455 (opcode, reserved bits, masking, fragmentation or "
             "control frame)";
    case 1007:
      return "invalid UTF-8 in a text frame";
    case 1009:
      return "a frame over the gateway's frame size limit";
    default:
      return "closing";
  }
}

void FrameBoundary::consume(uint8_t* p, size_t n, bool rewrite_top_bit) {
  while (n > 0) {
    if (have_ == 0 && remaining_ > 0) {
      const size_t k = static_cast<size_t>(std::min<uint64_t>(remaining_, n));
      remaining_ -= k;
      p += k;
      n -= k;
      continue;
    }
    if (have_ == 2 && rewrite_top_bit && (header_[1] & 0x7f) == 127 && (*p & 0x80)) zeroing_ = true;
    if (zeroing_ && have_ >= 2 && have_ < 10) *p = 0;
    header_[have_++] = *p++;
    --n;
    if (have_ < 2) continue;
    const uint8_t len7 = header_[1] & 0x7f;
    const size_t ext = len7 == 126 ? 2 : len7 == 127 ? 8 : 0;
    const size_t need = 2 + ext + ((header_[1] & 0x80) ? 4 : 0);
    if (have_ < need) continue;
    uint64_t len = len7;
    if (ext > 0) {
      len = 0;
      for (size_t i = 0; i < ext; ++i) len = len << 8 | header_[2 + i];
    }
    remaining_ = len;
    have_ = 0;
    zeroing_ = false;
  }
}

std::string CloseReasonStream::close_frame(uint16_t code, std::string_view too_big) {
  std::string_view reason = code == 1009 && !too_big.empty() ? too_big : reason_for_bare_close(code);
  reason = reason.substr(0, 123);  // a control frame's payload is at most 125 bytes
  std::string frame;
  frame.push_back(static_cast<char>(0x88));
  frame.push_back(static_cast<char>(2 + reason.size()));
  frame.push_back(static_cast<char>(code >> 8));
  frame.push_back(static_cast<char>(code & 0xff));
  frame.append(reason);
  return frame;
}

void teardown(boost::beast::role_type role, CloseReasonStream& stream, boost::beast::error_code& ec) {
  tls::teardown(role, stream.next_layer(), ec);
}

}  // namespace qim
