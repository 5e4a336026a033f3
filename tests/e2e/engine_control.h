#pragma once
// The run's engines, for the fault tests that stop one and start it again (issue 9, item 9). They go
// through the project's own engine scripts (scripts/engines/*.sh) in QIM_TEST_ENGINES_DIR, which
// scripts/test.sh exports; the scripts' variables (QIM_RUN_DIR, QIM_KAFKA_PORT, QIM_CASSANDRA_*, ...) are
// inherited from the test's environment, so a command acts on the very engines the run started and on
// nothing else.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace qim::e2e {

// QIM_TEST_ENGINES_DIR, or nullopt when it is unset or empty (the fault tests that need it then skip,
// naming the variable).
std::optional<std::string> engines_dir();

// Runs `bash <engines_dir>/<script> args...` and waits for it at most `timeout`. OK when it exits 0.
// Config when QIM_TEST_ENGINES_DIR is unset; Timeout (the script killed) when it runs longer; Transport
// naming the command, its exit code and the end of its output when it fails. Its output also goes to the
// test's stderr, prefixed, so a failed run shows what the engine said. Not thread-safe with respect to
// other engine commands on the same engine (the scripts are not).
Status run_engine_script(const std::string& script, const std::vector<std::string>& args,
                         std::chrono::seconds timeout = std::chrono::seconds(240));

}  // namespace qim::e2e
