#include "e2e/deployment.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

namespace qim::e2e {

uint16_t Deployment::port_for(const std::string& user) const {
  const auto ports = gateway_ports();
  return ports[std::hash<std::string>{}(user) % ports.size()];
}

std::string deployment_under_test() {
  const char* d = std::getenv("QIM_E2E_DEPLOYMENT");
  return d && *d ? d : "single";
}

namespace {

class SingleDeployment final : public Deployment {
 public:
  SingleDeployment(std::string binary, std::string dir, Env env)
      : process_(std::move(binary), std::move(dir), std::move(env)) {}

  Status start(const Env& extra) override { return started(process_.start(extra)); }
  int stop(std::chrono::seconds timeout) override { return process_.stop(timeout); }
  void kill() override { process_.kill(); }
  void kill_nodes() override { process_.kill(); }
  Status start_nodes(const Env& extra) override { return started(process_.start(extra)); }
  int run_expecting_exit(const Env& extra, std::chrono::seconds timeout) override {
    return process_.run_expecting_exit(extra, timeout);
  }
  Status kill_process(const std::string& name) override {
    if (name != "qim") return Error(Errc::kInvalidArgument, "no process '" + name + "' (only 'qim')");
    process_.kill();
    return {};
  }
  Status start_process(const std::string& name, const Env& extra) override {
    if (name != "qim") return Error(Errc::kInvalidArgument, "no process '" + name + "' (only 'qim')");
    return started(process_.start(extra));
  }
  Result<uint16_t> admin_port_of(const std::string& name) const override {
    if (name != "qim") return Error(Errc::kInvalidArgument, "no process '" + name + "' (only 'qim')");
    return process_.admin_port();
  }
  Status signal_process(const std::string& name, int sig) override {
    if (name != "qim") return Error(Errc::kInvalidArgument, "no process '" + name + "' (only 'qim')");
    return process_.signal(sig);
  }
  Status set_process_env(const std::string& name, const Env& env) override {
    if (name != "qim") return Error(Errc::kInvalidArgument, "no process '" + name + "' (only 'qim')");
    for (const auto& [k, v] : env) process_.base_env()[k] = v;
    return {};
  }
  uint32_t shard_count() const override { return shards_; }
  Result<int> wait_process_exit(const std::string& name, std::chrono::seconds timeout) override {
    if (name != "qim") return Error(Errc::kInvalidArgument, "no process '" + name + "' (only 'qim')");
    return process_.wait_for_exit(timeout);
  }
  bool running() const override { return process_.running(); }
  std::vector<uint16_t> gateway_ports() const override { return {process_.port()}; }
  std::vector<uint16_t> admin_ports() const override { return {process_.admin_port()}; }
  uint16_t fanout_admin_port() const override { return process_.admin_port(); }
  const std::string& data_dir() const override { return process_.data_dir(); }
  Env& operator_env() override { return process_.base_env(); }
  std::string log_tail(size_t bytes) const override { return process_.log_tail(bytes); }
  void keep_data_if(std::function<bool()> keep) override { process_.keep_data_if(std::move(keep)); }

 private:
  // After a start: the shard count the process wrote into its running.json.
  Status started(Status st) {
    if (!st.ok()) return st;
    std::ifstream in(process_.data_dir() + "/running.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = text.find("\"shards\":");
    if (at == std::string::npos) return Error(Errc::kCorruptEntry, "no shard count in running.json: " + text);
    shards_ = static_cast<uint32_t>(std::strtoul(text.c_str() + at + 9, nullptr, 10));
    return {};
  }

