#include "push/push_options.h"

#include <sys/stat.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace qim {

namespace {

Status read_int(const EnvLookup& getenv, const char* name, int64_t min, int64_t max, int64_t& out) {
  auto v = getenv(name);
  if (!v) return {};
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size() || n < min || n > max)
    return Error(Errc::kConfig, std::string(name) + "='" + *v + "': expected an integer in " +
                                    std::to_string(min) + ".." + std::to_string(max));
  out = n;
  return {};
}

}  // namespace

Result<std::shared_ptr<const P256Key>> load_vapid_key(const std::string& path, bool create) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (!create) return Error(Errc::kConfig, "QIM_PUSH_VAPID_KEY_FILE: no file " + path);
    QIM_ASSIGN_OR_RETURN(auto key, P256Key::generate());
    QIM_ASSIGN_OR_RETURN(auto pem, key.private_pem());
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << pem;
      if (!out) return Error(Errc::kConfig, "cannot write the VAPID key to " + tmp);
    }
    ::chmod(tmp.c_str(), 0600);
    std::filesystem::rename(tmp, path, ec);
    if (ec) return Error(Errc::kConfig, "cannot write the VAPID key to " + path + ": " + ec.message());
    return std::shared_ptr<const P256Key>(std::make_shared<P256Key>(std::move(key)));
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return Error(Errc::kConfig, "cannot read the VAPID key " + path);
  auto key = P256Key::from_pem(text.str());
  if (!key.ok()) return Error(Errc::kConfig, "the VAPID key " + path + ": " + key.error().message());
  return std::shared_ptr<const P256Key>(std::make_shared<P256Key>(std::move(key).value()));
}

Result<PushConfig> push_config_from_env(const EnvLookup& getenv, const std::optional<std::string>& data_dir) {
  PushConfig c;
  if (auto v = getenv("QIM_PUSH")) {
    if (*v != "on" && *v != "off" && *v != "1" && *v != "0")
      return Error(Errc::kConfig, "QIM_PUSH='" + *v + "': expected on or off");
    c.enabled = *v == "on" || *v == "1";
  }
  if (auto v = getenv("QIM_PUSH_VAPID_SUBJECT")) {
    if (!(v->starts_with("mailto:") || v->starts_with("https://")) ||
        v->find_first_of("\"\\") != std::string::npos)
      return Error(Errc::kConfig, "QIM_PUSH_VAPID_SUBJECT='" + *v + "': expected a mailto: or https: URL");
    c.vapid_subject = *v;
  }
  int64_t n = c.collapse.count();
  QIM_RETURN_IF_ERROR(read_int(getenv, "QIM_PUSH_COLLAPSE_MS", 0, 600'000, n));
  c.collapse = std::chrono::milliseconds(n);
  n = c.per_device_per_minute;
  QIM_RETURN_IF_ERROR(read_int(getenv, "QIM_PUSH_DEVICE_PER_MINUTE", 1, 1000, n));
  c.per_device_per_minute = static_cast<uint32_t>(n);
  n = static_cast<int64_t>(c.preview_bytes);
  QIM_RETURN_IF_ERROR(read_int(getenv, "QIM_PUSH_PREVIEW_BYTES", 0, 1000, n));
  c.preview_bytes = static_cast<size_t>(n);
  n = c.ttl.count();
  QIM_RETURN_IF_ERROR(read_int(getenv, "QIM_PUSH_TTL_S", 0, 28 * 86400, n));
  c.ttl = std::chrono::seconds(n);
  n = c.timeout.count();
  QIM_RETURN_IF_ERROR(read_int(getenv, "QIM_PUSH_TIMEOUT_MS", 1, 600'000, n));
  c.timeout = std::chrono::milliseconds(n);
  if (auto v = getenv("QIM_PUSH_CA_FILE")) c.ca_file = *v;
  if (auto v = getenv("QIM_PUSH_START")) {
    if (*v != "earliest" && *v != "latest")
      return Error(Errc::kConfig, "QIM_PUSH_START='" + *v + "': expected earliest or latest");
    c.start_at_end = *v == "latest";
  }
  if (auto v = getenv("QIM_PUSH_VAPID_KEY_FILE"); v && !v->empty()) {
    QIM_ASSIGN_OR_RETURN(c.vapid, load_vapid_key(*v, data_dir.has_value()));
  } else if (data_dir && c.enabled) {
    QIM_ASSIGN_OR_RETURN(
        c.vapid, load_vapid_key((std::filesystem::path(*data_dir) / "push" / "vapid.pem").string(), true));
  }
  if (auto file = getenv("QIM_PUSH_APNS_KEY_FILE"); file && !file->empty()) {
    PushConfig::Apns a;
    std::ifstream in(*file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return Error(Errc::kConfig, "QIM_PUSH_APNS_KEY_FILE: cannot read " + *file);
    auto key = P256Key::from_pem(text.str());
    if (!key.ok())
      return Error(Errc::kConfig, "QIM_PUSH_APNS_KEY_FILE " + *file + ": " + key.error().message());
    a.key = std::make_shared<P256Key>(std::move(key).value());
    for (auto [name, out] :
         {std::pair{"QIM_PUSH_APNS_KEY_ID", &a.key_id}, std::pair{"QIM_PUSH_APNS_TEAM_ID", &a.team_id},
          std::pair{"QIM_PUSH_APNS_TOPIC", &a.topic}}) {
      auto v = getenv(name);
      if (!v || v->empty() || v->size() > 200 ||
          v->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-_") !=
              std::string::npos)
        return Error(
            Errc::kConfig,
            std::string(name) + " is required with QIM_PUSH_APNS_KEY_FILE (letters, digits, '.', '-', '_')");
      *out = *v;
    }
    if (auto v = getenv("QIM_PUSH_APNS_URL"); v && !v->empty()) {
      if (!v->starts_with("https://") || v->find('/', 8) != std::string::npos)
        return Error(Errc::kConfig, "QIM_PUSH_APNS_URL='" + *v + "': expected https://host[:port]");
      a.url = *v;
    }
    c.apns = std::move(a);
  }
  if (auto file = getenv("QIM_PUSH_FCM_SERVICE_ACCOUNT"); file && !file->empty()) {
    PushConfig::Fcm f;
    std::ifstream in(*file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return Error(Errc::kConfig, "QIM_PUSH_FCM_SERVICE_ACCOUNT: cannot read " + *file);
    f.service_account_json = text.str();
    if (auto v = getenv("QIM_PUSH_FCM_URL"); v && !v->empty()) {
      if (!(v->starts_with("https://") || v->starts_with("http://")) || v->find('/', 8) != std::string::npos)
        return Error(Errc::kConfig, "QIM_PUSH_FCM_URL='" + *v + "': expected https://host[:port]");
      f.url = *v;
    }
    c.fcm = std::move(f);
  }
  return c;
}

}  // namespace qim
