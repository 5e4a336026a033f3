#pragma once
// The Kafka log's timing defaults, written once: the option structs of every layer that carries them
// (LogOptions, KafkaLogOptions, ProducerOptions, ReaderOptions) start from these, so a new default is one
// edit. Header only, no librdkafka: open_log.h includes it whether or not the Kafka log is built.

#include <chrono>

namespace qim::kafka {

// The bound of one append (message.timeout.ms); QIM_KAFKA_APPEND_TIMEOUT_MS.
inline constexpr std::chrono::milliseconds kDefaultAppendTimeout{5000};
// How long an append may wait for others to share its produce request (linger.ms); QIM_KAFKA_LINGER_MS.
inline constexpr std::chrono::milliseconds kDefaultLinger{5};
// How long the broker may hold a fetch to fill it (fetch.wait.max.ms, decision 39); QIM_KAFKA_FETCH_WAIT_MS.
inline constexpr std::chrono::milliseconds kDefaultFetchWait{25};

}  // namespace qim::kafka
