#pragma once
// Times for people: what an error message or a command prints instead of epoch milliseconds.

#include <cstdint>
#include <string>

namespace qim {

// `epoch_ms` (milliseconds since the Unix epoch) as "YYYY-MM-DD HH:MM:SS UTC", seconds truncated. Never
// fails: a value outside the years 0..9999 prints as "<epoch_ms> ms since the epoch".
std::string utc_time(int64_t epoch_ms);

}  // namespace qim
