#pragma once
// The admin /metrics of running QIM processes (docs/operations.md), read by the load generator's modes
// over plain HTTP on loopback.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qim::load {

// The /metrics text of the admin port on 127.0.0.1; nullopt if it does not answer.
std::optional<std::string> metrics_text(uint16_t port);

// The sum of the samples of `text` (Prometheus text format) whose line starts with `prefix`: a family and
// its labels ("qim_store_ops_total{kind=\"insert\"}"), or a family and "{" for every label set.
double metric_sum(std::string_view text, std::string_view prefix);

}  // namespace qim::load