  QimProcess process_;
  uint32_t shards_ = 0;
};

class DistributedDeployment final : public Deployment {
 public:
  DistributedDeployment(std::string binary, std::string root, Env env, const std::string& id, uint32_t shards,
                        Ownership ownership)
      : root_(std::move(root)), env_(std::move(env)), shards_(shards) {
    env_["QIM_LOG_BACKEND"] = "kafka";
    env_["QIM_SHARDS"] = std::to_string(shards);
    auto add = [&](std::vector<std::unique_ptr<QimProcess>>& into, const std::string& command,
                   const std::string& name, Env extra) {
      const std::string dir = root_ + "/" + name;
      std::filesystem::create_directories(dir);
      Env e = env_;
      for (auto& [k, v] : extra) e[k] = std::move(v);
      into.push_back(std::make_unique<QimProcess>(binary, dir, std::move(e), command));
      names_[into.back().get()] = name;
    };
    constexpr uint32_t kNodes = 2;
    for (uint32_t i = 0; i < kNodes; ++i) {
      const uint32_t first = shards * i / kNodes, last = shards * (i + 1) / kNodes - 1;
      Env node = {{"QIM_NODE_ID", id + "-node-" + std::to_string(i + 1)}};
      if (ownership == Ownership::kStatic)
        node["QIM_OWNED_SHARDS"] = std::to_string(first) + "-" + std::to_string(last);
      add(nodes_, "mailbox", "mailbox-" + std::to_string(i + 1), std::move(node));
    }
    add(others_, "archiver", "archiver", {});
    add(others_, "fanout", "fanout", {});
    for (int i = 1; i <= 2; ++i)
      add(gateways_, "gateway", "gateway-" + std::to_string(i),
          {{"QIM_GATEWAY_ID", id + "-gw-" + std::to_string(i)}});
    // Refuses to start in scenario 12: owns every shard at the epoch it is given.
    add(refused_, "mailbox", "mailbox-refused",
        {{"QIM_NODE_ID", id + "-node-refused"}, {"QIM_OWNED_SHARDS", "0-" + std::to_string(shards - 1)}});
    operator_env_ = env_;
    operator_env_["QIM_DATA_DIR"] = others_.back()->data_dir();  // the fanout's: replay goes there
  }

  ~DistributedDeployment() override {
    if (running()) stop(std::chrono::seconds(30));
    const bool keep = keep_ && keep_();
    // The processes remove their own directories unless kept; then the root goes too.
    for (auto* p : all()) p->keep_data_if([keep] { return keep; });
    nodes_.clear();
    others_.clear();
    gateways_.clear();
    refused_.clear();
    if (!keep) {
      std::error_code ignored;
      std::filesystem::remove_all(root_, ignored);
    }
  }

  Status start(const Env& extra) override {
    // Nodes first (they fail closed first), then archiver and fanout, gateways last, as `qim up` orders.
    QIM_RETURN_IF_ERROR(start_nodes(extra));
    for (auto& p : others_) QIM_RETURN_IF_ERROR(start_one(*p, extra));
    for (auto& p : gateways_) QIM_RETURN_IF_ERROR(start_one(*p, extra));
    return {};
  }

  int stop(std::chrono::seconds timeout) override {
    // Gateways first (no new SENDs), then fanout and the archiver (the Outbox drained), then the nodes.
    int first = 0;
    auto keep = [&first](int code) {
      if (code != 0 && first == 0) first = code;
    };
    for (auto& p : gateways_)
      if (p->running()) keep(p->stop(timeout));
    for (auto it = others_.rbegin(); it != others_.rend(); ++it)
      if ((*it)->running()) keep((*it)->stop(timeout));
    for (auto& p : nodes_)
      if (p->running()) keep(p->stop(timeout));
    return first;
  }

  void kill() override {
    for (auto* p : all()) p->kill();
  }
  void kill_nodes() override {
    for (auto& p : nodes_) p->kill();
  }
  Status start_nodes(const Env& extra) override {
    for (auto& p : nodes_) QIM_RETURN_IF_ERROR(start_one(*p, extra));
    return {};
  }
  int run_expecting_exit(const Env& extra, std::chrono::seconds timeout) override {
    return refused_.front()->run_expecting_exit(extra, timeout);
  }

