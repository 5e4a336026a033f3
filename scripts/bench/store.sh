#!/usr/bin/env bash
# The store benchmark: one-to-one records through the MailboxStore contract on every backend, side by side.
# Starts the engines it needs (Redis, one Cassandra node), runs qim-store-bench per configuration, and
# writes a Markdown table, a CSV and a chart (PNG, gnuplot) to docs/bench/ (or $QIM_BENCH_OUT).
#   bash scripts/bench/store.sh [records]        default 5000 records per configuration
set -euo pipefail
cd "$(dirname "$0")/../.."
records=${1:-5000}
out=${QIM_BENCH_OUT:-docs/bench}
bench=${QIM_STORE_BENCH:-./build/release/src/bench/store/qim-store-bench}
engines=scripts/engines
export QIM_RUN_DIR=${QIM_RUN_DIR:-/tmp/qim-bench-engines}
[ -x "$bench" ] || bash scripts/build.sh
mkdir -p "$out"

bash $engines/redis.sh start bench0 16379 && bash $engines/redis.sh wait bench0 16379
bash $engines/redis.sh start bench1 16380 && bash $engines/redis.sh wait bench1 16380
bash $engines/cassandra.sh start single && bash $engines/cassandra.sh wait single
trap 'bash $engines/redis.sh stop bench0 16379; bash $engines/redis.sh stop bench1 16380; bash $engines/cassandra.sh stop' EXIT
export QIM_MAILBOX_REDIS=127.0.0.1:16379,127.0.0.1:16380 QIM_CQL_HOSTS=127.0.0.1

# backend page-limit recipients-per-record records
configs=(
  "embedded 64 1 $records" "embedded 1 1 $records" "redis 1 1 $records"
  "scylla 64 1 $records" "scylla 1 1 $records" "scylla-lwt 1 1 $((records / 25))"
  "embedded 64 2 $records" "redis 1 2 $records" "scylla 64 2 $records" "scylla 1 2 $records"
)
table="$out/store.md"
{
  echo "# Store benchmark (qim-store-bench, $(date -u +%F), $(nproc) cores)"
  echo
  echo "One-to-one records through the whole contract (begin, write chunks, finish in pages), 4 shard workers."
  echo "Operations are per message; \`mailboxes\` is entries per message (1: the recipient; 2: and the sender's"
  echo "own copy). Counts are exact; rates are of this machine, with the engine on the same 2 cores."
  echo
  echo "| backend | page limit | mailboxes | msg/s | mean page | inserts | updates | reads | LWT | scripts |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} > "$table"
echo "backend,page_limit,mailboxes,msg_per_s,mean_page,inserts,updates,reads,lwt,scripts" > "$out/store.csv"
ks=0
for c in "${configs[@]}"; do
  read -r backend limit per n <<<"$c"
  ks=$((ks + 1))
  echo "bench: $backend page limit $limit, $per mailbox(es) per message, $n messages"
  row=$(QIM_CQL_KEYSPACE="qim_bench_$$_$ks" "$bench" --backend "$backend" --page-limit "$limit" --records "$n" \
        --recipients-per-record "$per" --shards 4 --warmup --no-header 2>/dev/null | tail -n 1)
  # | backend | limit | records/s | mean page | inserts | updates | reads | lwt | scripts |
  IFS='|' read -r _ b l rate page ins upd rd lwt scr _ <<<"$row"
  echo "| $b | $l | $per | $rate | $page | $ins | $upd | $rd | $lwt | $scr |" | tr -s ' ' >> "$table"
  echo "$(echo "$b,$l,$per,$rate,$page,$ins,$upd,$rd,$lwt,$scr" | tr -d ' ')" >> "$out/store.csv"
done
cat >> "$table" <<'EOT'

ADR-0022's figures for comparison (one Scylla node, 4 cores; per message, archive writes excluded from
inserts): v2 page limit 64: inserts 2.10, updates 1.30, reads 1.46, LWT 0; page limit 1: updates 2.11;
form A: about 130 LWT per dispatch.

![store benchmark](store.png)
EOT
if command -v gnuplot >/dev/null; then
  gnuplot <<EOT
set terminal pngcairo size 1000,500 noenhanced
set output "$out/store.png"
set datafile separator ","
set style data histograms
set style histogram clustered
set style fill solid 0.8
set key top left
set xtics rotate by -30
set ylabel "operations per message (log scale)"
set logscale y
set yrange [0.01:300]
set title "Store operations per message (qim-store-bench)"
plot "$out/store.csv" using 6:xtic(stringcolumn(1)."/".stringcolumn(2)."/".stringcolumn(3)) skip 1 title "inserts", \
     '' using 7 skip 1 title "updates", '' using 8 skip 1 title "reads", '' using 9 skip 1 title "LWT"
EOT
fi
cat "$table"
