#!/usr/bin/env bash
# The inbox benchmark (issue 38, item 9; docs/benchmarks.md "The inbox"): qim-inbox-bench on each engine in
# turn. One user with 10,000 conversations, written through the store contract with the engine's inbox as
# the store's EntrySink (as `qim up` and the MailboxNode write it); then the first page of CONVERSATIONS
# (Inbox::conversations, limit 50), the backend's read of all the user's conversation rows it starts with,
# unread() of a conversation with 1,000 unread and READ (mark_read) stepping through it, each timed over
# many calls: P50, P99, max. Times are reported, never asserted.
#
#   bash scripts/bench/inbox.sh [backend...]      embedded redis scylla (default: all three)
#
# Results in $QIM_INBOX_OUT (default bench-results/inbox-<UTC time>): inbox.md (settings, the machine's load
# and the table), inbox.csv (one row per backend and operation), inbox.png (P50 / P99 / max per
# operation, log scale), logs/ (each backend's output). Progress on stderr while a backend fills and times.
# qim-inbox-bench checks every answer it times; a wrong one is marked in the table's last column and the
# script exits 3 at the end.
#
# Environment (all optional):
#   QIM_INBOX_CONVERSATIONS  conversations of the user (10000); QIM_INBOX_UNREAD: unread in one (1000)
#   QIM_INBOX_REPS           measured calls per operation (300); QIM_INBOX_LIMIT: the page's size (50)
#   QIM_INBOX_ENGINES=external   start no engine: use the running ones named by QIM_MAILBOX_REDIS and
#                            QIM_CQL_HOSTS (each run still gets its own keyspace, dropped at the end, and
#                            its own Redis prefix); default: start Redis on 16379/16380 and one Cassandra
#                            node, as scripts/bench/store.sh does, and stop them at the end
#   QIM_SKIP_BUILD=1         use ./build/release as it is
set -euo pipefail
cd "$(dirname "$0")/../.."
backends=("$@")
((${#backends[@]})) || backends=(embedded redis scylla)
for b in "${backends[@]}"; do
  case $b in embedded | redis | scylla) ;; *) echo "inbox: unknown backend '$b' (embedded redis scylla)" >&2; exit 2 ;; esac
done
conversations=${QIM_INBOX_CONVERSATIONS:-10000}
unread=${QIM_INBOX_UNREAD:-1000}
reps=${QIM_INBOX_REPS:-300}
limit=${QIM_INBOX_LIMIT:-50}
out=$(realpath -m "${QIM_INBOX_OUT:-bench-results/inbox-$(date -u +%Y%m%dT%H%M%SZ)}")
bench=./build/release/src/bench/inbox/qim-inbox-bench
engines=scripts/engines
export QIM_RUN_DIR=${QIM_RUN_DIR:-/tmp/qim-bench-engines}
say() { printf '[inbox %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
wants() { [[ " ${backends[*]} " == *" $1 "* ]]; }

[[ ${QIM_SKIP_BUILD:-0} == 1 ]] || cmake --build --preset release --target qim-inbox-bench
[[ -x $bench ]] || { echo "inbox: $bench is missing: build it first" >&2; exit 1; }
mkdir -p "$out/logs"

keyspace="qim_inbox_bench_$(date +%s)_$$"
if [[ ${QIM_INBOX_ENGINES:-own} == external ]]; then
  : "${QIM_MAILBOX_REDIS:?QIM_INBOX_ENGINES=external: set QIM_MAILBOX_REDIS}" "${QIM_CQL_HOSTS:=127.0.0.1}"
  export QIM_MAILBOX_REDIS QIM_CQL_HOSTS
  cleanup() {
    if wants scylla; then
      bash $engines/cassandra.sh cql -h "${QIM_CQL_HOSTS%%,*}" -e "DROP KEYSPACE IF EXISTS $keyspace" >/dev/null ||
        say "could not drop keyspace $keyspace"
    fi
  }
else
  if wants redis; then
    bash $engines/redis.sh start bench0 16379 && bash $engines/redis.sh wait bench0 16379
    bash $engines/redis.sh start bench1 16380 && bash $engines/redis.sh wait bench1 16380
  fi
  if wants scylla; then bash $engines/cassandra.sh start single && bash $engines/cassandra.sh wait single; fi
  cleanup() {
    if wants redis; then bash $engines/redis.sh stop bench0 16379; bash $engines/redis.sh stop bench1 16380; fi
    if wants scylla; then bash $engines/cassandra.sh stop; fi
  }
  export QIM_MAILBOX_REDIS=127.0.0.1:16379,127.0.0.1:16380 QIM_CQL_HOSTS=127.0.0.1
fi
trap cleanup EXIT

say "results in $out; backends: ${backends[*]}; $conversations conversations, one with $unread unread; $reps calls each"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
wrong=0
for b in "${backends[@]}"; do
  say "$b: filling, then timing (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  set +e
  QIM_CQL_KEYSPACE=$keyspace QIM_MAILBOX_REDIS_PREFIX="ib$$:" \
    "$bench" --backend "$b" --conversations "$conversations" --unread "$unread" --repetitions "$reps" \
    --limit "$limit" --no-header >"$out/logs/$b.out" 2> >(tee "$out/logs/$b.err" >&2)
  rc=$?
  set -e
  case $rc in
    0) ;;
    3) wrong=1; say "$b: a wrong answer (see the table)" ;;
    *) tail -5 "$out/logs/$b.err" >&2; echo "inbox: $b failed (exit $rc)" >&2; exit 1 ;;
  esac
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

