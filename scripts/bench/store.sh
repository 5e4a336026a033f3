#!/usr/bin/env bash
# The store benchmark: one-to-one records through the MailboxStore contract on every backend, side by side,
# each without and with the inbox written beside the entries (the engine's InboxBackend as the store's
# EntrySink, as `qim up` and the MailboxNode open it; its operations in columns of their own).
# Starts the engines it needs (Redis, one Cassandra node), runs qim-store-bench per configuration, and
# writes a Markdown table, a CSV and a chart (PNG, gnuplot) to docs/bench/ (or $QIM_BENCH_OUT).
#   bash scripts/bench/store.sh [records]        default 5000 records per configuration
# Environment (all optional):
#   QIM_BENCH_OUT          the folder of the results (docs/bench); QIM_BENCH_NAME their name (store)
#   QIM_STORE_BACKENDS     the backends to run ("embedded redis scylla scylla-lwt": all)
#   QIM_STORE_ENGINES=external   start no engine: use the running ones named by QIM_MAILBOX_REDIS and
#                          QIM_CQL_HOSTS (each configuration still gets its own keyspace and Redis prefix;
#                          the keyspaces are dropped at the end)
set -euo pipefail
cd "$(dirname "$0")/../.."
records=${1:-5000}
out=${QIM_BENCH_OUT:-docs/bench}
name=${QIM_BENCH_NAME:-store}
bench=${QIM_STORE_BENCH:-./build/release/src/bench/store/qim-store-bench}
read -r -a backends <<<"${QIM_STORE_BACKENDS:-embedded redis scylla scylla-lwt}"
engines=scripts/engines
export QIM_RUN_DIR=${QIM_RUN_DIR:-/tmp/qim-bench-engines}
[ -x "$bench" ] || bash scripts/build.sh
mkdir -p "$out"
wants() { [[ " ${backends[*]} " == *" $1 "* ]]; }
uses_cql() { wants scylla || wants scylla-lwt; }

