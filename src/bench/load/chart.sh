#!/usr/bin/env bash
# Draws qim-load's CSV as a PNG: end-to-end P50/P99 and SEND_ACK P99 (ms, log scale) against the offered
# rate, one line per configuration, with the 250 ms SLO.
#   src/bench/load/chart.sh load.csv [load.png]
set -euo pipefail
csv=${1:?usage: $0 load.csv [out.png]}
out=${2:-${csv%.csv}.png}
command -v gnuplot >/dev/null || { echo "chart: gnuplot not found (scripts/install-deps.sh installs gnuplot-nox)" >&2; exit 1; }
configs=$(tail -n +2 "$csv" | cut -d, -f1 | sort -u)
plots=()
for c in $configs; do
  data=$(mktemp)
  awk -F, -v c="$c" 'NR > 1 && $1 == c { print $2, $11, $12, $10 }' "$csv" | sort -n > "$data"
  plots+=("'$data' using 1:2 with linespoints title '$c e2e P50'"
          "'$data' using 1:3 with linespoints title '$c e2e P99'"
          "'$data' using 1:4 with linespoints dashtype 2 title '$c SEND_ACK P99'")
done
joined=$(IFS=,; echo "${plots[*]}")
gnuplot <<GP
set terminal pngcairo size 1000,600 noenhanced
set output '$out'
set title 'qim-load: latency against offered rate'
set xlabel 'offered rate (msg/s)'
set ylabel 'latency (ms)'
set logscale y
set grid
set key top left
plot $joined, 250 with lines dashtype 3 lc rgb 'red' title 'SLO e2e P99 250 ms'
GP
echo "chart: $out"
