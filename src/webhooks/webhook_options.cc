#include "webhooks/webhook_options.h"

#include <charconv>

#include "webhooks/signature.h"

namespace qim {

namespace {

Status read_ms(const EnvLookup& getenv, const char* name, int64_t min, int64_t max,
               std::chrono::milliseconds& out) {
  auto v = getenv(name);
  if (!v) return {};
  int64_t ms = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), ms);
  if (ec != std::errc() || end != v->data() + v->size() || ms < min || ms > max) {
    return Error(Errc::kConfig, std::string(name) + "='" + *v + "': expected an integer in " +
                                    std::to_string(min) + ".." + std::to_string(max));
  }
  out = std::chrono::milliseconds(ms);
  return {};
}

}  // namespace

Result<std::optional<WebhookConfig>> webhook_config_from_env(const EnvLookup& getenv) {
  auto url = getenv("QIM_WEBHOOK_URL");
  if (!url || url->empty()) return std::optional<WebhookConfig>();
  WebhookConfig c;
  QIM_ASSIGN_OR_RETURN(c.url, parse_hook_url(*url));
  auto secret = getenv("QIM_WEBHOOK_SECRET");
  if (!secret || secret->empty())
    return Error(Errc::kConfig,
                 "QIM_WEBHOOK_URL is set but QIM_WEBHOOK_SECRET is not: the hook needs a secret "
                 "(whsec_<base64>) to verify what it receives");
  auto key = decode_webhook_secret(*secret);
  if (!key.ok()) return Error(Errc::kConfig, "QIM_WEBHOOK_SECRET: " + key.error().message());
  c.key = std::move(key).value();
  constexpr int64_t kDay = 86'400'000;
  QIM_RETURN_IF_ERROR(read_ms(getenv, "QIM_WEBHOOK_TIMEOUT_MS", 1, 600'000, c.timeout));
  QIM_RETURN_IF_ERROR(read_ms(getenv, "QIM_WEBHOOK_RETRY_INITIAL_MS", 1, 3'600'000, c.retry.initial));
  QIM_RETURN_IF_ERROR(read_ms(getenv, "QIM_WEBHOOK_RETRY_MAX_MS", 1, kDay, c.retry.max_delay));
  QIM_RETURN_IF_ERROR(read_ms(getenv, "QIM_WEBHOOK_RETRY_FOR_MS", 0, 30 * kDay, c.retry.retry_for));
  QIM_RETURN_IF_ERROR(read_ms(getenv, "QIM_WEBHOOK_COMMIT_INTERVAL_MS", 0, 600'000, c.commit_interval));
  std::chrono::milliseconds batch{static_cast<int64_t>(c.batch)};
  QIM_RETURN_IF_ERROR(read_ms(getenv, "QIM_WEBHOOK_BATCH", 1, 10'000, batch));
  c.batch = static_cast<size_t>(batch.count());
  if (auto v = getenv("QIM_WEBHOOK_START")) {
    if (*v != "earliest" && *v != "latest")
      return Error(Errc::kConfig, "QIM_WEBHOOK_START='" + *v + "': expected earliest or latest");
    c.start_at_end = *v == "latest";
  }
  return std::optional<WebhookConfig>(std::move(c));
}

}  // namespace qim
