#!/usr/bin/env bash
# The distributed rows of the ladder under their old name: scripts/bench/ladder.sh with the distributed
# configurations only (scylla at page limit 64, then redis, unless QIM_LOAD_STORES says otherwise).
#
#   bash scripts/bench/distributed-load.sh [rates...]     default rates: 200 1000 2000
#
# Environment: QIM_LOAD_PAIRS (100), QIM_LOAD_SECONDS per step (20), QIM_LOAD_DRAIN (10), QIM_LOAD_WARMUP
# (60), QIM_LOAD_STORES ("scylla redis"; scylla is page limit 64), QIM_BENCH_OUT (the results folder,
# default bench-results/distributed-<UTC time>), QIM_SKIP_BUILD=1 to use the build as is. See ladder.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
rates=("$@")
((${#rates[@]})) || rates=(200 1000 2000)
configs=()
for s in ${QIM_LOAD_STORES:-scylla redis}; do
  case $s in scylla) configs+=(scylla-p64) ;; *) configs+=("$s") ;; esac
done
export QIM_LADDER_RATES="${rates[*]}" QIM_LADDER_RATES_scylla_lwt="${rates[*]}"
export QIM_LADDER_PAIRS=${QIM_LOAD_PAIRS:-100} QIM_LADDER_SECONDS=${QIM_LOAD_SECONDS:-20}
export QIM_LADDER_DRAIN=${QIM_LOAD_DRAIN:-10} QIM_LADDER_WARMUP=${QIM_LOAD_WARMUP:-60}
export QIM_LADDER_OUT=${QIM_BENCH_OUT:-bench-results/distributed-$(date -u +%Y%m%dT%H%M%SZ)}
exec bash scripts/bench/ladder.sh "${configs[@]}"
