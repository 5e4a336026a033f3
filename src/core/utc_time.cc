#include "core/utc_time.h"

#include <chrono>
#include <cstdio>

namespace qim {

std::string utc_time(int64_t epoch_ms) {
  using namespace std::chrono;
  // Out of the range year_month_day prints sensibly: say the number rather than a wrong date.
  constexpr int64_t kYear10000Ms = 253402300800000;
  constexpr int64_t kYear0Ms = -62167219200000;
  if (epoch_ms < kYear0Ms || epoch_ms >= kYear10000Ms)
    return std::to_string(epoch_ms) + " ms since the epoch";
  const sys_seconds t{floor<seconds>(milliseconds(epoch_ms))};
  const sys_days day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss hms{t - day};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02d:%02d:%02d UTC", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf;
}

}  // namespace qim
