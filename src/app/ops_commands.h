#pragma once
// The operator commands on a mailbox store (docs/operations.md): `qim admin audit dispatch`, `qim admin
// frontier show`, `qim admin mailbox read`, `qim admin dispatch show`. They open the store through the same
// configuration as the services (QIM_* variables, flags override them) and never create one where there is
// none. Exit codes: those of commands.h, plus kExitFindings when an audit found inconsistencies.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/commands.h"

namespace qim {

inline constexpr int kExitFindings = 3;

struct AuditCommand {
  std::vector<uint32_t> shards;  // empty with all = true: every shard
  bool all = false;
  bool json = false;
  uint32_t rate = 2000;  // rows per second at most
};
// 0 clean, kExitFindings with inconsistencies, 1 when the store cannot be read, 2 for bad arguments.
int run_audit_dispatch(const EnvLookup& env, const AuditCommand& command);

struct FrontierCommand {
  std::vector<uint32_t> shards;  // empty: every shard
  bool json = false;
};
// Every (shard, epoch) frontier row with its offset, mailbox_seq and the WRITETIME check where the
// engine keeps one.
int run_frontier_show(const EnvLookup& env, const FrontierCommand& command);

struct MailboxReadCommand {
  std::string user;
  std::string after = "0";  // a mailbox_seq: "epoch:offset" or the raw decimal value
  uint32_t limit = 100;
  bool json = false;
};
// What a client would be shown: read_mailbox after the cursor.
int run_mailbox_read(const EnvLookup& env, const MailboxReadCommand& command);

struct DispatchShowCommand {
  std::string id;
  std::optional<uint32_t> shard;  // default: from the id ("m<message>-s<shard>")
  bool json = false;
};
// The dispatch's identity at each epoch of its shard that has one.
int run_dispatch_show(const EnvLookup& env, const DispatchShowCommand& command);

struct RetentionSweepCommand {
  std::string user;  // empty with all = true: every user with a retention ledger
  bool all = false;
  uint32_t rate = 100;  // users swept per second at most (--all)
};
// The owner's retention sweep, by hand: moves each user's trim past its expired buckets and prints what
// moved (trim before and after, buckets expired). Exit 0 when every sweep worked, 1 if one failed (the
// others still run; ProofMissing stops that user's sweep where the proofs allow, as the node's does).
int run_retention_sweep(const EnvLookup& env, const RetentionSweepCommand& command);

struct SchemaCommand {
  bool apply = false;
};
// check: exit 0 when the keyspace keeps every rule, kExitFindings naming each problem. apply: creates what
// is missing, refusing (kExitFindings, nothing written) a keyspace with TWCS or tablets.
int run_schema(const EnvLookup& env, const SchemaCommand& command);

}  // namespace qim
