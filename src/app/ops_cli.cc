#include "app/ops_cli.h"

namespace qim {

OpsCli::OpsCli(CLI::App& root, const std::function<void(CLI::App*)>& instance_flags) {
  CLI::App& app = *root.add_subcommand(
      "admin",
      "operator commands on the mailbox store: audit, frontiers, mailboxes, dispatches (docs/operations.md)");
  app.require_subcommand(1);
  auto* audit = app.add_subcommand("audit", "consistency checks of the mailbox store (docs/operations.md)");
  audit->require_subcommand(1);
  audit_dispatch_ = audit->add_subcommand(
      "dispatch",
      "walk the dispatch identity rows of every epoch and their entries; report each inconsistency "
      "(exit 3 if any)");
  audit_dispatch_->add_option("--shard", audit_.shards, "audit this shard (repeatable)");
  audit_dispatch_->add_flag("--all", audit_.all, "audit every shard");
  audit_dispatch_->add_flag("--json", audit_.json, "print JSON");
  audit_dispatch_->add_option("--rate", audit_.rate, "rows read per second at most")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1'000'000u));
  instance_flags(audit_dispatch_);

  auto* frontier = app.add_subcommand("frontier", "the shard frontiers of the mailbox store");
  frontier->require_subcommand(1);
  frontier_show_ = frontier->add_subcommand(
      "show",
      "every (shard, epoch) frontier with its offset, mailbox_seq and WRITETIME check (exit 3 if one fails)");
  frontier_show_->add_option("--shard", frontier_.shards, "only this shard (repeatable); default all");
  frontier_show_->add_flag("--json", frontier_.json, "print JSON");
  instance_flags(frontier_show_);

  auto* mailbox = app.add_subcommand("mailbox", "a user's mailbox as a client would be shown it");
  mailbox->require_subcommand(1);
  mailbox_read_ = mailbox->add_subcommand("read", "the entries of USER after a cursor");
  mailbox_read_->add_option("user", mailbox_.user, "user id")->required();
  mailbox_read_
      ->add_option("--after", mailbox_.after, "cursor: a mailbox_seq as epoch:offset or its raw value")
      ->capture_default_str();
  mailbox_read_->add_option("--limit", mailbox_.limit, "entries at most")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  mailbox_read_->add_flag("--json", mailbox_.json, "print JSON");
  instance_flags(mailbox_read_);

  auto* dispatch = app.add_subcommand("dispatch", "dispatch identities of the mailbox store");
  dispatch->require_subcommand(1);
  dispatch_show_ =
      dispatch->add_subcommand("show", "the identity of dispatch ID at every epoch of its shard");
  dispatch_show_->add_option("id", dispatch_.id, "dispatch id (fanout's: m<message id>-s<shard>)")
      ->required();
  dispatch_show_->add_option("--shard", dispatch_shard_, "its shard, for an id that does not name one");
  dispatch_show_->add_flag("--json", dispatch_.json, "print JSON");
  instance_flags(dispatch_show_);

  auto* retention = app.add_subcommand("retention", "the users' retention trims");
  retention->require_subcommand(1);
  retention_sweep_ = retention->add_subcommand(
      "sweep", "move the trim of USER (or of every user with a ledger) past its expired day buckets");
  retention_sweep_->add_option("user", sweep_.user, "user id");
  retention_sweep_->add_flag("--all", sweep_.all, "every user with a retention ledger, shard by shard");
  retention_sweep_->add_option("--rate", sweep_.rate, "users swept per second at most")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100'000u));
  instance_flags(retention_sweep_);

  auto* schema = app.add_subcommand("schema", "the CQL keyspace's schema (scylla store)");
  schema->require_subcommand(1);
  schema_check_ = schema->add_subcommand(
      "check",
      "check the keyspace: tables present, schema version, no TWCS, no tablets (exit 3 on a problem)");
  schema_apply_ = schema->add_subcommand(
      "apply",
      "create the keyspace (QIM_CQL_RF) and missing tables; refuses a keyspace with TWCS or tablets");
  instance_flags(schema_check_);
  instance_flags(schema_apply_);

  auto* shard = app.add_subcommand("shard", "the MailboxNodes' shard leases");
  shard->require_subcommand(1);
  shard_move_ = shard->add_subcommand(
      "move",
      "hand shard N over to node NODE at the next epoch: the owner drains and releases it, NODE takes it; "
      "waits until NODE owns it");
  shard_move_->add_option("shard", move_.shard, "the shard (0..QIM_SHARDS-1)")->required();
  shard_move_->add_option("--to", move_.to, "the QIM_NODE_ID of a live MailboxNode")->required();
  shard_move_
      ->add_option("--timeout", move_timeout_s_,
                   "seconds to wait; the move is withdrawn after them (and, with --no-wait, expires)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 3600u));
  shard_move_->add_flag("--no-wait", move_no_wait_, "return once the move is recorded");
  instance_flags(shard_move_);
  shard_clear_ = shard->add_subcommand(
      "clear",
      "restart shard N, stopped on a fatal error, on the node that holds its lease (at the same epoch); "
      "fix the cause first");
  shard_clear_->add_option("shard", clear_.shard, "the shard (0..QIM_SHARDS-1)")->required();
  shard_clear_->add_option("--admin-port", clear_.admin_port,
                           "the holding node's admin port (default: the node running in --data-dir)");
  instance_flags(shard_clear_);

  auto* sessions = app.add_subcommand("sessions", "users' sessions: their devices, and revocation");
  sessions->require_subcommand(1);
  sessions_list_ = sessions->add_subcommand(
      "list", "USER's devices: live connections, last AUTH, not_before (docs/operations.md \"Sessions\")");
  sessions_revoke_ = sessions->add_subcommand(
      "revoke",
      "revoke every session of USER issued until now (or of one --device): refused at AUTH, live connections "
      "closed with 4001");
  sessions_revoke_->add_option("--device", sessions_.device, "only this device's sessions");
  sessions_list_->add_flag("--json", sessions_.json, "print JSON");
  for (auto* c : {sessions_list_, sessions_revoke_}) {
    c->add_option("user", sessions_.user, "user id")->required();
    c->add_option(
        "--admin-port", sessions_.admin_port,
        "a gateway's admin port (default: the `qim up` running in --data-dir; else QIM_ROUTING_REDIS, "
        "else the stopped instance's data directory)");
    instance_flags(c);
  }
}

