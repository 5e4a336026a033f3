#!/usr/bin/env bash
# The load run against the distributed deployment (issue "Distributed QIM"): for each store (scylla with a
# page limit of 64, then redis) it starts the whole deployment with scripts/distributed.sh (Kafka, the
# routing Redis, the store, 2 gateways, fanout, 2 MailboxNodes, archiver, all on this machine), drives
# qim-load's ladder through both gateways (every message crosses gateways), and stops it again. Writes a
# Markdown table (with CPU per process), a CSV and a chart to docs/bench/ (or $QIM_BENCH_OUT).
#
#   bash scripts/bench/distributed-load.sh [rates...]     default rates: 200 1000 2000
#
# Environment: QIM_LOAD_PAIRS (100), QIM_LOAD_SECONDS per step (20), QIM_LOAD_DRAIN (10),
# QIM_LOAD_WARMUP (60 s at the first rate, not reported: the JVM engines compile their hot paths in the first minute), QIM_LOAD_STORES ("scylla redis"), QIM_BENCH_OUT (docs/bench), QIM_SKIP_BUILD=1 to use the build as is.
set -euo pipefail
cd "$(dirname "$0")/../.."
rates=("$@")
((${#rates[@]})) || rates=(200 1000 2000)
out=${QIM_BENCH_OUT:-docs/bench}
pairs=${QIM_LOAD_PAIRS:-100}
seconds=${QIM_LOAD_SECONDS:-20}
drain=${QIM_LOAD_DRAIN:-10}
warmup=${QIM_LOAD_WARMUP:-60}
load=./build/release/src/bench/load/qim-load
[[ ${QIM_SKIP_BUILD:-0} == 1 ]] || bash scripts/build.sh
export QIM_SKIP_BUILD=1
mkdir -p "$out"
work=$(mktemp -d /tmp/qim-distributed-load.XXXXXX)
rate_args=()
for r in "${rates[@]}"; do rate_args+=(--rate "$r"); done

csv="$out/distributed-load.csv"
md="$out/distributed-load.md"
: >"$csv.tmp"
for store in ${QIM_LOAD_STORES:-scylla redis}; do
  run="$work/$store"
  export QIM_DISTRIBUTED_DIR=$run QIM_MAILBOX_STORE_BACKEND=$store
  if [[ $store == scylla ]]; then export QIM_MAILBOX_FINISH_PAGE_MAX=64; else unset QIM_MAILBOX_FINISH_PAGE_MAX; fi
  echo "=== distributed load: $store: starting the deployment in $run"
  trap 'bash scripts/distributed.sh down || true' EXIT
  bash scripts/distributed.sh up
  dirs=()
  for d in "$run"/*/; do [[ -f $d/running.json ]] && dirs+=(--data-dir "$d"); done
  ((${#dirs[@]} >= 6)) || { echo "distributed load: only ${#dirs[@]} running processes in $run" >&2; exit 1; }
  # The engines share the cores with QIM: their CPU is shown beside it (not in the qim sum).
  engines=()
  edir=${QIM_RUN_DIR:-$run/engines}
  engine_pid() { [[ -s $2 ]] && kill -0 "$(<"$2")" 2>/dev/null && engines+=(--engine-pid "$1=$(<"$2")") || true; }
  engine_pid kafka "$edir/kafka/kafka.pid"
  engine_pid redis-routing "$edir/redis-routing/redis.pid"
  if [[ $store == redis ]]; then engine_pid redis-store "$edir/redis-mailbox/redis.pid"; fi
  if [[ $store == scylla ]]; then engine_pid cassandra "$edir/cassandra/single/node1/cassandra.pid"; fi
  # The engines start cold (the broker's and Cassandra's JIT, new topics and tables): a warm-up at the
  # lowest rate first, not reported, so the first step measures the deployment rather than its start-up.
  echo "=== distributed load: $store: warm-up, ${warmup}s at ${rates[0]} msg/s (not reported)"
  "$load" "${dirs[@]}" --secret "$(<"$run/auth-secret")" --pairs "$pairs" --rate "${rates[0]}" \
    --duration "$warmup" --drain "$drain" --config warm-up >/dev/null
  echo "=== distributed load: $store: $pairs pairs, ${rates[*]} msg/s, $seconds s each"
  "$load" "${dirs[@]}" "${engines[@]}" --secret "$(<"$run/auth-secret")" --pairs "$pairs" "${rate_args[@]}" \
    --duration "$seconds" --drain "$drain" --config "distributed-$store" \
    --csv "$work/$store.csv" --markdown "$work/$store.md"
  bash scripts/distributed.sh down
  trap - EXIT
  if [[ -s $csv.tmp ]]; then tail -n +2 "$work/$store.csv" >>"$csv.tmp"; else cat "$work/$store.csv" >"$csv.tmp"; fi
  cat "$work/$store.md" >>"$work/tables.md"
  echo >>"$work/tables.md"
done
mv "$csv.tmp" "$csv"
{
  echo "# Load against the distributed deployment (qim-load, $(date -u +%F), $(nproc) cores)"
  echo
  echo "Every process and engine on this one machine: Kafka, Cassandra or Redis, the routing Redis, 2 gateways,"
  echo "fanout, 2 MailboxNodes, the archiver. $pairs one-to-one pairs; each pair's sender and receiver on"
  echo "different gateways; $seconds s per step. CPU is per process, in cores: qim CPU sums the qim processes;"
  echo "the per-process table also shows the engines and qim-load itself, which share the same cores."
  echo "SLO: 100% delivered and end-to-end P99 <= 250 ms."
  echo
  cat "$work/tables.md"
} >"$md"
bash src/bench/load/chart.sh "$csv" "$out/distributed-load.png" || echo "distributed load: no chart (gnuplot?)"
echo "distributed load: $md, $csv"
rm -rf "$work"
