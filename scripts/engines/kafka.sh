#!/usr/bin/env bash
# Runs a single-node Apache Kafka 4.x (KRaft, one combined broker+controller) on 127.0.0.1 for QIM.
#
#   scripts/engines/kafka.sh {start|wait|stop|logs|status|clean|classpath|run-class CLASS [ARGS...]}
#
#   start      fetches the jars once (Maven, into $QIM_CACHE_DIR/kafka-VERSION), formats the storage once,
#              starts the server in the background (does nothing if it already runs)
#   wait       waits until the broker serves on 127.0.0.1:$QIM_KAFKA_PORT ($QIM_KAFKA_WAIT_TIMEOUT, 120 s)
#   stop       SIGTERM (controlled shutdown), SIGKILL after 60 s; idempotent
#   logs       last lines of the server log ($LINES, default 100)
#   status     running or not, pid, ports, memory
#   clean      stop, then delete the data (topics, offsets, cluster id): the next start is a new cluster
#   classpath  prints the classpath of the fetched jars
#   run-class  runs a Kafka tool class with those jars, e.g.
#              run-class org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:19092 --list
#
# Environment: QIM_RUN_DIR, QIM_CACHE_DIR (see common.sh), QIM_KAFKA_VERSION (4.3.1), QIM_KAFKA_PORT
# (19092), QIM_KAFKA_CONTROLLER_PORT (19093), QIM_KAFKA_HEAP (512m), QIM_KAFKA_EXTRA_CONFIG (a file of
# extra server properties appended to the generated server.properties).
set -euo pipefail
QIM_ENGINE=kafka
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

version=${QIM_KAFKA_VERSION:-4.3.1}
port=${QIM_KAFKA_PORT:-19092}
cport=${QIM_KAFKA_CONTROLLER_PORT:-19093}
heap=${QIM_KAFKA_HEAP:-512m}
home="$QIM_CACHE_DIR/kafka-$version"
lib="$home/lib"
dir="$QIM_RUN_DIR/kafka"
data="$dir/data"
props="$dir/server.properties"
pidfile="$dir/kafka.pid"
logfile="$dir/kafka.log"
marker="$props" # the server's command line names its own properties file
here="$QIM_ENGINES_DIR/kafka"

running_pid() { qim_pid "$pidfile" "$marker"; }

fetch() { qim_fetch_jars "kafka $version" "$here" "$home" "-Dkafka.version=$version"; }

