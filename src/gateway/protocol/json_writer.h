#pragma once
// A small JSON writer for the frames the gateway and the client send. Strings are escaped (quotes,
// backslashes, control characters) and invalid UTF-8 bytes become U+FFFD, so whatever bytes reach it the
// output is valid JSON. 64-bit ids are written as decimal strings by the frame encoders (see protocol.md).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qim {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);  // inside an object, before each value
  JsonWriter& string(std::string_view value);
  JsonWriter& int64(int64_t value);
  JsonWriter& uint64(uint64_t value);
  JsonWriter& uint64_as_string(uint64_t value);  // ids over 2^53 survive JavaScript clients
  JsonWriter& boolean(bool value);
  JsonWriter& null();

  // Convenience: key + value.
  JsonWriter& field(std::string_view name, std::string_view value) { return key(name).string(value); }
  JsonWriter& field(std::string_view name, const char* value) { return key(name).string(value); }
  JsonWriter& field(std::string_view name, int64_t value) { return key(name).int64(value); }
  JsonWriter& field(std::string_view name, bool value) { return key(name).boolean(value); }

  // Room for `bytes` of output in one allocation, for a frame whose size the encoder can estimate.
  JsonWriter& reserve(size_t bytes) {
    out_.reserve(bytes);
    return *this;
  }

  // A point to come back to: rewind(mark) drops everything written since, so an encoder can try a value
  // and take it back when it makes the frame too large. Only within the container open at mark().
  struct Mark {
    size_t bytes = 0;
    size_t depth = 0;
    bool first = true;
  };
  Mark mark() const { return {out_.size(), first_.size(), first_.empty() || first_.back()}; }
  void rewind(const Mark& m);
  size_t size() const { return out_.size(); }

  std::string take() { return std::move(out_); }
  const std::string& text() const { return out_; }

 private:
  void before_value();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// Appends `value` to `out` as a quoted, escaped JSON string.
void append_json_string(std::string& out, std::string_view value);

}  // namespace qim
