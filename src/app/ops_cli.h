#pragma once
// The command line of the operator commands of ops_commands.h, added to `qim`'s CLI::App: one object
// holds what was parsed, so main.cc only constructs it and asks it to run.

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>

#include "app/ops_commands.h"
#include "app/sessions_command.h"
#include "app/shard_clear_command.h"
#include "app/shard_move_command.h"

namespace qim {

class OpsCli {
 public:
  // Adds `admin` with `audit dispatch`, `frontier show`, `mailbox read`, `dispatch show`, `retention sweep`,
  // `schema check|apply`, `shard move`, `shard clear`, `sessions list|revoke` to `app` (main.cc adds
  // `api-key`); `instance_flags` adds the flags that override QIM_* variables (--data-dir, --store, --shards,
  // ...) to a subcommand.
  OpsCli(CLI::App& app, const std::function<void(CLI::App*)>& instance_flags);
  OpsCli(const OpsCli&) = delete;
  OpsCli& operator=(const OpsCli&) = delete;

  // After parsing: the exit code of the operator command given, or nullopt if none of them was.
  std::optional<int> run(const EnvLookup& env) const;

 private:
  CLI::App* audit_dispatch_ = nullptr;
  CLI::App* frontier_show_ = nullptr;
  CLI::App* mailbox_read_ = nullptr;
  CLI::App* dispatch_show_ = nullptr;
  CLI::App* retention_sweep_ = nullptr;
  RetentionSweepCommand sweep_;
  CLI::App* schema_check_ = nullptr;
  CLI::App* schema_apply_ = nullptr;
  CLI::App* shard_move_ = nullptr;
  ShardMoveCommand move_;
  uint32_t move_timeout_s_ = 60;
  bool move_no_wait_ = false;
  CLI::App* shard_clear_ = nullptr;
  ShardClearCommand clear_;
  CLI::App* sessions_list_ = nullptr;
  CLI::App* sessions_revoke_ = nullptr;
  SessionsCommand sessions_;
  AuditCommand audit_;
  FrontierCommand frontier_;
  MailboxReadCommand mailbox_;
  DispatchShowCommand dispatch_;
  uint32_t dispatch_shard_ = 0;
};

}  // namespace qim
