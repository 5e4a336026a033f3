#!/usr/bin/env bash
# The ladder (issue 10, docs/benchmarks.md): one command runs qim-load's rate ladder over real WebSockets
# against each configuration in turn on this machine, and writes one results folder:
#
#   relay        qim-relay: the client protocol with no storage, the ceiling every other row is set against
#   embedded     `qim up`: one process, embedded log and store
#   scylla-p64   the distributed deployment (scripts/distributed.sh: Kafka, routing Redis, Cassandra, 2
#   scylla-p1    gateways, fanout, 2 MailboxNodes, archiver) on the scylla store at page limit 64 / 1,
#   scylla-lwt   on form A (the LWT store, the seed's comparison),
#   redis        and on the Redis store (the seed's control)
#
#   bash scripts/bench/ladder.sh [configuration...]        default: all six, in the order above
#   bash scripts/bench/ladder.sh --report RESULTS-DIR       rebuild the report of a run from its logs/
#
# Results in $QIM_LADDER_OUT (default bench-results/ladder-<UTC time>): ladder.md (the seed's table, each
# configuration against the relay, the seed's ratios per step, issue 10's targets judged on this run, then
# qim-load's own tables per configuration with the CPU of every process and what the engine counted),
# ladder.csv (every step), ladder.png (e2e P99
# against offered rate, one line per configuration, the SLO drawn), and the logs. A progress line per
# second comes on stdout. Steps past saturation stay in the table with delivered % and the backlog; a step
# that falls behind leaves its backlog to the next step of the same configuration.
#
# Environment (all optional):
#   QIM_LADDER_RATES            offered rates of every configuration, msg/s (default: embedded
#                               "200 2000 4000 6000 8000 10000 12000 13500 15000 17500 20000 25000", the seed's,
#                               issue 10's CPU target and the steps between; the relay the same to 10000,
#                               then 15000 20000 30000 40000 50000; scylla page 64 "200 1000 1500 2000
#                               3000 4000"; the other distributed "200 1000 1500 2000"; scylla-lwt
#                               "20 40 80 200", form A's rows in the seed and the steps between)
#   QIM_LADDER_RATES_<config>   the rates of one configuration, '-' as '_' (QIM_LADDER_RATES_scylla_p1)
#   QIM_LADDER_SECONDS          seconds per step (20); QIM_LADDER_DRAIN: seconds to wait for late
#                               deliveries after a step (10); QIM_LADDER_PAIRS: one-to-one pairs (100)
#   QIM_LADDER_WARMUP           seconds at the first rate before a distributed ladder, not reported: the
#                               JVM engines compile their hot paths first (60; 30 left them cold)
#   QIM_LADDER_IDLE_BUSY        before each configuration the ladder flushes dirty pages (sync) and waits
#                               until the cores' busy share stays below this for 3 s (0.15), at most
#                               QIM_LADDER_SETTLE_MAX seconds (120): the last configuration's exiting
#                               engines and writeback stay out of the next one's steps; 1 skips the wait.
#                               The report also lists the disk's writes and flushes per configuration.
#   QIM_LADDER_RELAY_PORT (7750), QIM_LADDER_EMBEDDED_PORT (7760, admin +1)
#   QIM_SKIP_BUILD=1            use ./build/release as it is
#   The distributed deployment's own variables (scripts/distributed.sh: QIM_DISTRIBUTED_BASE_PORT,
#   QIM_DISTRIBUTED_REDIS_PORT, QIM_DISTRIBUTED_ROUTING_PORT, QIM_RUN_DIR (default: the results folder's
#   logs/engines), QIM_KAFKA_PORT,
#   QIM_CASSANDRA_ADDRESS_PREFIX, QIM_CASSANDRA_JMX_PORT, ...) pass through. Each configuration gets its
#   own deployment directory, Kafka topics, Redis key prefixes and keyspace, so runs never share state.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
all_configs=(relay embedded scylla-p64 scylla-p1 scylla-lwt redis)
report_only=0
if [[ ${1:-} == --report ]]; then
  # --report DIR: rebuild ladder.md, .csv and .png from DIR/logs (e.g. after a change to the report).
  report_only=1
  export QIM_LADDER_OUT=${2:?usage: $0 --report RESULTS-DIR}
  configs=()
  for c in "${all_configs[@]}"; do [[ -s $QIM_LADDER_OUT/logs/$c.csv ]] && configs+=("$c"); done
  ((${#configs[@]})) || { echo "ladder: no results in $QIM_LADDER_OUT/logs" >&2; exit 1; }
else
  configs=("$@")
  ((${#configs[@]})) || configs=("${all_configs[@]}")
fi
for c in "${configs[@]}"; do
  case $c in relay | embedded | scylla-p64 | scylla-p1 | scylla-lwt | redis) ;;
    *) echo "ladder: unknown configuration '$c' (relay embedded scylla-p64 scylla-p1 scylla-lwt redis)" >&2; exit 2 ;;
  esac
done
seconds=${QIM_LADDER_SECONDS:-20}
drain=${QIM_LADDER_DRAIN:-10}
pairs=${QIM_LADDER_PAIRS:-100}
warmup=${QIM_LADDER_WARMUP:-60}
idle_busy=${QIM_LADDER_IDLE_BUSY:-0.15}
settle_max=${QIM_LADDER_SETTLE_MAX:-120}
relay_port=${QIM_LADDER_RELAY_PORT:-7750}
embedded_port=${QIM_LADDER_EMBEDDED_PORT:-7760}
out=$(realpath -m "${QIM_LADDER_OUT:-bench-results/ladder-$(date -u +%Y%m%dT%H%M%SZ)}")
# say, die, $bin, $load, $child and the deployments stopped on exit (scripts/bench/lib.sh).
bench_name=ladder
source scripts/bench/lib.sh

# The rates of a configuration: its own variable, else QIM_LADDER_RATES, else the defaults: the seed's
# 200 / 2,000 / 10,000 for relay and embedded, with 4,000, 6,000 and 8,000 between (issue 10 sets the
# embedded CPU target at 8,000; a share of the relay's highest rate needs steps finer than 2,000 -> 8,000),
# then on until each fails, so that no ceiling is the last step's: embedded to 12,000, 13,500 (a third of
# 40,000, and a bit), 15,000, 17,500 and 20,000, the relay to 15,000, 20,000, 30,000, 40,000 and 50,000
# (it held 40,000 in some runs of 2026-12-04/05, with qim-load itself at 0.8-1.0 cores, and never 50,000);
# 200 / 1,000 / 1,500 / 2,000 for the distributed deployment, all of it on this machine's 2 cores (a
# 10,000 step there leaves 200,000 messages to drain before the deployment can stop), page 64 on to 3,000
# and 4,000: its rate at 100% delivered is what form A's is compared with (50 x 80 = 4,000), and it held
# 2,000 after decision 49; 20 / 40 / 80 / 200 for form A (the seed's rows and the steps between).
rates_of() {
  local var="QIM_LADDER_RATES_${1//-/_}" default
  case $1 in
    relay) default="200 2000 4000 6000 8000 10000 15000 20000 30000 40000 50000" ;;
    embedded) default="200 2000 4000 6000 8000 10000 12000 13500 15000 17500 20000 25000" ;;
    scylla-p64) default="200 1000 1500 2000 3000 4000" ;;
    scylla-lwt) default="20 40 80 200" ;;
    *) default="200 1000 1500 2000" ;;
  esac
  echo "${!var:-${QIM_LADDER_RATES:-$default}}"
}