keyspaces=()
if [[ ${QIM_STORE_ENGINES:-own} == external ]]; then
  : "${QIM_MAILBOX_REDIS:?QIM_STORE_ENGINES=external: set QIM_MAILBOX_REDIS}" "${QIM_CQL_HOSTS:=127.0.0.1}"
  export QIM_MAILBOX_REDIS QIM_CQL_HOSTS
  drop_keyspaces() {
    local ks stmts=()
    for ks in "${keyspaces[@]}"; do stmts+=(-e "DROP KEYSPACE IF EXISTS $ks"); done
    ((${#stmts[@]} == 0)) || bash $engines/cassandra.sh cql -h "${QIM_CQL_HOSTS%%,*}" "${stmts[@]}" >/dev/null ||
      echo "bench: could not drop the keyspaces ${keyspaces[*]}" >&2
  }
  trap drop_keyspaces EXIT
else
  if wants redis; then
    bash $engines/redis.sh start bench0 16379 && bash $engines/redis.sh wait bench0 16379
    bash $engines/redis.sh start bench1 16380 && bash $engines/redis.sh wait bench1 16380
  fi
  if uses_cql; then bash $engines/cassandra.sh start single && bash $engines/cassandra.sh wait single; fi
  stop_engines() {
    if wants redis; then bash $engines/redis.sh stop bench0 16379; bash $engines/redis.sh stop bench1 16380; fi
    if uses_cql; then bash $engines/cassandra.sh stop; fi
  }
  trap stop_engines EXIT
  export QIM_MAILBOX_REDIS=127.0.0.1:16379,127.0.0.1:16380 QIM_CQL_HOSTS=127.0.0.1
fi

# backend page-limit recipients-per-record records inbox(none|inbox)
configs=(
  "embedded 64 1 $records none" "embedded 64 1 $records inbox" "embedded 1 1 $records none"
  "redis 1 1 $records none" "redis 1 1 $records inbox"
  "scylla 64 1 $records none" "scylla 64 1 $records inbox" "scylla 1 1 $records none"
  "scylla-lwt 1 1 $((records / 25)) none"
  "embedded 64 2 $records none" "embedded 64 2 $records inbox" "redis 1 2 $records none" "redis 1 2 $records inbox"
  "scylla 64 2 $records none" "scylla 64 2 $records inbox" "scylla 1 2 $records none"
)
table="$out/$name.md"
{
  echo "# Store benchmark (qim-store-bench, $(date -u +%F), $(nproc) cores)"
  echo
  echo "One-to-one records through the whole contract (begin, write chunks, finish in pages), 4 shard workers."
  echo "Operations are per message; \`mailboxes\` is entries per message (1: the recipient; 2: and the sender's"
  echo "own copy). \`inbox\`: the engine's inbox written beside the entries (the store's EntrySink), its"
  echo "operations in the \`inbox\` columns, apart from the store's. Counts are exact (as the store and the"
  echo "inbox count them); rates are of this machine, with the engine on the same 2 cores."
  echo
  echo "| backend | page limit | mailboxes | inbox | msg/s | mean page | inserts | updates | reads | LWT | scripts | inbox inserts | inbox updates | inbox reads | inbox LWT | inbox scripts |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} > "$table"
echo "backend,page_limit,mailboxes,inbox,msg_per_s,mean_page,inserts,updates,reads,lwt,scripts,inbox_inserts,inbox_updates,inbox_reads,inbox_lwt,inbox_scripts" > "$out/$name.csv"
ks=0
for c in "${configs[@]}"; do
  read -r backend limit per n inbox <<<"$c"
  wants "$backend" || continue
  ks=$((ks + 1))
  args=()
  [[ $inbox == none ]] || args+=(--inbox)
  echo "bench: $backend page limit $limit, $per mailbox(es) per message, $n messages, inbox: $inbox"
  [[ $backend != scylla* ]] || keyspaces+=("qim_bench_$$_$ks")
  row=$(QIM_CQL_KEYSPACE="qim_bench_$$_$ks" QIM_MAILBOX_REDIS_PREFIX="qb$$.$ks:" \
        "$bench" --backend "$backend" --page-limit "$limit" --records "$n" "${args[@]}" \
        --recipients-per-record "$per" --shards 4 --warmup --no-header 2>/dev/null | tail -n 1)
  # | backend | limit | inbox | records/s | mean page | inserts | updates | reads | lwt | scripts | inbox x5 |
  IFS='|' read -r _ b l ib rate page ins upd rd lwt scr iins iupd ird ilwt iscr _ <<<"$row"
  echo "| $b | $l | $per | $ib | $rate | $page | $ins | $upd | $rd | $lwt | $scr | $iins | $iupd | $ird | $ilwt | $iscr |" | tr -s ' ' >> "$table"
  echo "$b,$l,$per,$ib,$rate,$page,$ins,$upd,$rd,$lwt,$scr,$iins,$iupd,$ird,$ilwt,$iscr" | tr -d ' ' | sed 's/,-/,/g' >> "$out/$name.csv"
done
cat >> "$table" <<EOT

ADR-0022's figures for comparison (one Scylla node, 4 cores; per message, archive writes excluded from
inserts): v2 page limit 64: inserts 2.10, updates 1.30, reads 1.46, LWT 0; page limit 1: updates 2.11;
form A: about 130 LWT per dispatch. Issue 38's target for the inbox: at most one write per delivered
entry (per message: at most \`mailboxes\`), zero LWT, zero reads on this path.

![store benchmark]($name.png)
EOT
if command -v gnuplot >/dev/null; then
  gnuplot <<EOT
set terminal pngcairo size 1200,500 noenhanced
set output "$out/$name.png"
set datafile separator ","
set style data histograms
set style histogram clustered
set style fill solid 0.8
set key top left
set xtics rotate by -30
set ylabel "operations per message (log scale)"
set logscale y
set yrange [0.01:300]
set title "Store operations per message (qim-store-bench; inbox: the inbox's own writes and reads)"
plot "$out/$name.csv" using 7:xtic(stringcolumn(1)."/".stringcolumn(2)."/".stringcolumn(3)."/".stringcolumn(4)) skip 1 title "inserts", \
     '' using 8 skip 1 title "updates", '' using 9 skip 1 title "reads", '' using 10 skip 1 title "LWT", \
     '' using (\$12+\$13+\$16) skip 1 title "inbox writes", '' using 14 skip 1 title "inbox reads"
EOT
fi
cat "$table"
