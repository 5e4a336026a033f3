#pragma once
// What an operator checks when an engine cannot be reached (docs/operations.md: "the message names the
// variable to check"): the QIM_* variables that say where each engine is.

#include "core/status.h"
#include "mailbox/store_options.h"

namespace qim {

// `e` unchanged unless it is Transport or Timeout; then `e` with "; check <VARIABLE> (now '<value>' |
// unset: <default>)" for each engine the configuration in `env` uses whose name or address the message
// mentions (the mailbox Redis, the routing Redis, the CQL hosts, the Kafka brokers), or for every engine
// it uses when the message names none of them.
Error with_engine_hint(const Error& e, const EnvLookup& env);

}  // namespace qim
