#include "gateway/gateway_options.h"

#include <charconv>

namespace qim {

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

Result<GatewayOptions> gateway_options_from_env(const EnvLookup& getenv) {
  GatewayOptions o;
  auto text = [&](const char* var, std::string& out) -> Status {
    if (auto v = getenv(var)) {
      if (v->empty()) return Error(Errc::kConfig, std::string(var) + " is set but empty");
      out = *v;
    }
    return {};
  };
  auto number = [&](const char* var, auto& out, int64_t lo, int64_t hi) -> Status {
    if (auto v = getenv(var)) {
      QIM_ASSIGN_OR_RETURN(int64_t n, int_var(var, *v, lo, hi));
      out = static_cast<std::remove_reference_t<decltype(out)>>(n);
    }
    return {};
  };
  QIM_RETURN_IF_ERROR(text("QIM_GATEWAY_LISTEN", o.listen_address));
  QIM_RETURN_IF_ERROR(number("QIM_GATEWAY_PORT", o.port, 0, 65535));
  QIM_RETURN_IF_ERROR(text("QIM_ADMIN_LISTEN", o.admin_address));
  QIM_RETURN_IF_ERROR(number("QIM_ADMIN_PORT", o.admin_port, 0, 65535));
  QIM_RETURN_IF_ERROR(text("QIM_AUTH_SECRET", o.auth_secret));
  QIM_RETURN_IF_ERROR(text("QIM_DELIVERY_MODE", o.delivery_mode));
  if (o.delivery_mode != "hybrid" && o.delivery_mode != "push" && o.delivery_mode != "pull")
    return Error(Errc::kConfig, "QIM_DELIVERY_MODE='" + o.delivery_mode + "': expected hybrid, push or pull");
  QIM_RETURN_IF_ERROR(number("QIM_GATEWAY_THREADS", o.threads, 1, 64));
  QIM_RETURN_IF_ERROR(number("QIM_GATEWAY_MAX_CONNECTIONS", o.max_connections, 1, 1'000'000));
  QIM_RETURN_IF_ERROR(number("QIM_GATEWAY_MAX_UNAUTHENTICATED", o.max_unauthenticated, 1, 1'000'000));
  QIM_RETURN_IF_ERROR(
      number("QIM_GATEWAY_MAX_UNAUTHENTICATED_PER_PEER", o.max_unauthenticated_per_peer, 1, 1'000'000));
  QIM_RETURN_IF_ERROR(number("QIM_GATEWAY_MAX_FRAME_BYTES", o.max_frame_bytes, 1024, 1 << 20));
  QIM_RETURN_IF_ERROR(number("QIM_GATEWAY_MAX_BODY_BYTES", o.max_body_bytes, 1, kMaxBodyBytes));
  QIM_RETURN_IF_ERROR(number("QIM_GATEWAY_RATE", o.max_frames_per_second, 1, 1'000'000));
  QIM_RETURN_IF_ERROR(number("QIM_GATEWAY_MAX_OUTBOUND", o.max_outbound_frames, 1, 1'000'000));
  QIM_RETURN_IF_ERROR(
      number("QIM_GATEWAY_MAX_OUTBOUND_BYTES", o.max_outbound_bytes, 1 << 16, int64_t{1} << 32));
  QIM_RETURN_IF_ERROR(text("QIM_TLS_CERT", o.tls_cert_file));
  QIM_RETURN_IF_ERROR(text("QIM_TLS_KEY", o.tls_key_file));
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return Error(Errc::kConfig, std::string(o.tls_cert_file.empty() ? "QIM_TLS_KEY" : "QIM_TLS_CERT") +
                                    " is set but " +
                                    (o.tls_cert_file.empty() ? "QIM_TLS_CERT" : "QIM_TLS_KEY") +
                                    " is not: TLS needs both the certificate and its key");
  }
  QIM_RETURN_IF_ERROR(number("QIM_GROUP_MAX_MEMBERS", o.group_max_members, 1, 1'000'000));
  QIM_RETURN_IF_ERROR(number("QIM_GROUP_APPLY_WAIT_MS", o.group_apply_wait_ms, 1, 600'000));
  QIM_RETURN_IF_ERROR(number("QIM_GATEWAY_MAX_PENDING", o.max_pending_per_connection, 1, 100'000));
  QIM_RETURN_IF_ERROR(number("QIM_GATEWAY_PENDING_DEADLINE_MS", o.pending_deadline_ms, 1, 600'000));
  QIM_RETURN_IF_ERROR(number("QIM_GATEWAY_BLOCK_CACHE_MS", o.block_cache_ms, 0, 600'000));
  QIM_RETURN_IF_ERROR(number("QIM_SESSION_RECHECK_MS", o.session_recheck_ms, 50, 60'000));
  QIM_RETURN_IF_ERROR(number("QIM_SEND_ACK_DEADLINE_MS", o.send_ack_deadline_ms, 0, 600'000));
  QIM_RETURN_IF_ERROR(text("QIM_WEB_DIR", o.web_dir));
  if (auto v = getenv("QIM_WEB_DEV_TOKENS")) {
    if (*v != "0" && *v != "1")
      return Error(Errc::kConfig, "QIM_WEB_DEV_TOKENS='" + *v + "': expected 0 or 1");
    o.dev_tokens = *v == "1";
  }
  return o;
}

}  // namespace qim
