#!/usr/bin/env bash
# Groups (issue 12, docs/benchmarks.md "Groups"): qim-load's group mode against each configuration in turn,
# one group per size: the time from SEND to SEND_ACK and to the first and the last listening member's
# DELIVER, the mailboxes of the other members read afterwards (missing deliveries are counted), and the
# store operations per delivered entry. One results folder:
#
#   embedded     `qim up`: one process, embedded log and store, on its own data dir and ports
#   scylla       the distributed deployment (scripts/distributed.sh) on the scylla store
#   redis        the same on the Redis store
#
#   bash scripts/bench/groups.sh [configuration...]        default: embedded
#
# Results in $QIM_GROUPS_OUT (default bench-results/groups-<UTC time>): groups.md (settings and the
# table), groups.csv (one row per configuration and size), groups.png (latency against members, log
# scales), logs/ (qim-load's output, each process's log and directory). A progress line per second on
# stdout. qim-load exits 3 when a delivery is missing: the row stays in the table (marked), the run goes on.
#
# Environment (all optional):
#   QIM_GROUPS_SIZES      group sizes, owner included ("100 1000 10000"; QIM_GROUP_MAX_MEMBERS is 10,000)
#   QIM_GROUPS_MESSAGES   messages per group (20); QIM_GROUPS_RATE: msg/s, 0 = one at a time (0)
#   QIM_GROUPS_LISTENERS  members connected at most (10000: every member but the sender, up to 10,000)
#   QIM_GROUPS_DRAIN      seconds a message may take (30); QIM_GROUPS_VERIFY: mailboxes read afterwards
#                         (default all the members that did not listen)
#   QIM_GROUPS_PORT       the embedded `qim up`'s client port (7780; admin +1)
#   QIM_SKIP_BUILD=1      use ./build/release as it is
#   The distributed deployment's own variables (scripts/distributed.sh, as for scripts/bench/ladder.sh:
#   QIM_DISTRIBUTED_BASE_PORT, QIM_DISTRIBUTED_REDIS_PORT, QIM_DISTRIBUTED_ROUTING_PORT, QIM_RUN_DIR,
#   QIM_KAFKA_PORT, QIM_CASSANDRA_ADDRESS_PREFIX, QIM_CASSANDRA_JMX_PORT, ...) pass through; each
#   configuration gets its own deployment directory, Kafka topics, Redis prefixes and keyspace.
set -euo pipefail
cd "$(dirname "$0")/../.."
configs=("$@")
((${#configs[@]})) || configs=(embedded)
for c in "${configs[@]}"; do
  case $c in embedded | scylla | redis) ;; *) echo "groups: unknown configuration '$c' (embedded scylla redis)" >&2; exit 2 ;; esac
done
read -r -a sizes <<<"${QIM_GROUPS_SIZES:-100 1000 10000}"
messages=${QIM_GROUPS_MESSAGES:-20}
rate=${QIM_GROUPS_RATE:-0}
listeners=${QIM_GROUPS_LISTENERS:-10000}
drain=${QIM_GROUPS_DRAIN:-30}
port=${QIM_GROUPS_PORT:-7780}
out=$(realpath -m "${QIM_GROUPS_OUT:-bench-results/groups-$(date -u +%Y%m%dT%H%M%SZ)}")
# say, die, $bin, $load, $child and the deployments stopped on exit (scripts/bench/lib.sh).
bench_name=groups
source scripts/bench/lib.sh

[[ ${QIM_SKIP_BUILD:-0} == 1 ]] || bash scripts/build.sh
export QIM_SKIP_BUILD=1
for b in "$load" "$bin/app/qim"; do [[ -x $b ]] || die "$b is missing: build first (bash scripts/build.sh)"; done
mkdir -p "$out/logs"
group_args=(--group-members "$(IFS=,; echo "${sizes[*]}")" --group-messages "$messages" --group-rate "$rate"
  --group-listeners "$listeners" --drain "$drain")
[[ -z ${QIM_GROUPS_VERIFY:-} ]] || group_args+=(--group-verify "$QIM_GROUPS_VERIFY")
say "results in $out; configurations: ${configs[*]}; sizes ${sizes[*]}; $messages messages each"

# run_load CONFIG ARGS...: qim-load's group mode; exit 3 (a delivery missing) still leaves its results.
run_load() {
  local c=$1 rc
  shift
  set +e
  "$load" "$@" "${group_args[@]}" --config "$c" --csv "$out/logs/$c.csv" --markdown "$out/logs/$c.md" 2>&1 |
    tee "$out/logs/$c.load.log" | grep --line-buffered -E '^(group|  )'
  rc=${PIPESTATUS[0]}
  set -e
  case $rc in
    0) ;;
    3) say "$c: some deliveries are missing (see the table)" ;;
    *) tail -5 "$out/logs/$c.load.log" >&2; die "$c: qim-load failed (exit $rc)" ;;
  esac
}

