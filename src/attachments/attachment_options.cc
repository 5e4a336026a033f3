#include "attachments/attachment_options.h"

#include <algorithm>
#include <charconv>

namespace qim::attachments {

std::vector<std::string> AttachmentOptions::default_types() {
  return {"image/png",  "image/jpeg",      "image/webp", "image/gif",      "application/pdf",
          "text/plain", "application/zip", "audio/mpeg", "audio/ogg",      "audio/mp4",
          "audio/webm", "video/mp4",       "video/webm", "video/quicktime"};
}

bool AttachmentOptions::allows(std::string_view content_type) const {
  return std::find(types.begin(), types.end(), content_type) != types.end();
}

Result<AttachmentOptions> attachment_options_from_env(const EnvLookup& getenv) {
  AttachmentOptions o;
  auto number = [&](const char* var, int64_t lo, int64_t hi) -> Result<std::optional<int64_t>> {
    auto v = getenv(var);
    if (!v) return std::optional<int64_t>();
    int64_t n = 0;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || end != v->data() + v->size() || n < lo || n > hi)
      return Error(Errc::kConfig, std::string(var) + "='" + *v + "': expected an integer in " +
                                      std::to_string(lo) + ".." + std::to_string(hi));
    return std::optional<int64_t>(n);
  };
  QIM_ASSIGN_OR_RETURN(auto max_bytes, number("QIM_ATTACH_MAX_BYTES", 1, int64_t{5} << 40));
  if (max_bytes) o.max_bytes = static_cast<uint64_t>(*max_bytes);
  QIM_ASSIGN_OR_RETURN(auto daily, number("QIM_ATTACH_DAILY_BYTES", 1, int64_t{1} << 50));
  if (daily) o.daily_bytes = static_cast<uint64_t>(*daily);
  // Bounded: the shared budget keeps one hash field per upload a user was granted that day.
  QIM_ASSIGN_OR_RETURN(auto uploads, number("QIM_ATTACH_DAILY_UPLOADS", 1, 100'000));
  if (uploads) o.daily_uploads = static_cast<uint64_t>(*uploads);
  QIM_ASSIGN_OR_RETURN(auto put_ttl, number("QIM_ATTACH_PUT_TTL_S", 1, 3600));
  if (put_ttl) o.put_ttl = std::chrono::seconds(*put_ttl);
  QIM_ASSIGN_OR_RETURN(auto get_ttl, number("QIM_ATTACH_GET_TTL_S", 1, 3600));
  if (get_ttl) o.get_ttl = std::chrono::seconds(*get_ttl);
  QIM_ASSIGN_OR_RETURN(auto hash_max, number("QIM_ATTACH_HASH_MAX_BYTES", 0, int64_t{1} << 32));
  if (hash_max) o.hash_max_bytes = static_cast<uint64_t>(*hash_max);
  QIM_ASSIGN_OR_RETURN(auto thumb_max, number("QIM_ATTACH_THUMB_MAX_BYTES", 0, int64_t{1} << 30));
  if (thumb_max) o.thumb_max_bytes = static_cast<uint64_t>(*thumb_max);
  // Down to a second so that an end-to-end test sees the sweep work (docs/operations.md warns below a
  // minute).
  QIM_ASSIGN_OR_RETURN(auto orphan, number("QIM_ATTACH_ORPHAN_AGE_MS", 1000, int64_t{30} * 86'400'000));
  if (orphan) o.orphan_age_ms = *orphan;
  QIM_ASSIGN_OR_RETURN(auto sweep, number("QIM_ATTACH_SWEEP_INTERVAL_MS", 100, 86'400'000));
  if (sweep) o.sweep_interval_ms = *sweep;
  // Retention follows the mailboxes' unless set (same bounds as QIM_MAILBOX_RETENTION_MS, which the store
  // checks; here only its default is derived from it).
  QIM_ASSIGN_OR_RETURN(auto mailbox, number("QIM_MAILBOX_RETENTION_MS", 60'000, int64_t{3650} * 86'400'000));
  if (mailbox) o.retention_ms = *mailbox + 86'400'000;
  QIM_ASSIGN_OR_RETURN(auto retention, number("QIM_ATTACH_RETENTION_MS", 0, int64_t{3651} * 86'400'000));
  if (retention) o.retention_ms = *retention;
  if (auto v = getenv("QIM_ATTACH_TYPES")) {
    o.types.clear();
    std::string_view rest = *v;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      std::string_view t = rest.substr(0, comma);
      while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
      while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
      if (t.empty() || t.find('/') == std::string_view::npos)
        return Error(Errc::kConfig,
                     "QIM_ATTACH_TYPES='" + *v + "': expected comma-separated types such as image/png");
      o.types.emplace_back(t);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    if (o.types.empty()) return Error(Errc::kConfig, "QIM_ATTACH_TYPES is set but empty");
  }
  return o;
}

}  // namespace qim::attachments
