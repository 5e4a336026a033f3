#pragma once
// Small files `qim up` keeps in its data directory:
//   auth-secret    the development token secret, created on first `qim up` when QIM_AUTH_SECRET is unset
//                  (0600), so `qim token` mints tokens the running gateway accepts
//   running.json   {"pid":..,"gateway_port":..,"admin_port":..,"epoch":..} while `qim up` runs (ports as
//                  bound, so port 0 works), removed on a clean exit; operator commands find the instance here

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"

namespace qim {

// The secret in <data_dir>/auth-secret, creating it (32 random bytes, hex) if it does not exist.
Result<std::string> load_or_create_dev_secret(const std::string& data_dir);
// The secret in <data_dir>/auth-secret, nullopt if there is none.
Result<std::optional<std::string>> load_dev_secret(const std::string& data_dir);

struct RunningInstance {
  int64_t pid = 0;
  uint16_t gateway_port = 0;
  uint16_t admin_port = 0;
  uint32_t epoch = 0;
  uint32_t shards = 0;  // the deployment's shard count (QIM_SHARDS as resolved); 0 if the file had none
};
Status write_running_file(const std::string& data_dir, const RunningInstance& instance);
void remove_running_file(const std::string& data_dir);
// What running.json says, nullopt if absent. CorruptEntry if it does not parse.
Result<std::optional<RunningInstance>> read_running_file(const std::string& data_dir);

// For a command that opens the embedded store itself (RocksDB admits one process per directory): NotFound
// is not used; Io naming the running instance's pid, running.json and what to do instead when running.json
// names a live process; ok when there is none (or only a stale file of a process that is gone).
Status refuse_if_in_use(const std::string& data_dir, std::string_view command);

}  // namespace qim