std::optional<int> OpsCli::run(const EnvLookup& env) const {
  if (audit_dispatch_->parsed()) return run_audit_dispatch(env, audit_);
  if (frontier_show_->parsed()) return run_frontier_show(env, frontier_);
  if (mailbox_read_->parsed()) return run_mailbox_read(env, mailbox_);
  if (dispatch_show_->parsed()) {
    DispatchShowCommand command = dispatch_;
    if (dispatch_show_->count("--shard") > 0) command.shard = dispatch_shard_;
    return run_dispatch_show(env, command);
  }
  if (retention_sweep_->parsed()) return run_retention_sweep(env, sweep_);
  if (schema_check_->parsed()) return run_schema(env, SchemaCommand{false});
  if (schema_apply_->parsed()) return run_schema(env, SchemaCommand{true});
  if (shard_move_->parsed()) {
    ShardMoveCommand command = move_;
    command.timeout = std::chrono::seconds(move_timeout_s_);
    command.wait = !move_no_wait_;
    return run_shard_move(env, command);
  }
  if (shard_clear_->parsed()) return run_shard_clear(env, clear_);
  if (sessions_list_->parsed()) return run_sessions_list(env, sessions_);
  if (sessions_revoke_->parsed()) return run_sessions_revoke(env, sessions_);
  return std::nullopt;
}

}  // namespace qim