[[ ${QIM_SKIP_BUILD:-0} == 1 || $report_only == 1 ]] || bash scripts/build.sh
export QIM_SKIP_BUILD=1
for b in "$load" "$bin/bench/relay/qim-relay" "$bin/bench/load/qim-ladder-report" "$bin/app/qim"; do
  [[ -x $b ]] || die "$b is missing: build first (bash scripts/build.sh)"
done
mkdir -p "$out/logs"
if [[ $report_only == 0 ]]; then
  say "results in $out; configurations: ${configs[*]}; $pairs pairs, $seconds s a step"
  # A results folder used again: the lists below are this run's alone (each configuration appends a line).
  : >"$out/logs/settle.md"
  : >"$out/logs/disk.md"
  # How the run was made, for the report (also when it is rebuilt with --report).
  cat >"$out/logs/settings.md" <<EOF
$pairs one-to-one pairs over WebSockets (qim-load), $seconds s a step, $drain s drain; distributed
configurations after a ${warmup}s warm-up. Every process and engine on this one machine ($(nproc) cores,
load average $(cut -d' ' -f1-3 /proc/loadavg) at the start). Rates: $(for c in "${configs[@]}"; do printf '%s %s; ' "$c" "$(rates_of "$c")"; done)
EOF
fi

# run_load CONFIG ARGS...: the ladder of CONFIG through qim-load; progress each second on stdout.
run_load() {
  local c=$1 rate_args=() r
  shift
  for r in $(rates_of "$c"); do rate_args+=(--rate "$r"); done
  say "$c: steps $(rates_of "$c") msg/s"
  local disk_before
  disk_before=$(disk_sample "$out")
  "$load" "$@" --pairs "$pairs" "${rate_args[@]}" --duration "$seconds" --drain "$drain" --config "$c" \
    --csv "$out/logs/$c.csv" --markdown "$out/logs/$c.md" | tee "$out/logs/$c.load.log" | grep --line-buffered -E '^(step|  t=|  )'
  # The disk over the configuration's steps: the embedded rows wait on its flushes.
  echo "- $c: $(disk_delta "$disk_before" "$(disk_sample "$out")")" >>"$out/logs/disk.md"
}

