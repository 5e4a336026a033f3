#include "app/webhook_role.h"

#include <fmt/format.h>

#include <charconv>

#include "app/admin_routes.h"
#include "fanout/fanout.h"
#include "log/open_log.h"
#include "webhooks/webhook_options.h"

namespace qim {

Result<std::optional<WebhookRole>> open_webhook_role(const EnvLookup& env, const AppConfig& config,
                                                     Pipeline& pipeline,
                                                     std::shared_ptr<spdlog::logger> logger) {
  QIM_ASSIGN_OR_RETURN(auto hook, webhook_config_from_env(env));
  if (!hook) return std::optional<WebhookRole>();
  WebhookRole role;
  QIM_ASSIGN_OR_RETURN(role.dead_letters, open_log(config.log, kDeadLetterLogName, kDeadLetterPartitions,
                                                   logger, config.store.clock));
  WebhookConsumerOptions o;
  o.key = hook->key;
  o.retry = hook->retry;
  o.batch_max = hook->batch;
  o.commit_interval = hook->commit_interval;
  o.start_at_end = hook->start_at_end;
  o.follow = kFanoutGroup;
  o.messages = pipeline.messages();  // null in the distributed deployments (no EDIT or RECALL there yet)
  o.clock = config.store.clock;
  o.logger = std::move(logger);
  o.logger->info("webhooks: events to http://{}:{}{}, retried for {} s before dead-lettering", hook->url.host,
                 hook->url.port, hook->url.target, hook->retry.retry_for.count() / 1000);
  role.consumer = std::make_unique<WebhookConsumer>(
      pipeline.outbox(), *role.dead_letters, pipeline.groups(),
      [url = hook->url, timeout = hook->timeout] { return make_http_hook_sender(url, timeout); },
      std::move(o));
  return std::optional<WebhookRole>(std::move(role));
}

std::vector<AdminRoute> webhook_admin_routes(WebhookConsumer& consumer) {
  std::vector<AdminRoute> routes;
  routes.push_back(
      {"GET", "/admin/webhooks/dead-letters", [&consumer](const std::string&, const std::string&) {
         auto listed = consumer.list_dead_letters();
         if (!listed.ok()) return AdminResponse{500, listed.error().to_string() + "\n"};
         return AdminResponse{200, *listed};
       }});
  routes.push_back({"POST", "/admin/webhooks/dead-letters/replay",
                    [&consumer](const std::string& query, const std::string&) {
                      std::optional<uint64_t> from;
                      if (auto v = query_param(query, "from")) {
                        uint64_t n = 0;
                        auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
                        if (ec != std::errc() || end != v->data() + v->size())
                          return AdminResponse{400, "from='" + *v + "': expected a dead-letter position\n"};
                        from = n;
                      }
                      auto report = consumer.replay_dead_letters(from);
                      if (!report.ok()) return AdminResponse{500, report.error().to_string() + "\n"};
                      std::string body = fmt::format("replayed {}; replay cursor at {}; {} pending\n",
                                                     report->replayed, report->cursor, report->pending);
                      if (!report->error.empty())
                        return AdminResponse{503, body + "stopped at " + report->error + "\n"};
                      return AdminResponse{200, body};
                    }});
  return routes;
}

}  // namespace qim
