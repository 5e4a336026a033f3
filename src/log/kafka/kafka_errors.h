#pragma once
// The one place a librdkafka error code becomes a QIM error value. What the gateway answers follows from
// the Errc (gateway/protocol/wire_code.h): the broker being unreachable, slow or refusing for now is
// Transport or Timeout (UNAVAILABLE: the client retries); a record the broker can never take is
// InvalidArgument; a refusal caused by this server (its clock, its topic settings) is Config.
// Stateless; safe from any thread.

#include <librdkafka/rdkafka.h>

#include <string>

#include "core/status.h"

namespace qim::kafka {

Errc errc_of(rd_kafka_resp_err_t err);

// "<what>: <librdkafka's description> (<error name>)" with errc_of(err).
Error error_of(rd_kafka_resp_err_t err, const std::string& what);

}  // namespace qim::kafka
