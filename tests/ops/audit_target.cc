#include "ops/audit_target.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "mailbox/redis/redis_connection.h"
#include "mailbox/redis/redis_test_env.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim::test {

namespace {

std::optional<std::string> env_var(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): tests read it before any thread
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

std::string unique(const std::string& name) {
  static std::atomic<int> next{0};
  return name + "_" + std::to_string(::getpid()) + "_" + std::to_string(next++);
}

class EmbeddedTarget final : public AuditTarget {
 public:
  EmbeddedTarget(std::string dir, StoreOptions o) : dir_(std::move(dir)), options_(std::move(o)) {}
  ~EmbeddedTarget() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const StoreOptions& options() const override { return options_; }
  std::map<std::string, std::string> env() const override {
    return {{"QIM_MAILBOX_STORE_BACKEND", "embedded"},
            {"QIM_DATA_DIR", dir_},
            {"QIM_SHARDS", std::to_string(options_.shard_count)}};
  }
  Status raw_cql(const std::string&) override { return Error(Errc::kInvalidArgument, "not a CQL store"); }
  Status raw_redis(uint32_t, const std::vector<std::string>&) override {
    return Error(Errc::kInvalidArgument, "not a Redis store");
  }
  Result<std::string> raw_redis_get(uint32_t, const std::string&) override {
    return Error(Errc::kInvalidArgument, "not a Redis store");
  }
  std::string space() const override { return dir_; }

 private:
  std::string dir_;
  StoreOptions options_;
};

class RedisTarget final : public AuditTarget {
 public:
  explicit RedisTarget(StoreOptions o) : options_(std::move(o)) {}
  ~RedisTarget() override { (void)delete_test_prefix(options_.redis_endpoints, options_.redis_key_prefix); }
  const StoreOptions& options() const override { return options_; }
  std::map<std::string, std::string> env() const override {
    std::string endpoints;
    for (const auto& e : options_.redis_endpoints) endpoints += (endpoints.empty() ? "" : ",") + e;
    return {{"QIM_MAILBOX_STORE_BACKEND", "redis"},
            {"QIM_MAILBOX_REDIS", endpoints},
            {"QIM_MAILBOX_REDIS_PREFIX", options_.redis_key_prefix},
            {"QIM_SHARDS", std::to_string(options_.shard_count)}};
  }
  Status raw_cql(const std::string&) override { return Error(Errc::kInvalidArgument, "not a CQL store"); }
  Status raw_redis(uint32_t shard, const std::vector<std::string>& command) override {
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run(shard, command));
    if (reply.is_error()) return Error(Errc::kTransport, "redis: " + reply.str);
    return {};
  }
  Result<std::string> raw_redis_get(uint32_t shard, const std::string& key) override {
    QIM_ASSIGN_OR_RETURN(RedisReply reply, run(shard, {"GET", key}));
    if (reply.kind != RedisReply::Kind::kString) return Error(Errc::kNotFound, key);
    return reply.str;
  }
  std::string space() const override { return options_.redis_key_prefix; }

 private:
  Result<RedisReply> run(uint32_t shard, const std::vector<std::string>& command) {
    QIM_ASSIGN_OR_RETURN(
        RedisEndpoint e,
        RedisEndpoint::parse(options_.redis_endpoints[shard % options_.redis_endpoints.size()]));
    QIM_ASSIGN_OR_RETURN(auto conn, RedisConnection::open(e, RedisTimeouts{}));
    return conn->run(command);
  }
  StoreOptions options_;
};

// The keyspace the tests that only write and read through the store share (kSharedKeyspace): creating
// a keyspace with its tables, and dropping it, cost each test ~8 s on a single Cassandra node; emptying
// the tables a test wrote costs a fraction. TRUNCATE, not DELETE: the store writes USING TIMESTAMP <log
// offset>, tiny timestamps a tombstone written now would shadow for good. The test processes take turns
// on it through a file lock (ctest runs each test in a process of its own, possibly several at once).
// It is never dropped: scripts/test.sh starts from a clean Cassandra. On an engine kept across builds
// whose mailbox schema changed, drop it by hand (DROP KEYSPACE qim_ops_shared).
constexpr const char* kSharedKeyspace = "qim_ops_shared";