run_relay() {
  local secret
  secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  "$bin/bench/relay/qim-relay" --port "$relay_port" --secret "$secret" >"$out/logs/relay.log" 2>&1 &
  child=$!
  wait_for "grep -q listening '$out/logs/relay.log'" "qim-relay on port $relay_port" 20
  run_load relay --port "$relay_port" --secret "$secret" --server-pid "relay=$child"
  stop_child
}

run_embedded() {
  local dir=$out/logs/embedded  # the directory names the process in the CPU table
  start_embedded "$dir" "$embedded_port"
  run_load embedded --data-dir "$dir"
  stop_child
}

run_distributed() {
  local c=$1 counters engines=() dirs first
  case $c in
    scylla-p64) export QIM_MAILBOX_STORE_BACKEND=scylla QIM_MAILBOX_FINISH_PAGE_MAX=64 ;;
    scylla-p1) export QIM_MAILBOX_STORE_BACKEND=scylla QIM_MAILBOX_FINISH_PAGE_MAX=1 ;;
    scylla-lwt) export QIM_MAILBOX_STORE_BACKEND=scylla-lwt; unset QIM_MAILBOX_FINISH_PAGE_MAX ;;
    redis) export QIM_MAILBOX_STORE_BACKEND=redis; unset QIM_MAILBOX_FINISH_PAGE_MAX ;;
  esac
  distributed_up "$c"
  dirs=("${data_dirs[@]}")
  dirs+=(--secret "$(<"$QIM_DISTRIBUTED_DIR/auth-secret")")
  # The engines share the cores with QIM: their CPU is shown beside it (not in the qim sum).
  local edir=$QIM_RUN_DIR
  engine_pid() { if [[ -s $2 ]] && kill -0 "$(<"$2")" 2>/dev/null; then engines+=(--engine-pid "$1=$(<"$2")"); fi; }
  engine_pid kafka "$edir/kafka/kafka.pid"
  engine_pid redis-routing "$edir/redis-routing/redis.pid"
  if [[ $c == redis ]]; then
    engine_pid redis-store "$edir/redis-mailbox/redis.pid"
    counters="bash $root/scripts/bench/engine-counters.sh redis ${QIM_DISTRIBUTED_REDIS_PORT:-16379}"
  else
    engine_pid cassandra "$edir/cassandra/single/node1/cassandra.pid"
    counters="bash $root/scripts/bench/engine-counters.sh cassandra $QIM_CQL_KEYSPACE"
  fi
  first=$(rates_of "$c" | awk '{ print $1 }')
  say "$c: warm-up, ${warmup}s at $first msg/s (not reported)"
  "$load" "${dirs[@]}" --pairs "$pairs" --rate "$first" --duration "$warmup" --drain "$drain" --config warm-up \
    >"$out/logs/$c.warmup.log" 2>&1 || die "$c: the warm-up failed (see $out/logs/$c.warmup.log)"
  run_load "$c" "${dirs[@]}" "${engines[@]}" --engine-counters "$counters"
  distributed_down "$c"
}