  Status kill_process(const std::string& name) override {
    QIM_ASSIGN_OR_RETURN(QimProcess * p, find(name));
    p->kill();
    return {};
  }
  Status start_process(const std::string& name, const Env& extra) override {
    QIM_ASSIGN_OR_RETURN(QimProcess * p, find(name));
    return start_one(*p, extra);
  }
  Result<uint16_t> admin_port_of(const std::string& name) const override {
    QIM_ASSIGN_OR_RETURN(QimProcess * p, find(name));
    return p->admin_port();
  }
  Status signal_process(const std::string& name, int sig) override {
    QIM_ASSIGN_OR_RETURN(QimProcess * p, find(name));
    return p->signal(sig);
  }
  Status set_process_env(const std::string& name, const Env& env) override {
    QIM_ASSIGN_OR_RETURN(QimProcess * p, find(name));
    for (const auto& [k, v] : env) p->base_env()[k] = v;
    return {};
  }
  Result<int> wait_process_exit(const std::string& name, std::chrono::seconds timeout) override {
    QIM_ASSIGN_OR_RETURN(QimProcess * p, find(name));
    return p->wait_for_exit(timeout);
  }

  bool running() const override {
    for (auto* p : all())
      if (p->running()) return true;
    return false;
  }
  std::vector<uint16_t> gateway_ports() const override {
    std::vector<uint16_t> out;
    for (const auto& p : gateways_) out.push_back(p->port());
    return out;
  }
  std::vector<uint16_t> admin_ports() const override {
    std::vector<uint16_t> out;
    for (auto* p : all())
      if (p->running()) out.push_back(p->admin_port());
    return out;
  }
  uint16_t fanout_admin_port() const override { return others_.back()->admin_port(); }
  uint32_t shard_count() const override { return shards_; }
  const std::string& data_dir() const override { return operator_env_.at("QIM_DATA_DIR"); }
  Env& operator_env() override { return operator_env_; }
  std::string log_tail(size_t bytes) const override {
    std::string out;
    for (auto* p : all()) {
      std::string tail = p->log_tail(bytes);
      if (!tail.empty()) out += "==> " + names_.at(p) + " <==\n" + tail + "\n";
    }
    return out;
  }
  void keep_data_if(std::function<bool()> keep) override { keep_ = std::move(keep); }

 private:
  Status start_one(QimProcess& p, const Env& extra) {
    Status s = p.start(extra);
    if (!s.ok()) return Error(s.code(), names_.at(&p) + ": " + s.error().message());
    return {};
  }
  Result<QimProcess*> find(const std::string& name) const {
    for (auto* p : all())
      if (names_.at(p) == name) return p;
    return Error(Errc::kInvalidArgument, "no process '" + name + "' in this deployment");
  }
  std::vector<QimProcess*> all() const {
    std::vector<QimProcess*> out;
    for (const auto* group : {&nodes_, &others_, &gateways_, &refused_})
      for (const auto& p : *group) out.push_back(p.get());
    return out;
  }

  std::string root_;
  Env env_;
  uint32_t shards_;
  Env operator_env_;
  std::function<bool()> keep_;
  std::map<const QimProcess*, std::string> names_;
  std::vector<std::unique_ptr<QimProcess>> nodes_;
  std::vector<std::unique_ptr<QimProcess>> others_;  // archiver, fanout (fanout last)
  std::vector<std::unique_ptr<QimProcess>> gateways_;
  std::vector<std::unique_ptr<QimProcess>> refused_;
};

}  // namespace

std::unique_ptr<Deployment> single_deployment(std::string binary, std::string dir, Env env) {
  return std::make_unique<SingleDeployment>(std::move(binary), std::move(dir), std::move(env));
}

std::unique_ptr<Deployment> distributed_deployment(std::string binary, std::string root, Env env,
                                                   const std::string& id, uint32_t shards,
                                                   Ownership ownership) {
  return std::make_unique<DistributedDeployment>(std::move(binary), std::move(root), std::move(env), id,
                                                 shards, ownership);
}

}  // namespace qim::e2e