# java with the fetched jars, quiet logging, fast start-up (for tools, not for the server)
tool_java() {
  qim_require_java
  [[ -f $home/.complete ]] || fetch >&2
  "$QIM_JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    -Dlog4j2.configurationFile="$here/tools-log4j2.properties" -cp "$lib/*" "$@"
}

write_config() {
  cat >"$props" <<EOF
# written by scripts/engines/kafka.sh at each start: a single-node development cluster (KRaft, combined mode)
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$data
# one node: every internal topic with one replica
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
min.insync.replicas=1
default.replication.factor=1
num.partitions=1
# QIM creates its topics explicitly; automatic creation stays on for tools and experiments
auto.create.topics.enable=true
group.initial.rebalance.delay.ms=0
# sized for a 2-core machine
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
background.threads=4
log.retention.hours=168
log.segment.bytes=134217728
EOF
  if [[ -n ${QIM_KAFKA_EXTRA_CONFIG:-} ]]; then
    [[ -f $QIM_KAFKA_EXTRA_CONFIG ]] || qim_die "QIM_KAFKA_EXTRA_CONFIG=$QIM_KAFKA_EXTRA_CONFIG is not a file"
    { echo "# from QIM_KAFKA_EXTRA_CONFIG=$QIM_KAFKA_EXTRA_CONFIG"; cat "$QIM_KAFKA_EXTRA_CONFIG"; } >>"$props"
  fi
}

start() {
  local pid
  if pid=$(running_pid); then
    qim_log "already running (pid $pid, 127.0.0.1:$port); nothing to do"
    return 0
  fi
  qim_require_port_free 127.0.0.1 "$port" "kafka broker"
  qim_require_port_free 127.0.0.1 "$cport" "kafka controller"
  qim_require_java
  fetch
  mkdir -p "$dir" "$data"
  qim_rotate_log "$logfile"
  write_config
  if [[ ! -f $data/meta.properties ]]; then
    local id t0
    # A random base64url id may begin with '-', which the tool's argument parser takes for an option:
    # draw again until it does not.
    until [[ -s $dir/cluster.id && $(head -c 1 "$dir/cluster.id") != - ]]; do
      head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' >"$dir/cluster.id"
    done
    id=$(<"$dir/cluster.id")
    t0=$(qim_now_ms)
    qim_log "formatting storage $data (cluster id $id, standalone controller quorum)"
    "$QIM_JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
      -Dlog4j2.configurationFile="$here/tools-log4j2.properties" -cp "$lib/*" \
      kafka.tools.StorageTool format --standalone -t "$id" -c "$props" >>"$logfile" 2>&1 ||
      { qim_show_log_tail "$logfile"; qim_die "formatting the storage failed; see $logfile"; }
    qim_log "formatted in $(qim_since "$t0")"
  fi
  qim_log "starting Kafka $version broker+controller on 127.0.0.1:$port (controller $cport), heap $heap, dir $dir"
  qim_spawn "$pidfile" "$logfile" "$QIM_JAVA" -server "-Xmx$heap" -Xms128m \
    -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent \
    -XX:MaxInlineLevel=15 -Djava.awt.headless=true -XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath="$dir" \
    -Dkafka.logs.dir="$dir" -Dlog4j2.configurationFile="$here/log4j2.properties" \
    -cp "$lib/*" kafka.Kafka "$props"
  qim_log "started (pid $(<"$pidfile")); log $logfile; run '$0 wait' to wait until it serves"
}

ready() {
  qim_port_open 127.0.0.1 "$port" && grep -q 'Kafka Server started' "$logfile"
}

wait_ready() {
  [[ -f $pidfile ]] || qim_die "not started (no pid file $pidfile): run '$0 start' first"
  qim_wait_for "kafka broker 127.0.0.1:$port" "${QIM_KAFKA_WAIT_TIMEOUT:-120}" "$logfile" "$pidfile" ready
  local pid
  pid=$(running_pid) && qim_log "kafka ready: pid $pid, RSS $(qim_rss_mb "$pid") MiB"
}

stop() { qim_stop_pidfile "kafka" "$pidfile" 60 "$marker"; }

status() {
  local pid
  if pid=$(running_pid); then
    local state="starting"
    ready && state="serving"
    qim_log "running: pid $pid, Kafka $version, broker 127.0.0.1:$port ($state), controller 127.0.0.1:$cport, RSS $(qim_rss_mb "$pid") MiB, dir $dir"
  else
    qim_log "not running (dir $dir)"
    return 3
  fi
}

case ${1:-} in
  start) start ;;
  wait) wait_ready ;;
  stop) stop ;;
  logs) tail -n "${LINES:-100}" "$logfile" 2>/dev/null || qim_die "no log yet at $logfile" ;;
  status) status ;;
  clean)
    stop
    qim_log "deleting $dir"
    rm -rf "$dir"
    ;;
  classpath)
    [[ -f $home/.complete ]] || fetch >&2
    echo "$lib/*"
    ;;
  run-class)
    shift
    [[ $# -ge 1 ]] || qim_die "usage: $0 run-class CLASS [ARGS...]"
    tool_java "$@"
    ;;
  *)
    echo "usage: $0 {start|wait|stop|logs|status|clean|classpath|run-class CLASS [ARGS...]}" >&2
    exit 2
    ;;
esac