# settle CONFIG: sync, then wait for the machine to be idle (see QIM_LADDER_IDLE_BUSY); one progress line
# a second, and a line for the report in logs/settle.md.
settle() {
  local t0=$SECONDS calm=0 busy synced
  sync
  synced=$((SECONDS - t0))
  busy=$(cpu_busy)
  while ((SECONDS - t0 < settle_max)); do
    if awk -v b="$busy" -v l="$idle_busy" 'BEGIN { exit !(b < l) }'; then
      calm=$((calm + 1))
      ((calm >= 3)) && break
    else
      calm=0
      say "$1: waiting for the machine to settle (cores $busy busy)"
    fi
    busy=$(cpu_busy)
  done
  say "$1: settled after $((SECONDS - t0)) s (sync ${synced} s; cores $busy busy)"
  echo "- $1: started after $((SECONDS - t0)) s of settling (sync ${synced} s), cores $busy busy" >>"$out/logs/settle.md"
}

for c in "${configs[@]}"; do
  [[ $report_only == 0 ]] || break
  settle "$c"
  case $c in
    relay) run_relay ;;
    embedded) run_embedded ;;
    *) run_distributed "$c" ;;
  esac
  [[ -s $out/logs/$c.csv ]] || die "$c: qim-load wrote no results"
done
trap - EXIT

# One CSV (one header), the report, the chart.
merge_csvs "$out/ladder.csv" "${configs[@]}"
{
  echo "# The ladder ($(date -u '+%F %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
  echo
  cat "$out/logs/settings.md"
  echo
  if [[ -s $out/logs/settle.md ]]; then
    echo "Before each configuration (sync, then until the cores were below $idle_busy busy for 3 s):"
    echo
    cat "$out/logs/settle.md"
    echo
  fi
  if [[ -s $out/logs/disk.md ]]; then
    echo "The disk that holds the results folder, over each configuration's steps (/proc/diskstats):"
    echo
    cat "$out/logs/disk.md"
    echo
  fi
  echo "SLO: 100% delivered and e2e P99 <= 250 ms. Backlog: messages sent in the step and not delivered by"
  echo "its end."
  echo "Engine counts (writes / reads / LWT) are Cassandra's own table metrics over the step, per message"
  echo "sent, and in brackets the client requests the node coordinated (a batch or an IN read is one; the"
  echo "whole node, leases too) (scripts/bench/engine-counters.sh); store counters are the QIM processes'"
  echo "qim_store_* counters."
  echo
  "$bin/bench/load/qim-ladder-report" "$out/ladder.csv"
  echo
  echo "![ladder](ladder.png)"
  echo
  echo "## Per configuration (qim-load's tables: every step, CPU by process, engine counters)"
  for c in "${configs[@]}"; do echo; echo "### $c"; echo; cat "$out/logs/$c.md"; done
} >"$out/ladder.md"

if command -v gnuplot >/dev/null; then
  plots=()
  for c in "${configs[@]}"; do
    awk -F, 'NR > 1 { print $2, $12 }' "$out/logs/$c.csv" | sort -n >"$out/logs/$c.plot"
    plots+=("'$out/logs/$c.plot' using 1:2 with linespoints title '$c'")
  done
  gnuplot <<GP
set terminal pngcairo size 1000,600 noenhanced
set output '$out/ladder.png'
set title 'QIM ladder: end-to-end P99 against offered rate ($(nproc) cores, $(date -u +%F))'
set xlabel 'offered rate (msg/s)'
set ylabel 'e2e P99 (ms)'
set logscale xy
set grid
set key top left
plot $(IFS=,; echo "${plots[*]}"), 250 with lines dashtype 3 lc rgb 'red' title 'SLO: e2e P99 250 ms'
GP
else
  say "no chart: gnuplot not found (scripts/install-deps.sh installs gnuplot-nox)"
fi
say "done: $out/ladder.md, $out/ladder.csv, $out/ladder.png"
