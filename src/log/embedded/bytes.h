#pragma once
// Fixed-width integers in the embedded log's files (frames, journal entries and headers): native byte order,
// which is little-endian on every machine QIM builds for; memcpy, so unaligned positions are fine.

#include <cstring>
#include <string>

namespace qim::embedded_log {

template <typename T>
void put(std::string& out, T v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  out.append(b, sizeof v);
}

template <typename T>
T get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace qim::embedded_log