echo "backend,operation,calls,p50_ms,p99_ms,max_ms,client_cpu_ms_per_call,reads_per_call,target,check" >"$out/inbox.csv"
for b in "${backends[@]}"; do
  grep '^|' "$out/logs/$b.out" | awk -F'|' '{
    out = ""
    for (i = 2; i < NF; i++) { f = $i; gsub(/^ +| +$/, "", f); gsub(/,/, "", f); out = out (i > 2 ? "," : "") f }
    print out }' >>"$out/inbox.csv"
done
{
  echo "# Inbox benchmark ($(date -u '+%F %H:%M UTC'), $(nproc) cores, load average $load_before before, $load_after after)"
  echo
  echo "\`scripts/bench/inbox.sh ${backends[*]}\`: one user with $conversations conversations (one with $unread unread"
  echo "messages from one peer, then one message from each other peer; every message in both mailboxes), written"
  echo "through the store contract with the engine's inbox as the store's EntrySink; then $reps calls of each"
  echo "operation through \`Inbox\` (after 10 unmeasured): the first page of CONVERSATIONS (limit $limit), what it"
  echo "starts with (every conversation row of the user, from the inbox backend alone: \`rows\`), unread() of"
  echo "the conversation with $unread unread, READ stepping up through it. \`client CPU\`: the calling thread's CPU"
  echo "time, mean (not the server engine's; on a loaded machine the wall-clock figures add the wait for a core)."
  echo "\`reads per call\`: the mailbox store's and the inbox's reads as they count them. Every answer is checked."
  echo
  echo "| backend | operation | calls | P50 ms | P99 ms | max ms | client CPU ms per call | reads per call | target | check |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for b in "${backends[@]}"; do grep '^|' "$out/logs/$b.out"; done
  echo
  echo "| backend | messages written | seconds | messages/s |"
  echo "|---|---|---|---|"
  for b in "${backends[@]}"; do
    awk '$1 == "fill" { printf "| %s | %d | %.1f | %.0f |\n", $2, $3, $4, ($4 > 0 ? $3 / $4 : 0) }' "$out/logs/$b.out"
  done
  echo
  echo "![inbox](inbox.png)"
} >"$out/inbox.md"

if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal pngcairo size 1100,500 noenhanced
set output '$out/inbox.png'
set title 'QIM inbox: one user with $conversations conversations ($(nproc) cores, $(date -u +%F))'
set datafile separator ','
set style data histograms
set style histogram clustered
set style fill solid 0.8
set key outside right top
set xtics rotate by -20
set ylabel 'ms per call (log scale)'
set logscale y
set grid ytics
plot '$out/inbox.csv' using 4:xtic(stringcolumn(1).' '.word(stringcolumn(2), 1)) skip 1 title 'P50', \
     '' using 5 skip 1 title 'P99', '' using 6 skip 1 title 'max', \
     20 with lines dashtype 2 linecolor rgb 'gray30' title 'target embedded', \
     50 with lines dashtype 3 linecolor rgb 'gray30' title 'target Cassandra'
GP
else
  say "no chart: gnuplot not found (scripts/install-deps.sh installs gnuplot-nox)"
fi
cat "$out/inbox.md"
say "done: $out/inbox.md, $out/inbox.csv, $out/inbox.png"
exit $((wrong ? 3 : 0))
