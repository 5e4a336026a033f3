#pragma once
// How the load reports print numbers (stats.cc's step table and CSV, ladder_report.cc's ladder): one
// definition, so a figure reads the same in every table.

#include <cstdio>
#include <optional>
#include <string>

namespace qim::load {

// `v` with `digits` decimals.
inline std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// As fixed(), or "-" for a figure that was not measured.
inline std::string opt(const std::optional<double>& v, int digits) {
  return v ? fixed(*v, digits) : "-";
}

}  // namespace qim::load
