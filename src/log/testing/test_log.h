#pragma once
// An embedded log in a test's directory, opened or the test fails loudly.

#include <memory>
#include <string>

#include "log/embedded/embedded_log.h"

namespace qim::testing {

inline std::unique_ptr<EmbeddedLog> open_test_log(const std::string& dir, uint32_t partitions,
                                                  const std::string& name = "test") {
  EmbeddedLogOptions o;
  o.dir = dir;
  o.name = name;
  o.partitions = partitions;
  return EmbeddedLog::open(o).value();
}

}  // namespace qim::testing
