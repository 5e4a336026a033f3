#include "presence/presence_options.h"

#include <charconv>

namespace qim {

Result<PresenceOptions> presence_options_from_env(const EnvLookup& getenv) {
  PresenceOptions o;
  if (auto v = getenv("QIM_PRESENCE_GRACE_MS")) {
    int64_t ms = 0;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), ms);
    if (ec != std::errc() || end != v->data() + v->size() || ms < 0 || ms > 600'000)
      return Error(Errc::kConfig, "QIM_PRESENCE_GRACE_MS='" + *v + "': expected an integer in 0..600000");
    o.offline_grace = std::chrono::milliseconds(ms);
  }
  return o;
}

}  // namespace qim