run_embedded() {
  local dir=$out/logs/embedded  # the directory names the process
  start_embedded "$dir" "$port"
  run_load embedded --data-dir "$dir"
  stop_child
}

run_distributed() {
  export QIM_MAILBOX_STORE_BACKEND=$1
  distributed_up "$1"
  run_load "$1" "${data_dirs[@]}" --secret "$(<"$QIM_DISTRIBUTED_DIR/auth-secret")"
  distributed_down "$1"
}

for c in "${configs[@]}"; do
  if [[ $c == embedded ]]; then run_embedded; else run_distributed "$c"; fi
  [[ -s $out/logs/$c.csv ]] || die "$c: qim-load wrote no results"
done
trap - EXIT

merge_csvs "$out/groups.csv" "${configs[@]}"
{
  echo "# Groups ($(date -u '+%F %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
  echo
  echo "qim-load's group mode (\`scripts/bench/groups.sh ${configs[*]}\`): per size one group of fresh users, the"
  echo "owner sends $messages messages ($([[ $rate == 0 ]] && echo "one at a time" || echo "$rate msg/s")); up to $listeners members listen (all of a"
  echo "smaller group; the sample holds every shard's last-written member); the other mailboxes are read"
  echo "afterwards through fresh connections. Store operations are the QIM processes' qim_store_ops_total over"
  echo "the messages, per entry delivered (members x messages)."
  echo
  head -n 2 "$out/logs/${configs[0]}.md"  # the table's header once, then every configuration's rows
  for c in "${configs[@]}"; do tail -n +3 "$out/logs/$c.md"; done
  echo
  echo "![groups](groups.png)"
} >"$out/groups.md"

if command -v gnuplot >/dev/null; then
  plots=()
  for c in "${configs[@]}"; do
    awk -F, 'NR > 1 { print $2, $8, $10, $12, $13 }' "$out/logs/$c.csv" | sort -n >"$out/logs/$c.plot"
    plots+=("'$out/logs/$c.plot' using 1:4 with linespoints title '$c last member P50'"
      "'$out/logs/$c.plot' using 1:5 with linespoints title '$c last member P99'"
      "'$out/logs/$c.plot' using 1:3 with linespoints dashtype 2 title '$c first member P50'"
      "'$out/logs/$c.plot' using 1:2 with linespoints dashtype 3 title '$c SEND_ACK P50'")
  done
  gnuplot <<GP
set terminal pngcairo size 1000,600 noenhanced
set output '$out/groups.png'
set title 'QIM groups: SEND to DELIVER against group size ($(nproc) cores, $(date -u +%F))'
set xlabel 'members'
set ylabel 'ms from SEND'
set logscale xy
set grid
set key top left
plot $(IFS=,; echo "${plots[*]}")
GP
else
  say "no chart: gnuplot not found (scripts/install-deps.sh installs gnuplot-nox)"
fi
say "done: $out/groups.md, $out/groups.csv, $out/groups.png"
