#include "log/kafka/kafka_errors.h"

namespace qim::kafka {

Errc errc_of(rd_kafka_resp_err_t err) {
  switch (err) {
    // Waited for the broker longer than our bound (message.timeout.ms, a request timeout).
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
      return Errc::kTimeout;
    // The record itself can never be taken: retrying it unchanged is pointless.
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
      return Errc::kInvalidArgument;
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
      return Errc::kExpiredCursor;
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
      return Errc::kPermissionDenied;
    // A CreateTime the broker refuses (message.timestamp.after.max.ms): this process's clock is off, which
    // is the server's problem, not the client's.
    case RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP:
    case RD_KAFKA_RESP_ERR_INVALID_CONFIG:
    case RD_KAFKA_RESP_ERR_INVALID_PARTITIONS:
    case RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR:
    case RD_KAFKA_RESP_ERR_POLICY_VIOLATION:
      return Errc::kConfig;
    // Everything else (connection refused, all brokers down, no leader, not enough replicas, the
    // producer purged on close, a fatal idempotence error) means "the log cannot take it now".
    default:
      return Errc::kTransport;
  }
}

Error error_of(rd_kafka_resp_err_t err, const std::string& what) {
  return Error(errc_of(err), what + ": " + rd_kafka_err2str(err) + " (" + rd_kafka_err2name(err) + ")");
}

}  // namespace qim::kafka
