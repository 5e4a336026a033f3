#!/usr/bin/env bash
# Runs Apache Cassandra 5.0 for QIM's tests: one node ("single") or a three-node ring ("cluster") on loopback.
#
#   scripts/engines/cassandra.sh start [single|cluster]    fetch jars once, start the node(s) in the background
#   scripts/engines/cassandra.sh wait [single|cluster]     until every node answers CQL on 9042 (cluster: and
#                                                          nodetool shows 3 UN)
#   scripts/engines/cassandra.sh stop [single|cluster]     stop the node(s) (both modes if none named); idempotent
#   scripts/engines/cassandra.sh status|logs [MODE] [N]    state of the nodes / last lines of node N's log
#   scripts/engines/cassandra.sh stop-node N | start-node N | wait-node N     one node of the cluster
#   scripts/engines/cassandra.sh nodetool [-n N] ARGS...   nodetool against node N (default: first one up)
#   scripts/engines/cassandra.sh cql [-h HOSTS] [-e STMT]... a tiny CQL client (see cassandra/Cql.java)
#   scripts/engines/cassandra.sh clean [MODE]              stop, then delete the data of the mode(s)
#   scripts/engines/cassandra.sh classpath                 the fetched jars
#
# single:  node 1 on 127.0.0.1 (CQL 9042, storage 7000, JMX 127.0.0.1:7199)
# cluster: node N on 127.0.0.N, N = 1..3 (CQL 9042, storage 7000 each on its own address; JMX on
#          127.0.0.1:7199, 7200, 7201); seed 127.0.0.1. The two modes share 127.0.0.1:9042 and never run
#          at once. QIM_CASSANDRA_ADDRESS_PREFIX (127.0.0.) and QIM_CASSANDRA_JMX_PORT (7199) move them.
# Each node lives in $QIM_RUN_DIR/cassandra/MODE/nodeN (conf/, data/, commitlog/, hints/, system.log, pid).
#
# Environment: QIM_RUN_DIR, QIM_CACHE_DIR (see common.sh), QIM_CASSANDRA_VERSION (5.0.9),
# QIM_CASSANDRA_HEAP (single 768m, cluster 512m a node), QIM_CASSANDRA_WAIT_TIMEOUT (180 s),
# QIM_CASSANDRA_START_ORDER (cluster: parallel (default), seed-first or sequential),
# QIM_CASSANDRA_ADDRESS_PREFIX, QIM_CASSANDRA_JMX_PORT (see above), QIM_CASSANDRA_JIT (full: C1 and C2,
# the default for single; c1: C1 only, the default for cluster: faster start-up, slower steady state),
# QIM_CASSANDRA_TIMER_SLACK_US (1000; 0 keeps the kernel's 50: see README.md, "Timer slack").
set -euo pipefail
QIM_ENGINE=cassandra
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

version=${QIM_CASSANDRA_VERSION:-5.0.9}
home="$QIM_CACHE_DIR/cassandra-$version"
lib="$home/lib"
here="$QIM_ENGINES_DIR/cassandra"
base="$QIM_RUN_DIR/cassandra"
wait_timeout=${QIM_CASSANDRA_WAIT_TIMEOUT:-180}
# Addresses and JMX ports can be moved, e.g. to run beside another copy on a shared machine:
# QIM_CASSANDRA_ADDRESS_PREFIX=127.0.1. puts node N on 127.0.1.N; QIM_CASSANDRA_JMX_PORT=7299 moves JMX.
prefix=${QIM_CASSANDRA_ADDRESS_PREFIX:-127.0.0.}
[[ $prefix =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}\.$ ]] || qim_die "QIM_CASSANDRA_ADDRESS_PREFIX=$prefix: use a loopback prefix such as 127.0.0. or 127.0.1."
jmx_base=${QIM_CASSANDRA_JMX_PORT:-7199}
[[ $jmx_base =~ ^[0-9]+$ ]] || qim_die "QIM_CASSANDRA_JMX_PORT=$jmx_base is not a port"
seed="${prefix}1"
# Cassandra's request workers (SEPWorker) wait for work in parks of 10 µs upwards: with the kernel's 50 µs
# timer slack each of them is a wake-up, 20,000 a second a pool under light load, on a machine whose cores
# QIM shares. A 1 ms slack lets those parks run long; a worker handed work is still woken at once
# (README.md, "Timer slack"; docs/adr/0049-cassandra-timer-slack.md).
slack_us=${QIM_CASSANDRA_TIMER_SLACK_US:-1000}
[[ $slack_us =~ ^[0-9]+$ ]] || qim_die "QIM_CASSANDRA_TIMER_SLACK_US=$slack_us: use a number of microseconds (0: the kernel's default)"

