#pragma once
// The message pipeline minus the gateway, wired in one process: the Outbox and mailbox logs, the mailbox
// store, the history store, and the roles that connect them (fanout, MailboxNode, archiver), with the
// node's notifications fanned in to whatever delivers them (the gateway in `qim up`). `qim up` runs it
// with the gateway; the single-role commands run one role of it; the pipeline test drives it directly.
//
// Start order: node (fails closed first), archiver, fanout. Clean shutdown: drain fanout (everything in the
// Outbox becomes dispatch records), then the node (everything dispatched becomes visible) and the archiver,
// then stop; nothing acknowledged is left behind.

#include <spdlog/logger.h>

#include <memory>
#include <string>

#include <functional>
#include "app/config.h"

#include "archiver/archiver.h"
#include "archiver/history_store.h"
#include "delivery/fan_in_notifier.h"
#include "fanout/fanout.h"
#include "groups/group_store.h"
#include "inbox/inbox.h"
#include "lifecycle/message_state_store.h"
#include "log/log.h"
#include "mailbox/store.h"
#include "node/mailbox_node.h"

namespace qim {

struct PipelineRoles {
  bool fanout = true;
  bool node = true;
  bool archiver = true;
  // The node starts with no shard; a ShardOwnership loop (node/lease/) adds them as it takes leases.
  bool leased = false;
  // Open the group store: fanout writes it and a gateway in the process reads it. A `qim mailbox` or
  // `qim archiver` alone does without (one CQL session or Redis pool fewer); groups() is then null.
  bool groups = true;
  // Open the inbox (inbox/open_inbox.h) on the store's engine: the node writes its rows beside the entries
  // (the store's EntrySink) and a gateway in the process reads it (inbox()). `qim up`, `qim mailbox` and
  // `qim gateway` open it; the others do without and inbox() is null.
  bool inbox = true;
};

class Pipeline {
 public:
  // Opens the logs (recovering them), the store and the history; starts nothing. Config, Io or
  // CorruptEntry naming what could not be opened.
  static Result<std::unique_ptr<Pipeline>> open(const AppConfig& config, PipelineRoles roles,
                                                std::shared_ptr<spdlog::logger> logger);
  ~Pipeline();

  Log& outbox() { return *outbox_; }
  Log& mailbox_log() { return *mailbox_log_; }
  // Refused mailbox-log records (node/quarantine.h): `qim quarantine` reads it.
  Log& quarantine_log() { return *quarantine_log_; }
  MailboxStore& store() { return *store_; }
  HistoryStore& history() { return *history_; }  // the configured backend (QIM_HISTORY_BACKEND)
  // Group membership, on the mailbox store's engine (groups/open_group_store.h): RocksDB in
  // QIM_DATA_DIR/groups, Redis or CQL; null when the roles do not open it (PipelineRoles::groups).
  GroupStore* groups() { return groups_.get(); }
  // The message state store of EDIT and RECALL (docs/adr/0090, 0128), on the mailbox store's engine: Redis
  // or CQL; RocksDB in QIM_DATA_DIR/messages when the logs are embedded (every role in this process). Null
  // for a distributed deployment on the embedded store (no shared engine) or roles that do not use it.
  MessageStateStore* messages() { return messages_.get(); }
  // The inbox over store() and the inbox backend of its engine; null when the roles do not open it, or
  // when this binary does not have that engine's inbox yet (logged as a warning at open).
  Inbox* inbox() { return inbox_.get(); }

  // Where visible entries are delivered (before start()); they must outlive shutdown().
  void deliver_to(DeliveryNotifier* notifier) { downstream_.push_back(notifier); }
  // Starts the roles. EpochAhead (fail closed) and the other start errors of the roles; on error nothing
  // keeps running.
  // Called by the archiver with a recalled message as it was (ArchiverOptions::on_recall): attachments
  // delete its objects. Before start(); none by default.
  void set_on_recall(std::function<Status(const Message& original)> on_recall) {
    on_recall_ = std::move(on_recall);
  }
  Status start();
  // Drains and stops the roles in order (see above), then flushes and stops notifications (the downstream
  // notifiers may go after this). Timeout if a role could not drain within the config's drain timeout (it
  // is stopped anyway). The stopped roles' metrics stay readable.
  Status shutdown();
  // The first fatal error of the node, if one stopped a shard worker.
  std::optional<Error> fatal() const;
  // Called once on a fatal node error (from a worker thread), e.g. to end `qim up`.
  void on_fatal(std::function<void(const Error&)> f) { on_fatal_ = std::move(f); }

  Fanout* fanout() { return fanout_.get(); }
  MailboxNode* node() { return node_.get(); }
  Archiver* archiver() { return archiver_.get(); }

  // One line of progress: messages fanned out, records materialised, mean page, lag, frontier moves.
  std::string summary() const;
  // Prometheus text exposition of the pipeline's counters (appended to the gateway's /metrics).
  std::string prometheus() const;

 private:
  Pipeline(AppConfig config, PipelineRoles roles, std::shared_ptr<spdlog::logger> logger)
      : config_(std::move(config)), roles_(roles), logger_(std::move(logger)) {}
  std::shared_ptr<spdlog::logger> child(const std::string& name) const;

  AppConfig config_;
  PipelineRoles roles_;
  std::shared_ptr<spdlog::logger> logger_;
  std::function<void(const Error&)> on_fatal_;
  std::vector<DeliveryNotifier*> downstream_;
  // Declared in the order they are built; destroyed in reverse (roles before what they use).
  std::unique_ptr<Log> outbox_;
  std::unique_ptr<Log> mailbox_log_;
  std::unique_ptr<Log> quarantine_log_;
  std::unique_ptr<InboxBackend> inbox_backend_;  // the store's sink: built before it, destroyed after it
  std::unique_ptr<MailboxStore> store_;
  std::unique_ptr<HistoryStore> history_;
  std::unique_ptr<GroupStore> groups_;
  std::unique_ptr<MessageStateStore> messages_;
  std::unique_ptr<Inbox> inbox_;
  std::unique_ptr<FanInNotifier> fan_in_;
  std::unique_ptr<MailboxStore> crash_store_;  // QIM_TEST_NODE_CRASH_BETWEEN_CHUNKS only
  std::unique_ptr<MailboxNode> node_;
  std::unique_ptr<Archiver> archiver_;
  std::function<Status(const Message& original)> on_recall_;
  std::unique_ptr<Fanout> fanout_;
};

}  // namespace qim
