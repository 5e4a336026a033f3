#!/usr/bin/env bash
# Starts or stops every real engine QIM's distributed mode uses, for tests and benchmarks on one machine.
#
#   scripts/engines/all.sh start [single|cluster|none]   Redis instances, Kafka, Cassandra (default single);
#                                                        returns once all of them serve
#   scripts/engines/all.sh stop                          stops all of them (the Redis instances named below,
#                                                        Kafka, both Cassandra modes); idempotent
#   scripts/engines/all.sh status
#
# Redis instances: $QIM_REDIS_INSTANCES, "NAME:PORT ..." (default "mailbox0:16379 mailbox1:16380 routing:16381").
# The JVMs are started first and waited for together, which is faster than one after the other.
set -euo pipefail
QIM_ENGINE=all
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
here=$QIM_ENGINES_DIR
instances=${QIM_REDIS_INSTANCES:-mailbox0:16379 mailbox1:16380 routing:16381}

start() {
  local mode=${1:-single} t0 inst
  [[ $mode == single || $mode == cluster || $mode == none ]] || qim_die "unknown Cassandra mode '$mode': single, cluster or none"
  t0=$(qim_now_ms)
  [[ $mode == none ]] || "$here/cassandra.sh" start "$mode"
  "$here/kafka.sh" start
  for inst in $instances; do "$here/redis.sh" start "${inst%%:*}" "${inst##*:}"; done
  for inst in $instances; do "$here/redis.sh" wait "${inst%%:*}" "${inst##*:}"; done
  "$here/kafka.sh" wait
  [[ $mode == none ]] || "$here/cassandra.sh" wait "$mode"
  qim_log "all engines ready in $(qim_since "$t0")"
}

# Only the Redis instances of $QIM_REDIS_INSTANCES: others in the same run dir may belong to someone else.
stop() {
  local inst
  "$here/kafka.sh" stop
  "$here/cassandra.sh" stop
  for inst in $instances; do "$here/redis.sh" stop "${inst%%:*}" "${inst##*:}"; done
}

status() {
  local inst rc=0
  for inst in $instances; do "$here/redis.sh" status "${inst%%:*}" "${inst##*:}" || true; done
  "$here/kafka.sh" status || rc=3
  "$here/cassandra.sh" status || true
  return $rc
}

case ${1:-} in
  start) start "${2:-single}" ;;
  stop) stop ;;
  status) status ;;
  *)
    echo "usage: $0 {start [single|cluster|none]|stop|status}" >&2
    exit 2
    ;;
esac