# Four tokens a node, spread evenly over the Murmur3 ring and interleaved between the three nodes.
tokens_of() {
  case $1 in
    1) echo "-9223372036854775808,-4611686018427387905,-2,4611686018427387901" ;;
    2) echo "-7686143364045646507,-3074457345618258604,1537228672809129299,6148914691236517202" ;;
    3) echo "-6148914691236517206,-1537228672809129303,3074457345618258600,7686143364045646503" ;;
  esac
}

nodes_of() { if [[ $1 == cluster ]]; then echo "1 2 3"; else echo 1; fi; }
node_dir() { echo "$base/$1/node$2"; }
node_addr() { echo "$prefix$2"; }
node_jmx() { echo $((jmx_base + $2 - 1)); }
node_pidfile() { echo "$(node_dir "$1" "$2")/cassandra.pid"; }
node_log() { echo "$(node_dir "$1" "$2")/system.log"; }
node_yaml() { echo "$(node_dir "$1" "$2")/conf/cassandra.yaml"; }
node_pid() { qim_pid "$(node_pidfile "$1" "$2")" "$(node_yaml "$1" "$2")"; }

check_mode() { [[ $1 == single || $1 == cluster ]] || qim_die "unknown mode '$1': use single or cluster"; }
other_mode() { if [[ $1 == single ]]; then echo cluster; else echo single; fi; }

# Prints the running mode (single or cluster), or nothing.
running_mode() {
  local m n
  for m in single cluster; do
    for n in $(nodes_of "$m"); do
      if node_pid "$m" "$n" >/dev/null; then
        echo "$m"
        return 0
      fi
    done
  done
}

default_heap() { if [[ $1 == cluster ]]; then echo 512m; else echo 768m; fi; }

fetch() { qim_fetch_jars "cassandra $version" "$here" "$home" "-Dcassandra.version=$version"; }

# The JPMS flags of Cassandra 5.0's conf/jvm17-server.options.
jpms_flags=(
  -Djdk.attach.allowAttachSelf=true
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
  --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
  --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
  --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
  --add-exports java.sql/java.sql=ALL-UNNAMED
  --add-exports java.base/java.lang.ref=ALL-UNNAMED
  --add-exports jdk.unsupported/sun.misc=ALL-UNNAMED
  --add-exports jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
  --add-exports jdk.attach/sun.tools.attach=ALL-UNNAMED
  --add-opens java.base/java.lang.module=ALL-UNNAMED
  --add-opens java.base/jdk.internal.loader=ALL-UNNAMED
  --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens java.base/jdk.internal.reflect=ALL-UNNAMED
  --add-opens java.base/jdk.internal.math=ALL-UNNAMED
  --add-opens java.base/jdk.internal.module=ALL-UNNAMED
  --add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED
  --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens java.base/java.io=ALL-UNNAMED
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
  --add-opens java.base/java.lang=ALL-UNNAMED
  --add-opens java.base/java.util=ALL-UNNAMED
  --add-opens java.base/java.nio=ALL-UNNAMED
  --add-opens java.base/java.util.concurrent.atomic=ALL-UNNAMED
)

