#!/usr/bin/env bash
# Smoke test of scripts/engines/kafka.sh: start (unless running), create a topic, produce a message with
# the console producer and consume it back with the console consumer, delete the topic, stop (only if it
# started the broker). Uses the Java tools of the fetched Kafka jars. With QIM_SMOKE_USE_RUNNING=1
# (scripts/test.sh) it never starts a broker: none running fails.
set -uo pipefail
SMOKE_NAME=kafka
source "$(dirname "${BASH_SOURCE[0]}")/smoke_lib.sh"
kafka=("$ENGINES/kafka.sh")
bootstrap="127.0.0.1:${QIM_KAFKA_PORT:-19092}"

started=0
if "${kafka[@]}" status >/dev/null 2>&1; then
  echo "kafka already running: using it, leaving it running"
elif smoke_use_running; then
  smoke_fail "kafka is not running (QIM_SMOKE_USE_RUNNING=1: the caller starts it, the smoke must not)"
  smoke_summary
  exit
else
  "${kafka[@]}" start && started=1
fi
smoke_check "broker serves on $bootstrap" "${kafka[@]}" wait

topic="qim-smoke-$$-$RANDOM"
smoke_check "create topic $topic" "${kafka[@]}" run-class org.apache.kafka.tools.TopicCommand \
  --bootstrap-server "$bootstrap" --create --topic "$topic" --partitions 1 --replication-factor 1

message="hello from kafka smoke $RANDOM"
smoke_check "produce one message (acks=all)" bash -c 'printf "%s\n" "$1" | "$2" run-class org.apache.kafka.tools.ConsoleProducer \
  --bootstrap-server "$3" --topic "$4" --producer-property acks=all' _ "$message" "${kafka[0]}" "$bootstrap" "$topic"

got=$("${kafka[@]}" run-class org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$bootstrap" \
  --topic "$topic" --from-beginning --max-messages 1 --timeout-ms 30000 2>/dev/null)
if [[ $got == "$message" ]]; then smoke_pass "consume the message back"; else smoke_fail "consumed '$got', expected '$message'"; fi

smoke_check "delete topic $topic" "${kafka[@]}" run-class org.apache.kafka.tools.TopicCommand \
  --bootstrap-server "$bootstrap" --delete --topic "$topic"

if ((started)); then "${kafka[@]}" stop; fi
smoke_summary