class ScyllaTarget final : public AuditTarget {
 public:
  ScyllaTarget(StoreOptions o, cql::Session admin, bool shared)
      : options_(std::move(o)), admin_(std::move(admin)), shared_(shared) {}
  ~ScyllaTarget() override {
    if (shared_) {
      if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
      return;
    }
    (void)admin_.query("DROP KEYSPACE IF EXISTS " + options_.cql_keyspace, {},
                       cql::ExecOptions{.timeout_ms = 60'000});
  }

  // The shared keyspace, locked for this test and emptied of what an earlier test wrote (the schema
  // version row stays: it says the tables are this binary's).
  Status take_shared() {
    const std::string lock = (std::filesystem::temp_directory_path() / "qim_ops_shared.lock").string();
    lock_fd_ = ::open(lock.c_str(), O_CREAT | O_RDWR, 0644);
    if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX) != 0)
      return Error(Errc::kIo, "lock " + lock + ": " + std::strerror(errno));
    auto tables = admin_.query(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = '" + options_.cql_keyspace + "'",
        {}, cql::ExecOptions{.timeout_ms = 30'000});
    if (!tables.ok())
      return Error(Errc::kTransport, "list the shared keyspace: " + tables.error().to_string());
    for (const auto& row : *tables) {
      auto name = row.get_text(0);
      if (!name.ok() || *name == "qim_schema_version") continue;
      const std::string table = options_.cql_keyspace + "." + std::string(*name);
      auto any =
          admin_.query("SELECT * FROM " + table + " LIMIT 1", {},
                       cql::ExecOptions{.consistency = cql::Consistency::kQuorum, .timeout_ms = 30'000});
      if (!any.ok()) return Error(Errc::kTransport, "read " + table + ": " + any.error().to_string());
      if (any->empty()) continue;
      auto emptied = admin_.query("TRUNCATE " + table, {}, cql::ExecOptions{.timeout_ms = 120'000});
      if (!emptied.ok())
        return Error(Errc::kTransport, "TRUNCATE " + table + ": " + emptied.error().to_string());
    }
    return {};
  }

  const StoreOptions& options() const override { return options_; }
  std::map<std::string, std::string> env() const override {
    std::string hosts;
    for (const auto& h : options_.cql_hosts) hosts += (hosts.empty() ? "" : ",") + h;
    return {{"QIM_MAILBOX_STORE_BACKEND", "scylla"},
            {"QIM_CQL_HOSTS", hosts},
            {"QIM_CQL_KEYSPACE", options_.cql_keyspace},
            {"QIM_SHARDS", std::to_string(options_.shard_count)}};
  }
  Status raw_cql(const std::string& cql) override {
    auto done = admin_.query(
        cql, {}, cql::ExecOptions{.consistency = cql::Consistency::kQuorum, .timeout_ms = 30'000});
    if (!done.ok()) return Error(Errc::kTransport, cql + ": " + done.error().to_string());
    return {};
  }
  Status raw_redis(uint32_t, const std::vector<std::string>&) override {
    return Error(Errc::kInvalidArgument, "not a Redis store");
  }
  Result<std::string> raw_redis_get(uint32_t, const std::string&) override {
    return Error(Errc::kInvalidArgument, "not a Redis store");
  }
  std::string space() const override { return options_.cql_keyspace; }

 private:
  StoreOptions options_;
  cql::Session admin_;
  const bool shared_;
  int lock_fd_ = -1;
};

}  // namespace

std::string ops_backend() {
  return QIM_OPS_TEST_BACKEND;
}

std::optional<std::string> ops_unavailable() {
  if (ops_backend() == "redis" && test_redis_endpoints().empty()) return std::string(kTestRedisSkipMessage);
  if (ops_backend() == "scylla" && !env_var("QIM_TEST_CQL_HOSTS"))
    return "QIM_TEST_CQL_HOSTS is unset: no CQL cluster to test against";
  return std::nullopt;
}

Result<std::unique_ptr<AuditTarget>> make_audit_target(const std::string& name, uint32_t shards,
                                                       Keyspace keyspace) {
  StoreOptions o;
  o.shard_count = shards;
  o.backend = ops_backend();
  if (o.backend == "embedded") {
    const std::string dir = std::filesystem::temp_directory_path() / unique("qim_ops_" + name);
    std::filesystem::create_directories(dir);
    o.data_dir = dir + "/mailbox";
    return std::unique_ptr<AuditTarget>(std::make_unique<EmbeddedTarget>(dir, o));
  }
  if (o.backend == "redis") {
    o.redis_endpoints = test_redis_endpoints();
    o.redis_key_prefix = unique_test_prefix("ops");  // short: the prefix is at most 64 bytes
    return std::unique_ptr<AuditTarget>(std::make_unique<RedisTarget>(o));
  }
  o.cql_hosts = cql::split_hosts(*env_var("QIM_TEST_CQL_HOSTS"));
  const bool shared = keyspace == Keyspace::kShared;
  o.cql_keyspace = shared ? kSharedKeyspace : unique("qim_ops");
  auto admin = cql::Session::connect({.hosts = o.cql_hosts});
  if (!admin.ok())
    return Error(Errc::kTransport, "connect to QIM_TEST_CQL_HOSTS: " + admin.error().to_string());
  auto target = std::make_unique<ScyllaTarget>(o, std::move(*admin), shared);
  if (shared) QIM_RETURN_IF_ERROR(target->take_shared());
  return std::unique_ptr<AuditTarget>(std::move(target));
}

QimRun run_qim(const std::map<std::string, std::string>& env, const std::string& args) {
  std::string command = "env";
  for (const auto& [k, v] : env) command += " '" + k + "=" + v + "'";
  command += std::string(" '") + QIM_BINARY + "' " + args + " 2>&1";
  QimRun out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.output.append(buf, n);
  const int status = ::pclose(pipe);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace qim::test