# java for tools (nodetool, cql): small heap, quick start-up, quiet logging.
tool_java() {
  qim_require_java
  [[ -f $home/.complete ]] || fetch >&2
  "$QIM_JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto "${jpms_flags[@]}" \
    -Dlogback.configurationFile="$here/logback-tools.xml" -Dcassandra.logdir=/tmp -cp "$lib/*" "$@"
}

nodetool_on() {
  local n=$1
  shift
  tool_java org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p "$(node_jmx "" "$n")" "$@"
}

start_node() {
  local mode=$1 n=$2 pid
  local dir addr jmx pidfile logfile yaml heap
  dir=$(node_dir "$mode" "$n")
  addr=$(node_addr "$mode" "$n")
  jmx=$(node_jmx "$mode" "$n")
  pidfile=$(node_pidfile "$mode" "$n")
  logfile=$(node_log "$mode" "$n")
  yaml=$(node_yaml "$mode" "$n")
  heap=${QIM_CASSANDRA_HEAP:-$(default_heap "$mode")}
  if pid=$(node_pid "$mode" "$n"); then
    qim_log "$mode node $n already running (pid $pid, $addr:9042)"
    return 0
  fi
  qim_require_port_free "$addr" 9042 "cassandra $mode node $n (CQL)"
  qim_require_port_free "$addr" 7000 "cassandra $mode node $n (storage)"
  qim_require_port_free 127.0.0.1 "$jmx" "cassandra $mode node $n (JMX)"
  mkdir -p "$dir/conf" "$dir/data" "$dir/commitlog" "$dir/saved_caches" "$dir/hints" "$dir/cdc_raw" "$dir/logs" "$dir/triggers"
  qim_rotate_log "$logfile"
  qim_render "$here/cassandra.yaml" "$yaml" \
    "CLUSTER_NAME=QIM $mode" "INITIAL_TOKEN=$(tokens_of "$n")" "SEEDS=$seed:7000" \
    "ADDRESS=$addr" "NODE_DIR=$dir"
  local jamm extra_jvm_opts=() cds_opts=() graceful_opts=() jit_opts=() jit
  # Half of a node's start-up CPU goes to the C2 compiler. The cluster (three JVMs on two cores, for RF 3
  # tests, not for benchmarks) runs with the C1 compiler only: about half the CPU and a third less time to
  # form the ring. QIM_CASSANDRA_JIT=full or c1 overrides the choice for either mode.
  jit=${QIM_CASSANDRA_JIT:-$(if [[ $mode == cluster ]]; then echo c1; else echo full; fi)}
  case $jit in
    c1) jit_opts=(-XX:TieredStopAtLevel=1) ;;
    full) ;;
    *) qim_die "QIM_CASSANDRA_JIT=$jit: use full or c1" ;;
  esac
  # By default a stopping node drops the internode messages still queued instead of waiting up to a minute
  # for peers that may be stopping too (3-4 s instead of ~17 s to stop the cluster); its data is flushed
  # either way. QIM_CASSANDRA_GRACEFUL_STOP=1 keeps Cassandra's own behaviour.
  [[ ${QIM_CASSANDRA_GRACEFUL_STOP:-0} == 1 ]] || graceful_opts=(-Dcassandra.test.messagingService.nonGracefulShutdown=true)
  cds_options "$mode" "$n"
  # shellcheck disable=SC2206 # word splitting wanted: QIM_CASSANDRA_JVM_OPTS is a list of JVM options
  [[ -z ${QIM_CASSANDRA_JVM_OPTS:-} ]] || extra_jvm_opts=($QIM_CASSANDRA_JVM_OPTS)
  jamm=$(compgen -G "$lib/jamm-*.jar" | head -n 1) || qim_die "no jamm jar in $lib (incomplete download? delete $home)"
  qim_log "starting $mode node $n on $addr:9042 (heap $heap, JIT $jit, timer slack ${slack_us} µs, JMX 127.0.0.1:$jmx, dir $dir)"
  qim_spawn --timer-slack-ns $((slack_us * 1000)) "$pidfile" "$logfile" "$QIM_JAVA" \
    -ea -da:net.openhft... -XX:+UseThreadPriorities -Xss256k -XX:+UseTLAB -XX:+ResizeTLAB \
    -XX:+PerfDisableSharedMem -Djava.net.preferIPv4Stack=true \
    -XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath="$dir" -XX:+CrashOnOutOfMemoryError -XX:ErrorFile="$dir/hs_err_%p.log" \
    "-Xms${QIM_CASSANDRA_HEAP_MIN:-256m}" "-Xmx$heap" -XX:+UseG1GC -XX:+ParallelRefProcEnabled -XX:MaxTenuringThreshold=1 \
    -XX:G1RSetUpdatingPauseTimePercent=5 -XX:MaxGCPauseMillis=300 -XX:InitiatingHeapOccupancyPercent=70 \
    -XX:ParallelGCThreads=2 -XX:ConcGCThreads=1 \
    "${jpms_flags[@]}" \
    -Dio.netty.tryReflectionSetAccessible=true -Dio.netty.allocator.useCacheForAllThreads=true \
    -Dio.netty.allocator.maxOrder=11 \
    "-javaagent:$jamm" \
    -Dcassandra.jmx.local.port="$jmx" \
    -Dlogback.configurationFile="$here/logback.xml" \
    -Dcassandra.logdir="$dir/logs" \
    -Dcassandra.storagedir="$dir" \
    -Dcassandra.triggers_dir="$dir/triggers" \
    -Dcassandra.config="file://$yaml" \
    -Dcassandra-foreground=yes \
    -Dcassandra.skip_wait_for_gossip_to_settle=0 \
    -Dcassandra.ring_delay_ms="${QIM_CASSANDRA_RING_DELAY_MS:-30000}" \
    -Dcassandra.shutdown_announce_in_ms=500 \
    "${graceful_opts[@]}" \
    "${cds_opts[@]}" "${jit_opts[@]}" "${extra_jvm_opts[@]}" \
    -cp "$lib/*" org.apache.cassandra.service.CassandraDaemon
}

# Class data sharing: the first node 1 to run writes an archive of the classes it loaded when it exits
# (stop), later starts of every node map it: about 1 CPU-second less a node start. The archive is kept in
# the jar cache, one per JVM build; QIM_CASSANDRA_CDS=0 turns this off. A stale or broken archive only
# makes the JVM warn and load classes the usual way.
cds_archive() { echo "$home/cds/cassandra-$QIM_JAVA_TAG.jsa"; }
cds_options() {
  local mode=$1 n=$2 archive dir
  [[ ${QIM_CASSANDRA_CDS:-1} == 1 ]] || return 0
  archive=$(cds_archive)
  dir=$(node_dir "$mode" "$n")
  rm -f "$dir/cds-dump"
  if [[ -s $archive ]]; then
    cds_opts=(-XX:+UnlockDiagnosticVMOptions -XX:+AllowArchivingWithJavaAgent "-XX:SharedArchiveFile=$archive" -Xlog:cds=off -Xlog:cds+dynamic=off)
  elif [[ $n == 1 ]]; then
    mkdir -p "$home/cds"
    local dump="$archive.dump.$$"
    cds_opts=(-XX:+UnlockDiagnosticVMOptions -XX:+AllowArchivingWithJavaAgent "-XX:ArchiveClassesAtExit=$dump" -Xlog:cds=off -Xlog:cds+dynamic=off)
    echo "$dump" >"$dir/cds-dump"
    qim_log "$mode node $n will write a class data sharing archive when it stops (faster starts afterwards)"
  fi
}

# After node N stopped: keeps the archive it wrote at exit if a JVM accepts it.
cds_collect() {
  local mode=$1 n=$2 marker dump archive
  marker="$(node_dir "$mode" "$n")/cds-dump"
  [[ -f $marker ]] || return 0
  dump=$(<"$marker")
  rm -f "$marker"
  archive=$(cds_archive)
  if [[ -s $dump ]] && "$QIM_JAVA" -XX:+UnlockDiagnosticVMOptions -XX:+AllowArchivingWithJavaAgent \
    "-XX:SharedArchiveFile=$dump" -Xshare:on -cp "$lib/*" -version >/dev/null 2>&1; then
    mv -f "$dump" "$archive"
    qim_log "class data sharing archive saved: $archive ($(du -h "$archive" | cut -f1))"
  else
    rm -f "$dump"
    qim_warn "node $n left no usable class data sharing archive; the next start of node 1 tries again"
  fi
}

# Returns once the node's process is gone and its CQL, storage and JMX ports are closed (1 if they stay
# open), so the other mode, or the same node again, can start on them right away.
stop_node() {
  local mode=$1 n=$2 was_running=0 addr
  node_pid "$mode" "$n" >/dev/null && was_running=1
  qim_stop_pidfile "cassandra $mode node $n" "$(node_pidfile "$mode" "$n")" 90 "$(node_yaml "$mode" "$n")"
  cds_collect "$mode" "$n"
  ((was_running)) || return 0
  addr=$(node_addr "$mode" "$n")
  qim_wait_ports_closed "cassandra $mode node $n" 30 "$addr:9042" "$addr:7000" "127.0.0.1:$(node_jmx "$mode" "$n")"
}

node_serves() { qim_port_open "$(node_addr "$1" "$2")" 9042; }

# A node that is not the seed gives up at start if the seed does not answer its first gossip round within
# about ring_delay_ms ("Unable to gossip with any peers"). The nodes start together, so the default ring
# delay is long (30 s: it costs nothing here, the ring is created without bootstrap); should a node still
# give up on a very busy machine, it is started again (up to 3 times) while waiting. Messages go to fd 3 (the waiting loop silences 1 and 2).
declare -A restarts=()
node_serves_or_restart() {
  local mode=$1 n=$2 logfile
  node_serves "$mode" "$n" && return 0
  logfile=$(node_log "$mode" "$n")
  if [[ $n != 1 ]] && ! node_pid "$mode" "$n" >/dev/null && grep -q 'Unable to gossip with any peers' "$logfile" 2>/dev/null &&
    ((${restarts[$n]:-0} < 3)); then
    restarts[$n]=$((${restarts[$n]:-0} + 1))
    qim_warn "$mode node $n gave up waiting for the seed's gossip; starting it again (try ${restarts[$n]} of 3)" 2>&3
    start_node "$mode" "$n" >&3 2>&3
  fi
  return 1
}

wait_node_cql() {
  local mode=$1 n=$2
  qim_wait_for "cassandra $mode node $n CQL on $(node_addr "$mode" "$n"):9042" "$wait_timeout" \
    "$(node_log "$mode" "$n")" "$(node_pidfile "$mode" "$n")" node_serves_or_restart "$mode" "$n" 3>&1
}

# count_un N EXPECTED: nodetool status seen from node N lists at least EXPECTED nodes Up/Normal.
count_un() {
  local n=$1 expected=$2 out
  out=$(nodetool_on "$n" status 2>/dev/null) || return 1
  (($(grep -c '^UN ' <<<"$out") >= expected))
}

first_up_node() {
  local mode=$1 n
  for n in $(nodes_of "$mode"); do
    node_pid "$mode" "$n" >/dev/null && { echo "$n"; return 0; }
  done
  return 1
}

start() {
  local mode=$1 other
  check_mode "$mode"
  other=$(other_mode "$mode")
  if [[ $(running_mode) == "$other" ]]; then
    qim_die "cassandra $other is running; single and cluster share $seed:9042 and never run together: run '$0 stop $other' first"
  fi
  qim_require_java
  fetch
  local t0 n order
  t0=$(qim_now_ms)
  if [[ $mode == single ]]; then
    start_node single 1
  else
    order=${QIM_CASSANDRA_START_ORDER:-parallel}
    case $order in
      parallel) for n in 1 2 3; do start_node cluster "$n"; done ;;
      seed-first)
        # the seed first; the others once it gossips (its storage port is open), together
        start_node cluster 1
        if ! node_pid cluster 2 >/dev/null || ! node_pid cluster 3 >/dev/null; then
          qim_wait_for "seed node 1 gossip on $seed:7000" "$wait_timeout" "$(node_log cluster 1)" \
            "$(node_pidfile cluster 1)" qim_port_open "$seed" 7000
        fi
        start_node cluster 2
        start_node cluster 3
        ;;
      sequential)
        for n in 1 2 3; do
          start_node cluster "$n"
          wait_node_cql cluster "$n"
        done
        ;;
      *) qim_die "QIM_CASSANDRA_START_ORDER=$order: use seed-first, parallel or sequential" ;;
    esac
  fi
  qim_log "cassandra $mode started in $(qim_since "$t0"); run '$0 wait $mode' to wait until it serves"
}

wait_ready() {
  local mode=$1 n t0 pid total=0
  check_mode "$mode"
  t0=$(qim_now_ms)
  for n in $(nodes_of "$mode"); do
    [[ -f $(node_pidfile "$mode" "$n") ]] || qim_die "cassandra $mode node $n was not started: run '$0 start $mode' first"
  done
  for n in $(nodes_of "$mode"); do wait_node_cql "$mode" "$n"; done
  if [[ $mode == cluster ]]; then
    qim_wait_for "nodetool status to show 3 UN nodes" "$wait_timeout" "$(node_log cluster 1)" "" count_un 1 3
  fi
  for n in $(nodes_of "$mode"); do
    if pid=$(node_pid "$mode" "$n"); then
      local rss
      rss=$(qim_rss_mb "$pid")
      total=$((total + rss))
      qim_log "node $n: pid $pid, $(node_addr "$mode" "$n"):9042, RSS $rss MiB"
    fi
  done
  qim_log "cassandra $mode ready (waited $(qim_since "$t0"); RSS of all nodes $total MiB)"
}

wait_node() {
  local n=$1
  wait_node_cql cluster "$n"
  local other
  other=$(first_up_node cluster)
  qim_wait_for "nodetool status to show 3 UN nodes" "$wait_timeout" "$(node_log cluster "$n")" "" count_un "$other" 3
}

stop_mode() {
  local mode=$1 n pids=()
  for n in $(nodes_of "$mode"); do
    if node_pid "$mode" "$n" >/dev/null; then
      stop_node "$mode" "$n" &
      pids+=($!)
    else
      rm -f "$(node_pidfile "$mode" "$n")"
    fi
  done
  local rc=0 p
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  ((${#pids[@]})) || qim_log "cassandra $mode: not running"
  return $rc
}

status() {
  local modes=("$@") m n pid any=0
  ((${#modes[@]})) || modes=(single cluster)
  for m in "${modes[@]}"; do
    for n in $(nodes_of "$m"); do
      if pid=$(node_pid "$m" "$n"); then
        any=1
        local cql="not serving yet"
        node_serves "$m" "$n" && cql="serving"
        qim_log "$m node $n: running, pid $pid, $(node_addr "$m" "$n"):9042 $cql, JMX 127.0.0.1:$(node_jmx "$m" "$n"), RSS $(qim_rss_mb "$pid") MiB"
      elif [[ -d $(node_dir "$m" "$n") ]]; then
        qim_log "$m node $n: stopped ($(node_dir "$m" "$n"))"
      fi
    done
  done
  if ((any)); then return 0; fi
  qim_log "not running"
  return 3
}

cmd=${1:-}
shift || true
case $cmd in
  start) start "${1:-${QIM_CASSANDRA_MODE:-single}}" ;;
  wait)
    mode=${1:-$(running_mode)}
    [[ -n $mode ]] || qim_die "nothing is running: run '$0 start single|cluster' first"
    qim_require_java # a node may have to be started again while waiting
    wait_ready "$mode"
    ;;
  stop)
    qim_require_java
    if [[ $# -ge 1 ]]; then
      check_mode "$1"
      stop_mode "$1"
    else
      stop_mode single
      stop_mode cluster
    fi
    ;;
  status) status "$@" ;;
  logs)
    mode=${1:-$(running_mode)}
    mode=${mode:-single}
    check_mode "$mode"
    f=$(node_log "$mode" "${2:-1}")
    tail -n "${LINES:-100}" "$f" 2>/dev/null || qim_die "no log yet at $f"
    ;;
  stop-node | start-node | wait-node)
    n=${1:-}
    [[ $n =~ ^[123]$ ]] || qim_die "usage: $0 $cmd N (N = 1, 2 or 3: a node of the cluster)"
    case $cmd in
      stop-node)
        qim_require_java
        stop_node cluster "$n"
        ;;
      start-node)
        [[ $(running_mode) != single ]] || qim_die "cassandra single is running: the cluster's nodes cannot start (run '$0 stop single')"
        qim_require_java
        fetch
        start_node cluster "$n"
        qim_log "run '$0 wait-node $n' to wait until it serves and the ring shows 3 UN"
        ;;
      wait-node)
        qim_require_java
        wait_node "$n"
        ;;
    esac
    ;;
  nodetool)
    node=""
    if [[ ${1:-} == -n ]]; then
      node=${2:?-n needs a node number}
      shift 2
    fi
    if [[ -z $node ]]; then
      mode=$(running_mode)
      [[ -n $mode ]] || qim_die "nothing is running"
      node=$(first_up_node "$mode")
    fi
    nodetool_on "$node" "$@"
    ;;
  cql)
    # without -h: the nodes of the running mode (or node 1's address)
    if [[ " $* " != *" -h "* ]]; then
      mode=$(running_mode)
      hosts=""
      for n in $(nodes_of "${mode:-single}"); do hosts+="${hosts:+,}$(node_addr "" "$n")"; done
      set -- -h "$hosts" "$@"
    fi
    tool_java "$here/Cql.java" "$@"
    ;;
  clean)
    qim_require_java
    modes=("$@")
    ((${#modes[@]})) || modes=(single cluster)
    for m in "${modes[@]}"; do
      check_mode "$m"
      stop_mode "$m"
      qim_log "deleting $base/$m"
      rm -rf "${base:?}/$m"
    done
    ;;
  classpath)
    [[ -f $home/.complete ]] || fetch >&2
    echo "$lib/*"
    ;;
  *)
    sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
