#!/usr/bin/env bash
# Presence (issue 38 item 9, docs/benchmarks.md "Presence"): qim-load's presence mode against each
# configuration in turn: per contact count, a fresh subject with that many contacts (each shares a direct
# conversation with it and stays connected); the subject connects and closes again and again, and each
# change is timed from the subject's connect (or close) to the first and the last contact's PRESENCE
# frame about it, with the store reads and PRESENCE frames the deployment counted per change.
#
#   embedded     `qim up`: one process
#   redis        the distributed deployment (scripts/distributed.sh: two gateways, the routing Redis
#                carries the change between them) on the Redis store
#
#   bash scripts/bench/presence.sh [configuration...]        default: embedded
#
# Results in $QIM_PRESENCE_OUT (default bench-results/presence-<UTC time>): presence.md, presence.csv,
# presence.png (the last contact's P50 and P99 against contacts), logs/. A progress line per change.
#
# Environment (all optional):
#   QIM_PRESENCE_CONTACTS   contact counts ("100 1000")
#   QIM_PRESENCE_CHANGES    online/offline cycles per count (30)
#   QIM_PRESENCE_GRACE_MS   the deployments' offline grace (200 here, so a cycle is short; 5,000 by default
#                           in QIM): an offline change is timed from the close, grace included
#   QIM_PRESENCE_PORT       the embedded `qim up`'s client port (7790; admin +1)
#   QIM_SKIP_BUILD=1        use ./build/release as it is
set -euo pipefail
cd "$(dirname "$0")/../.."
configs=("$@")
((${#configs[@]})) || configs=(embedded)
for c in "${configs[@]}"; do
  case $c in embedded | redis) ;; *) echo "presence: unknown configuration '$c' (embedded redis)" >&2; exit 2 ;; esac
done
read -r -a counts <<<"${QIM_PRESENCE_CONTACTS:-100 1000}"
changes=${QIM_PRESENCE_CHANGES:-30}
export QIM_PRESENCE_GRACE_MS=${QIM_PRESENCE_GRACE_MS:-200}
port=${QIM_PRESENCE_PORT:-7790}
out=$(realpath -m "${QIM_PRESENCE_OUT:-bench-results/presence-$(date -u +%Y%m%dT%H%M%SZ)}")
# say, die, $bin, $load, $child and the deployments stopped on exit (scripts/bench/lib.sh).
bench_name=presence
source scripts/bench/lib.sh

[[ ${QIM_SKIP_BUILD:-0} == 1 ]] || bash scripts/build.sh
export QIM_SKIP_BUILD=1
for b in "$load" "$bin/app/qim"; do [[ -x $b ]] || die "$b is missing: build first (bash scripts/build.sh)"; done
mkdir -p "$out/logs"
grace_s=$(awk -v ms="$QIM_PRESENCE_GRACE_MS" 'BEGIN { printf "%.3f", ms / 1000 }')
presence_args=(--presence-contacts "$(IFS=,; echo "${counts[*]}")" --presence-changes "$changes"
  --presence-grace "$grace_s")
say "results in $out; configurations: ${configs[*]}; contacts ${counts[*]}; $changes changes each"

run_load() {
  local c=$1 rc
  shift
  set +e
  "$load" "$@" "${presence_args[@]}" --config "$c" --csv "$out/logs/$c.csv" --markdown "$out/logs/$c.md" 2>&1 |
    tee "$out/logs/$c.load.log" | grep --line-buffered -E '^(presence|  )'
  rc=${PIPESTATUS[0]}
  set -e
  case $rc in
    0) ;;
    3) say "$c: some changes did not reach every contact (see the table)" ;;
    *) tail -5 "$out/logs/$c.load.log" >&2; die "$c: qim-load failed (exit $rc)" ;;
  esac
}

for c in "${configs[@]}"; do
  if [[ $c == embedded ]]; then
    start_embedded "$out/logs/embedded" "$port"
    run_load embedded --data-dir "$out/logs/embedded"
    stop_child
  else
    export QIM_MAILBOX_STORE_BACKEND=$c
    distributed_up "$c"
    run_load "$c" "${data_dirs[@]}" --secret "$(<"$QIM_DISTRIBUTED_DIR/auth-secret")"
    distributed_down "$c"
  fi
  [[ -s $out/logs/$c.csv ]] || die "$c: qim-load wrote no results"
done
trap - EXIT

merge_csvs "$out/presence.csv" "${configs[@]}"
{
  echo "# Presence ($(date -u '+%F %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
  echo
  echo "qim-load's presence mode (\`scripts/bench/presence.sh ${configs[*]}\`): per count a fresh subject whose"
  echo "contacts each share a direct conversation with it and stay connected; $changes times the subject connects"
  echo "and closes. Times from its connect (close) to the first and the last contact's PRESENCE; an offline"
  echo "change includes the grace, QIM_PRESENCE_GRACE_MS=$QIM_PRESENCE_GRACE_MS."
  echo
  head -n 2 "$out/logs/${configs[0]}.md"
  for c in "${configs[@]}"; do tail -n +3 "$out/logs/$c.md"; done
  echo
  echo "![presence](presence.png)"
} >"$out/presence.md"

if command -v gnuplot >/dev/null; then
  plots=()
  for c in "${configs[@]}"; do
    awk -F, 'NR > 1 && $3 == "online" { print $2, $8, $9 }' "$out/logs/$c.csv" | sort -n >"$out/logs/$c.plot"
    plots+=("'$out/logs/$c.plot' using 1:2 with linespoints title '$c online, last contact P50'"
      "'$out/logs/$c.plot' using 1:3 with linespoints title '$c online, last contact P99'")
  done
  gnuplot <<GP
set terminal pngcairo size 1000,600 noenhanced
set output '$out/presence.png'
set title 'QIM presence: a change to the last contact against contacts ($(nproc) cores, $(date -u +%F))'
set xlabel 'contacts'
set ylabel 'ms from the change'
set logscale x
set grid
set key top left
plot $(IFS=,; echo "${plots[*]}")
GP
else
  say "no chart: gnuplot not found (scripts/install-deps.sh installs gnuplot-nox)"
fi
say "done: $out/presence.md, $out/presence.csv, $out/presence.png"
