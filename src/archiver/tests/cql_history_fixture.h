#pragma once
// What the CQL history tests share: the cluster of QIM_TEST_CQL_HOSTS and a keyspace per test.

#include <optional>
#include <string>

#include "archiver/cql/cql_history_store.h"

namespace qim::test {

inline constexpr const char* kCqlSkipMessage =
    "QIM_TEST_CQL_HOSTS is unset: no CQL cluster to test the CQL history store against";

// QIM_TEST_CQL_HOSTS, or nullopt when unset or blank.
std::optional<std::string> test_cql_hosts();
// "history_test_<pid>_<n>": no two tests (or test processes) share a keyspace.
std::string unique_history_keyspace();
// Options for a store in `keyspace` on QIM_TEST_CQL_HOSTS (generous timeouts: the node is shared).
CqlHistoryOptions test_cql_history_options(const std::string& keyspace);

}  // namespace qim::test
