#include "api/api_options.h"

#include <charconv>
#include <filesystem>

namespace qim::api {

namespace {

Result<int64_t> int_var(const std::string& var, const std::string& value, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi) {
    return Error(Errc::kConfig, var + "='" + value + "': expected an integer in " + std::to_string(lo) +
                                    ".." + std::to_string(hi));
  }
  return v;
}

}  // namespace

std::string api_keys_file(const EnvLookup& getenv, const std::string& data_dir) {
  if (auto v = getenv("QIM_API_KEYS_FILE"); v && !v->empty()) return *v;
  return (std::filesystem::path(data_dir) / "api-keys").string();
}

Result<std::optional<ApiOptions>> api_options_from_env(const EnvLookup& getenv, const std::string& data_dir) {
  auto listen = getenv("QIM_API_LISTEN");
  if (!listen) return std::optional<ApiOptions>();
  ApiOptions o;
  const size_t colon = listen->rfind(':');
  if (colon == std::string::npos || colon == 0)
    return Error(Errc::kConfig,
                 "QIM_API_LISTEN='" + *listen + "': expected <address>:<port>, e.g. 127.0.0.1:7402");
  o.address = listen->substr(0, colon);
  if (o.address.size() > 2 && o.address.front() == '[' && o.address.back() == ']')
    o.address = o.address.substr(1, o.address.size() - 2);
  QIM_ASSIGN_OR_RETURN(int64_t port, int_var("QIM_API_LISTEN (port)", listen->substr(colon + 1), 0, 65535));
  o.port = static_cast<uint16_t>(port);
  if (auto v = getenv("QIM_TLS_CERT")) o.tls_cert_file = *v;
  if (auto v = getenv("QIM_TLS_KEY")) o.tls_key_file = *v;
  o.keys_file = api_keys_file(getenv, data_dir);
  if (auto v = getenv("QIM_API_THREADS")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, int_var("QIM_API_THREADS", *v, 1, 256));
    o.threads = static_cast<uint32_t>(n);
  }
  if (auto v = getenv("QIM_API_MAX_REQUEST_BYTES")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, int_var("QIM_API_MAX_REQUEST_BYTES", *v, 1024, 16 << 20));
    o.max_request_bytes = static_cast<size_t>(n);
  }
  if (auto v = getenv("QIM_API_RATE")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, int_var("QIM_API_RATE", *v, 1, 1'000'000));
    o.rate_per_second = static_cast<double>(n);
  }
  if (auto v = getenv("QIM_API_BURST")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, int_var("QIM_API_BURST", *v, 1, 1'000'000));
    o.burst = static_cast<double>(n);
  }
  if (auto v = getenv("QIM_API_SYSTEM_USER")) {
    if (!UserId::parse(*v).ok())
      return Error(Errc::kConfig, "QIM_API_SYSTEM_USER='" + *v + "' is not a valid user id");
    o.system_user = *v;
  }
  return std::optional<ApiOptions>(std::move(o));
}

}  // namespace qim::api
