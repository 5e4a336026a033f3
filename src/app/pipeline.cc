#include "app/pipeline.h"

#include <fmt/format.h>
#include <spdlog/sinks/null_sink.h>

#include "groups/open_group_store.h"
#include "inbox/open_inbox.h"
#include "lifecycle/open_message_state_store.h"
#include "log/embedded/embedded_log.h"
#include "log/embedded/file.h"
#include "node/crash_between_chunks.h"

namespace qim {

Result<std::unique_ptr<Pipeline>> Pipeline::open(const AppConfig& config, PipelineRoles roles,
                                                 std::shared_ptr<spdlog::logger> logger) {
  if (!logger)
    logger = std::make_shared<spdlog::logger>("qim", std::make_shared<spdlog::sinks::null_sink_mt>());
  std::unique_ptr<Pipeline> p(new Pipeline(config, roles, std::move(logger)));
  QIM_RETURN_IF_ERROR(embedded_log::make_dirs(config.data_dir));
  p->logger_->info("opening the outbox log ({} partitions) and the mailbox log ({} shards) in {}",
                   config.outbox_partitions, config.shards, config.data_dir);
  QIM_ASSIGN_OR_RETURN(p->outbox_,
                       open_log(config.log, "outbox", config.outbox_partitions, p->child("outbox-log"),
                                config.store.clock, config.store.outbox_retention()));
  // The queue bound is the Outbox's (clients feed it); fanout and the quarantine wait for their own appends,
  // and a batch of fanout's over the bound would be refused on every retry.
  LogOptions unbounded = config.log;
  unbounded.max_queued_appends = 0;
  QIM_ASSIGN_OR_RETURN(p->mailbox_log_, open_log(unbounded, "mailbox", config.shards, p->child("mailbox-log"),
                                                 config.store.clock));
  QIM_ASSIGN_OR_RETURN(p->quarantine_log_, open_log(unbounded, kQuarantineLogName, kQuarantinePartitions,
                                                    p->child("quarantine-log"), config.store.clock));
  if (roles.inbox) {
    const std::string engine = inbox_backend_name(config.store);
    if (inbox_backend_built(engine)) {
      p->logger_->info("opening the {} inbox", engine);
      QIM_ASSIGN_OR_RETURN(p->inbox_backend_, open_inbox(config.store, config.data_dir));
    } else {
      p->logger_->warn(
          "the {} inbox is not built into this binary: no conversation list or read state "
          "(and a node writes no inbox rows)",
          engine);
    }
  }
  p->logger_->info("opening the {} mailbox store", config.store.backend);
  // The node's store writes the inbox rows beside the entries (mailbox/entry_sink.h); a process without a
  // node never writes entries, but the embedded inbox is attached to the store's database through this
  // argument (docs/adr/0088), so it is passed whenever there is an inbox.
  EntrySink* sink = p->inbox_backend_.get();
  QIM_ASSIGN_OR_RETURN(p->store_, open_mailbox_store(config.store, sink));
  p->logger_->info("opening the {} history store", config.history.backend);
  HistoryOptions history = config.history;
  if (history.dir.empty()) history.dir = config.data_dir + "/history";
  QIM_ASSIGN_OR_RETURN(p->history_, open_history_store(history));
  if (roles.groups || roles.fanout) {
    p->logger_->info("opening the {} group store", group_store_backend(config.store));
    QIM_ASSIGN_OR_RETURN(p->groups_, open_group_store(config.store, config.data_dir));
  }
  // Fanout writes it; the archiver and a gateway in the process read it (the gateway: with the groups). On
  // the mailbox store's engine (lifecycle/open_message_state_store.h), so every process of a distributed
  // deployment reaches the same one; the embedded one (RocksDB in the data directory) only when every role
  // is in this process (embedded logs): separate processes would each have their own.
  const std::string messages_backend = message_state_backend(config.store);
  if ((config.log.backend == "embedded" || messages_backend != "embedded") &&
      (roles.fanout || roles.archiver || roles.groups)) {
    p->logger_->info("opening the {} message state store (edits and recalls)", messages_backend);
    QIM_ASSIGN_OR_RETURN(p->messages_, open_message_state_store(config.store, config.data_dir));
  }
  if (p->inbox_backend_) {
    p->inbox_ = std::make_unique<Inbox>(
        *p->store_, *p->inbox_backend_,
        InboxOptions{
            .readers_max = config.receipt_readers_max,
            .page_parallelism =
                p->inbox_backend_->name() == "memory" || p->inbox_backend_->name() == "embedded" ? 1u : 16u});
  }
  return p;
}

Pipeline::~Pipeline() {
  // Roles stop (their destructors join their threads) before the logs and stores they use go away.
  fanout_.reset();
  archiver_.reset();
  node_.reset();
  fan_in_.reset();
}

std::shared_ptr<spdlog::logger> Pipeline::child(const std::string& name) const {
  auto l = std::make_shared<spdlog::logger>(name, logger_->sinks().begin(), logger_->sinks().end());
  l->set_level(logger_->level());
  return l;
}

Status Pipeline::start() {
  if (!downstream_.empty()) fan_in_ = std::make_unique<FanInNotifier>(downstream_);
  if (roles_.node) {
    NodeOptions o;
    o.shards = roles_.leased ? std::vector<ShardId>{} : config_.owned_shards;
    o.leased = roles_.leased;
    o.epoch = config_.epoch;
    o.logger = child("node");
    o.quarantine = quarantine_log_.get();
    o.clock = config_.store.clock;
    o.retention.interval = config_.retention_sweep_interval;
    o.retention.batch = config_.retention_sweep_batch;
    o.retention.logger = child("retention");
    o.on_fatal = [this](const Error& e) {
      if (on_fatal_) on_fatal_(e);
    };
    MailboxStore* store = store_.get();
    if (config_.test_crash_between_chunks) {
      logger_->warn(
          "QIM_TEST_NODE_CRASH_BETWEEN_CHUNKS=1: the node exits within its first multi-chunk record");
      crash_store_ = std::make_unique<CrashBetweenChunksStore>(*store_, child("node"));
      store = crash_store_.get();
    }
    node_ = std::make_unique<MailboxNode>(*mailbox_log_, *store, fan_in_.get(), std::move(o));
    if (Status s = node_->start(); !s.ok()) {
      node_.reset();
      return s;
    }
  }
  if (roles_.archiver) {
    ArchiverOptions o;
    o.consumer.logger = child("archiver");
    o.make_durable = [this] { return history_->sync(); };
    o.messages = messages_.get();
    o.on_recall = on_recall_;
    archiver_ = std::make_unique<Archiver>(*outbox_, *history_, std::move(o));
    QIM_RETURN_IF_ERROR(archiver_->start());
  }
  if (roles_.fanout) {
    FanoutOptions o;
    o.chunk_entries = config_.chunk_entries;
    o.groups = groups_.get();
    o.group_max_members = config_.group_max_members;
    o.messages = messages_.get();
    o.lifecycle = config_.lifecycle;
    o.quarantine = quarantine_log_.get();
    o.outbox_retention_ms = config_.store.outbox_retention();
    o.clock = config_.store.clock;
    o.consumer.logger = child("fanout");
    QIM_ASSIGN_OR_RETURN(ShardMap shards, ShardMap::create(config_.shards));
    fanout_ = std::make_unique<Fanout>(*outbox_, *mailbox_log_, shards, std::move(o));
    QIM_RETURN_IF_ERROR(fanout_->start());
  }
  return {};
}

Status Pipeline::shutdown() {
  const auto limit = config_.drain_timeout;
  auto say = [this](const char* what) {
    return
        [this, what](uint64_t remaining) { logger_->info("draining {}: {} records left", what, remaining); };
  };
  std::optional<Error> first;
  auto keep = [&first](Status s) {
    if (!s.ok() && !first) first = s.error();
  };
  if (fanout_) keep(fanout_->drain(limit, say("fanout")));
  if (node_) keep(node_->drain(limit, say("mailbox node")));
  if (archiver_) keep(archiver_->drain(limit, say("archiver")));
  // Every role has stopped (their metrics stay readable); the node reports no more, so the fan-in can go.
  if (fan_in_) fan_in_->flush();
  fan_in_.reset();
  if (fanout_ || node_ || archiver_) logger_->info("pipeline stopped: {}", summary());
  if (first) return *first;
  return {};
}

std::optional<Error> Pipeline::fatal() const {
  return node_ ? node_->fatal() : std::nullopt;
}

std::string Pipeline::summary() const {
  std::string out;
  if (fanout_) {
    const auto f = fanout_->metrics();
    out += fmt::format("fanout {} messages ({} skipped); ", f.records, f.skipped);
  }
  if (node_) {
    const ShardMetrics t = total(node_->metrics());
    out += fmt::format("node {} records ({} repeated, {} skipped), {} pages, mean page {:.2f}, lag {}; ",
                       t.records, t.repeated, t.skipped, t.pages, t.mean_page(), t.lag);
  }
  if (archiver_) out += fmt::format("archiver {} messages", archiver_->metrics().messages);
  return out;
}

std::string Pipeline::prometheus() const {
  using Samples = std::vector<std::pair<std::string, uint64_t>>;  // (labels, value)
  std::string out;
  auto family = [&out](const char* name, const char* type, const char* help, const Samples& samples) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n", name, help, type);
    for (const auto& [labels, value] : samples) out += fmt::format("{}{} {}\n", name, labels, value);
  };
  if (fanout_) {
    const auto f = fanout_->metrics();
    family("qim_fanout_records_total", "counter", "Outbox records turned into dispatch records",
           {{"", f.records}});
    family("qim_fanout_dispatches_total", "counter", "Dispatch records appended", {{"", f.dispatches}});
    family("qim_fanout_skipped_total", "counter", "Outbox records fanout could not use", {{"", f.skipped}});
    family("qim_fanout_quarantined_records_total", "counter",
           "Outbox records fanout could not use for good, appended to the quarantine log",
           {{"", f.quarantined}});
    family("qim_fanout_group_ops_total", "counter", "Group membership changes read (replays included)",
           {{"", f.group_ops}});
    family("qim_fanout_group_refused_total", "counter",
           "Group records not dispatched: refused changes, messages of non-members", {{"", f.group_refused}});
    family("qim_fanout_group_loads_total", "counter", "Group store loads (groups the cache did not hold)",
           {{"", f.group_loads}});
    family(
        "qim_fanout_repeated_sends_total", "counter",
        "Outbox records repeating an earlier SEND (a retry whose first attempt was stored), not dispatched",
        {{"", f.repeats}});
  }
  if (fan_in_) {
    family("qim_delivery_dropped_entries_total", "counter",
           "Visible entries the notification queue could not hand on (their ranges went on as unknown)",
           {{"", fan_in_->dropped_entries()}});
    family("qim_delivery_unknown_ranges_total", "counter",
           "Frontier ranges handed to the gateway as unknown (its clients were told to SYNC)",
           {{"", fan_in_->unknown_ranges_delivered()}});
  }
  if (archiver_) {
    const auto a = archiver_->metrics();
    family("qim_archiver_messages_total", "counter", "Messages written to history", {{"", a.messages}});
    family("qim_archiver_repeated_sends_total", "counter",
           "Outbox records repeating an earlier SEND, not written to history", {{"", a.repeats}});
  }
  if (node_) {
    Samples records, pages, paged, frontier, lag, stopped, quarantined;
    for (const auto& m : node_->metrics()) {
      const std::string shard = fmt::format("{{shard=\"{}\"}}", m.shard.value);
      for (const auto& [reason, n] : m.quarantined) {
        quarantined.emplace_back(fmt::format("{{shard=\"{}\",reason=\"{}\"}}", m.shard.value, reason), n);
      }
      records.emplace_back(shard, m.records);
      pages.emplace_back(shard, m.pages);
      paged.emplace_back(shard, m.paged_records);
      lag.emplace_back(shard, m.lag);
      stopped.emplace_back(shard, m.stopped.empty() ? uint64_t{0} : uint64_t{1});
      frontier.emplace_back(
          fmt::format("{{shard=\"{}\",epoch=\"{}\"}}", m.shard.value, m.frontier.epoch().value),
          m.frontier.offset().value);
    }
    family("qim_node_records_total", "counter", "Mailbox-log records taken by shard workers", records);
    family("qim_node_pages_total", "counter", "Pages finished after catch-up", pages);
    family("qim_node_paged_records_total", "counter", "Records inside those pages", paged);
    family("qim_node_frontier_offset", "gauge", "Mailbox-log offset of the shard frontier", frontier);
    family("qim_node_lag", "gauge", "Records on the mailbox log not finished yet", lag);
    family("qim_node_shard_stopped", "gauge",
           "1 once the shard worker stopped on a fatal error (e.g. fenced)", stopped);
    const RetentionMetrics r = node_->retention_metrics();
    family("qim_retention_rounds_total", "counter", "Retention sweep rounds run", {{"", r.rounds}});
    family("qim_retention_users_swept_total", "counter", "Users whose retention sweep succeeded",
           {{"", r.users_swept}});
    family("qim_retention_buckets_expired_total", "counter", "Day buckets the retention sweep expired",
           {{"", r.buckets_expired}});
    family("qim_retention_errors_total", "counter",
           "Failed retention sweeps or listings (e.g. missing proof)", {{"", r.errors}});
    family("qim_retention_passes_total", "counter", "Complete retention passes over the owned shards",
           {{"", r.passes}});
    family("qim_retention_last_round_users", "gauge", "Users the last retention round swept",
           {{"", r.last_round_users}});
    family("qim_retention_last_round_timestamp_ms", "gauge",
           "Store-clock time the last retention round ended", {{"", static_cast<uint64_t>(r.last_round_ms)}});
    family("qim_node_quarantined_records_total", "counter",
           "Mailbox-log records the store refused, appended to the quarantine log, by shard and reason",
           quarantined);
  }
  const OpCounts ops = store_->op_counts();
  family("qim_store_ops_total", "counter", "Mailbox store operations by kind",
         {{"{kind=\"insert\"}", ops.inserts},
          {"{kind=\"update\"}", ops.updates},
          {"{kind=\"read\"}", ops.reads},
          {"{kind=\"lwt\"}", ops.lwts},
          {"{kind=\"frontier_write\"}", ops.frontier_writes}});
  const OpCounts history_ops = history_->op_counts();
  family("qim_history_ops_total", "counter", "History store operations by kind (2 inserts per message)",
         {{"{kind=\"insert\"}", history_ops.inserts}, {"{kind=\"read\"}", history_ops.reads}});
  if (groups_) {
    const OpCounts g = groups_->op_counts();
    family(
        "qim_group_store_ops_total", "counter",
        "Group store operations by kind (reads: loads and point reads)",
        {{"{kind=\"insert\"}", g.inserts}, {"{kind=\"update\"}", g.updates}, {"{kind=\"read\"}", g.reads}});
  }
  family("qim_store_inflight_records", "gauge",
         "Begun records held in the store's in-flight table (records begun above their shard's frontier)",
         {{"", store_->inflight_records()}});
  Samples appends, commits, syncs, checkpoints;
  for (auto* log : {outbox_.get(), mailbox_log_.get(), quarantine_log_.get()}) {
    if (auto* e = dynamic_cast<EmbeddedLog*>(log)) {
      const std::string labels = "{log=\"" + log->name() + "\"}";
      const EmbeddedLogStats stats = e->stats();
      appends.emplace_back(labels, stats.appends);
      commits.emplace_back(labels, stats.batches);
      syncs.emplace_back(labels, stats.syncs);
      checkpoints.emplace_back(labels, stats.checkpoints);
    }
  }
  if (!appends.empty()) {
    family("qim_log_appends_total", "counter", "Records made durable by the embedded log", appends);
    family("qim_log_group_commits_total", "counter", "Embedded log writer batches", commits);
    family("qim_log_syncs_total", "counter", "fdatasync calls of the embedded log (journal and segments)",
           syncs);
    family("qim_log_checkpoints_total", "counter",
           "Embedded log journal checkpoints (segments synced, a new journal generation)", checkpoints);
  }
  if (auto* e = dynamic_cast<EmbeddedLog*>(outbox_.get())) {
    family("qim_log_retention_segments_deleted_total", "counter",
           "Embedded log segments deleted by retention (QIM_OUTBOX_RETENTION_MS)",
           {{"{log=\"outbox\"}", e->stats().segments_deleted}});
    family("qim_log_retention_records_deleted_total", "counter", "Records in those segments",
           {{"{log=\"outbox\"}", e->stats().records_deleted}});
    family("qim_log_appends_refused_queue_full_total", "counter",
           "Appends refused at once: QIM_LOG_MAX_QUEUED_APPENDS were waiting for the disk (never written)",
           {{"{log=\"outbox\"}", e->stats().refused_queue_full}});
  }
  return out;
}

}  // namespace qim
