#pragma once
// The store an ops test audits, on the backend this binary was built for (QIM_OPS_TEST_BACKEND):
//   embedded  a fresh temporary data directory (no engine)
//   redis     QIM_TEST_REDIS=host:port[,...], a key prefix of its own, deleted afterwards
//   scylla    QIM_TEST_CQL_HOSTS=host[,...], the keyspace qim_ops_shared, emptied (TRUNCATE) for each
//             test and locked while it runs; or, for a test that changes the schema or needs a keyspace
//             that does not exist yet (Keyspace::kOwn), a keyspace of its own, dropped afterwards
// with the QIM_* variables that point `qim admin ...` at the same store.

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "mailbox/store_options.h"

namespace qim::test {

class AuditTarget {
 public:
  virtual ~AuditTarget() = default;
  // What the store is opened with (shard count, backend, where).
  virtual const StoreOptions& options() const = 0;
  // The variables that make `qim admin` open the same store.
  virtual std::map<std::string, std::string> env() const = 0;
  // Runs a CQL statement (scylla) or a Redis command (redis, on the instance of `shard`) against the
  // store directly: how tests inject what the store itself never writes. InvalidArgument elsewhere.
  virtual Status raw_cql(const std::string& cql) = 0;
  virtual Status raw_redis(uint32_t shard, const std::vector<std::string>& command) = 0;
  virtual Result<std::string> raw_redis_get(uint32_t shard, const std::string& key) = 0;
  // The key prefix (redis) or keyspace (scylla).
  virtual std::string space() const = 0;
};

std::string ops_backend();
// Why this backend cannot be tested here (a variable unset), or nullopt.
std::optional<std::string> ops_unavailable();
enum class Keyspace { kShared, kOwn };  // scylla only; the others always get a store of their own
Result<std::unique_ptr<AuditTarget>> make_audit_target(const std::string& name, uint32_t shards,
                                                       Keyspace keyspace = Keyspace::kShared);

// Runs the qim binary with `env` added to this process's environment; exit code and stdout+stderr.
struct QimRun {
  int code = -1;
  std::string output;
};
QimRun run_qim(const std::map<std::string, std::string>& env, const std::string& args);

}  // namespace qim::test
