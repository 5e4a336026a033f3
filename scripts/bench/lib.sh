# Shared by the bench scripts that run deployments one after another (ladder.sh, groups.sh); sourced, not
# run. The caller has cd'd to the repository root and set:
#   bench_name   the tag of its lines and of its deployments' names ("ladder", "groups")
#   out          the results folder (logs under $out/logs)
# It gets: say/die, the paths of the binaries, one background process ($child) and one distributed
# deployment stopped on exit whatever happens, starting and stopping `qim up` and the distributed
# deployment with names of their own.
root=$PWD
bin=$root/build/release/src
load=$bin/bench/load/qim-load
stamp=$(date +%s)
# One engines directory for the whole run (each configuration's names are its own), known to every
# script called: distributed.sh starts the engines there, engine-counters.sh finds Cassandra there.
export QIM_RUN_DIR=${QIM_RUN_DIR:-$out/logs/engines}

say() { printf '[%s %s] %s\n' "$bench_name" "$(date +%H:%M:%S)" "$*"; }
# cpu_busy: the share of all cores not idle over the next second, from /proc/stat; time waiting for I/O
# counts as busy (a disk still writing back would slow the next configuration's syncs).
cpu_busy() {
  local a b
  a=$(head -1 /proc/stat)
  sleep 1
  b=$(head -1 /proc/stat)
  awk -v a="$a" -v b="$b" 'BEGIN {
    n = split(a, x, " "); split(b, y, " "); total = 0
    for (i = 2; i <= n; i++) total += y[i] - x[i]
    idle = y[5] - x[5]
    printf "%.2f", (total > 0 ? 1 - idle / total : 0) }'
}
# disk_sample DIR: "writes ms_writing flushes ms_flushing sectors_written" of the disk that holds DIR
# (/proc/diskstats; a partition is counted on its disk, where the flushes are), or nothing if unknown.
disk_sample() {
  local dev disk
  dev=$(df --output=source "$1" 2>/dev/null | tail -1)
  disk=$(lsblk -no pkname "$dev" 2>/dev/null | head -1)
  [[ -n $disk ]] || disk=${dev#/dev/}
  awk -v d="$disk" '$3 == d { print $8, $11, $19, $20, $10 }' /proc/diskstats
}
# disk_delta BEFORE AFTER: one line saying what the disk did between two samples (mean latencies).
disk_delta() {
  [[ -n $1 && -n $2 ]] || { echo "not measured"; return; }
  awk -v a="$1" -v b="$2" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    w = y[1] - x[1]; f = y[3] - x[3]
    printf "%d writes (mean %.2f ms), %d flushes (mean %.2f ms), %.0f MiB written\n",
      w, (w > 0 ? (y[2] - x[2]) / w : 0), f, (f > 0 ? (y[4] - x[4]) / f : 0), (y[5] - x[5]) / 2048 }'
}
die() { printf '[%s %s] ERROR: %s\n' "$bench_name" "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

# A background process of the script, stopped on exit whatever happens.
child=""
bench_cleanup() {
  if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then kill -TERM "$child"; wait "$child" || true; fi
  if [[ -n ${QIM_DISTRIBUTED_DIR:-} && -d ${QIM_DISTRIBUTED_DIR:-} ]]; then bash scripts/distributed.sh down || true; fi
}
trap bench_cleanup EXIT

# wait_for CONDITION-COMMAND WHAT SECONDS
wait_for() {
  local deadline=$((SECONDS + $3))
  until eval "$1"; do
    ((SECONDS < deadline)) || die "$2 did not come within $3 s"
    [[ -z $child ]] || kill -0 "$child" 2>/dev/null || die "$2: the process exited (see $out/logs)"
    sleep 0.2
  done
}

stop_child() {
  kill -TERM "$child" && wait "$child" || true
  child=""
}

# start_embedded DIR PORT: `qim up` on a fresh data dir DIR (its name names the process in CPU tables),
# client PORT, admin PORT+1, log $out/logs/embedded.log; returns once running.json is written.
start_embedded() {
  rm -rf "$1"
  QIM_DATA_DIR=$1 "$bin/app/qim" up --port "$2" --admin-port "$(($2 + 1))" >"$out/logs/embedded.log" 2>&1 &
  child=$!
  wait_for "[[ -s '$1/running.json' ]]" "qim up on port $2" 60
}

# distributed_up CONFIG: the distributed deployment in $out/logs/CONFIG with Kafka topics, Redis prefixes
# and a keyspace of its own (QIM_CQL_KEYSPACE, read by the caller for the engine counters); the store
# backend is the caller's QIM_MAILBOX_STORE_BACKEND. Fills data_dirs with --data-dir of every process.
distributed_up() {
  local c=$1 d
  export QIM_DISTRIBUTED_DIR=$out/logs/$c
  export QIM_KAFKA_TOPIC_PREFIX="$bench_name.$stamp.$c."
  export QIM_ROUTING_REDIS_PREFIX="${bench_name:0:1}$stamp${c//-/}:" QIM_MAILBOX_REDIS_PREFIX="${bench_name:0:1}$stamp${c//-/}m:"
  export QIM_CQL_KEYSPACE="${bench_name}_${stamp}_${c//-/_}"
  say "$c: starting the distributed deployment in $QIM_DISTRIBUTED_DIR"
  bash scripts/distributed.sh up >"$out/logs/$c.up.log" 2>&1 || { tail -20 "$out/logs/$c.up.log" >&2; die "$c: the deployment did not start"; }
  data_dirs=()
  for d in "$QIM_DISTRIBUTED_DIR"/*/; do [[ -f $d/running.json ]] && data_dirs+=(--data-dir "$d"); done
  ((${#data_dirs[@]} >= 12)) || die "$c: only $((${#data_dirs[@]} / 2)) running processes in $QIM_DISTRIBUTED_DIR"
}

distributed_down() {
  say "$1: stopping the deployment"
  bash scripts/distributed.sh down >"$out/logs/$1.down.log" 2>&1 || say "$1: down reported an error (see $out/logs/$1.down.log)"
  unset QIM_DISTRIBUTED_DIR
}

# merge_csvs DEST CONFIG...: the CSVs $out/logs/CONFIG.csv as one (the first one's header once).
merge_csvs() {
  local dest=$1 c first=1
  shift
  for c in "$@"; do
    if ((first)); then cat "$out/logs/$c.csv"; first=0; else tail -n +2 "$out/logs/$c.csv"; fi
  done >"$dest"
}
