#pragma once
// Little-endian byte encoding for records on logs and rows in local stores. Readers never trust input:
// every short or malformed field is a CorruptEntry naming what was being read.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qim {

class ByteWriter {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { raw(&v, sizeof v); }
  void u64(uint64_t v) { raw(&v, sizeof v); }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  std::string take() { return std::move(out_); }
  const std::string& bytes() const { return out_; }

 private:
  void raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

class ByteReader {
 public:
  ByteReader(std::string_view in, std::string_view what) : in_(in), what_(what) {}

  Result<uint8_t> u8(std::string_view field) { return fixed<uint8_t>(field); }
  Result<uint32_t> u32(std::string_view field) { return fixed<uint32_t>(field); }
  Result<uint64_t> u64(std::string_view field) { return fixed<uint64_t>(field); }
  Result<int64_t> i64(std::string_view field) { return fixed<int64_t>(field); }
  // A length-prefixed string of at most max_bytes.
  Result<std::string> str(std::string_view field, size_t max_bytes) {
    QIM_ASSIGN_OR_RETURN(uint32_t n, u32(field));
    if (n > max_bytes || n > in_.size() - pos_)
      return corrupt(field, "length " + std::to_string(n) + " out of bounds");
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  // A length-prefixed validated name (UserId, ConversationId, ...). Optional: an empty string reads as N{}.
  template <typename N>
  Result<N> name(std::string_view field, bool optional = false) {
    QIM_ASSIGN_OR_RETURN(std::string s, str(field, N::kMaxBytes));
    if (optional && s.empty()) return N{};
    auto parsed = N::parse(s);
    if (!parsed.ok()) return corrupt(field, parsed.error().message());
    return std::move(parsed).value();
  }
  // CorruptEntry unless every byte was consumed.
  Status finish() const {
    if (pos_ != in_.size()) return corrupt("end", std::to_string(in_.size() - pos_) + " trailing bytes");
    return {};
  }
  Error corrupt(std::string_view field, const std::string& why) const {
    return Error(Errc::kCorruptEntry, std::string(what_) + " field '" + std::string(field) + "': " + why);
  }

 private:
  template <typename T>
  Result<T> fixed(std::string_view field) {
    if (in_.size() - pos_ < sizeof(T)) return corrupt(field, "truncated");
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }

  std::string_view in_;
  std::string_view what_;
  size_t pos_ = 0;
};

}  // namespace qim
