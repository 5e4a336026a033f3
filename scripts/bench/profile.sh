#!/usr/bin/env bash
# Where the CPU of the embedded `qim up` goes at a fixed offered rate (docs/benchmarks.md, "Profiling"):
# starts `qim up`, drives qim-load at RATE, records the server with perf (call graphs) for the middle of the
# run, and writes perf's top symbols, libraries and thread roles.
#
#   bash scripts/bench/profile.sh [RATE] [SECONDS]       default 2000 msg/s, 20 s recorded
#
# Environment: QIM_PROFILE_OUT (bench-results/profile-<UTC time>), QIM_PROFILE_PORT (7770, admin +1),
# QIM_LOAD_PAIRS (100). Needs perf (Debian: linux-perf) and kernel.perf_event_paranoid <= 2 for a process
# of your own.
set -euo pipefail
cd "$(dirname "$0")/../.."
rate=${1:-2000}
seconds=${2:-20}
port=${QIM_PROFILE_PORT:-7770}
out=$(realpath -m "${QIM_PROFILE_OUT:-bench-results/profile-$(date -u +%Y%m%dT%H%M%SZ)}")
bin=build/release/src
command -v perf >/dev/null || { echo "profile: perf not found" >&2; exit 1; }
mkdir -p "$out"
rm -rf "$out/embedded"
QIM_DATA_DIR=$out/embedded "$bin/app/qim" up --port "$port" --admin-port "$((port + 1))" >"$out/qim.log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do [[ -s $out/embedded/running.json ]] && break; sleep 0.2; done
[[ -s $out/embedded/running.json ]] || { echo "profile: qim up did not start (see $out/qim.log)" >&2; exit 1; }
# The load runs a quarter of the recording longer on each side, so perf sees the steady state only.
"$bin/bench/load/qim-load" --data-dir "$out/embedded" --pairs "${QIM_LOAD_PAIRS:-100}" --rate "$rate" \
  --duration "$((seconds * 3 / 2))" --drain 5 --config "embedded-profile" --markdown "$out/load.md" >"$out/load.log" 2>&1 &
load=$!
sleep "$((seconds / 4))"
perf record -F 499 -g -p "$server" -o "$out/perf.data" -- sleep "$seconds" 2>"$out/perf-record.log"
wait "$load"
# sed -n, not head: head would close the pipe early and fail the run under pipefail.
# perf pads its columns to the longest C++ symbol: one space between fields, no header lines.
tidy() { grep -v '^#' | grep -v '^$' | sed -E 's/[[:space:]]+-[[:space:]]+-[[:space:]]*$//; s/[[:space:]]+$//; s/  +/ /g'; }
perf report -i "$out/perf.data" --no-children -g none --sort symbol --stdio 2>/dev/null | tidy | sed -n 1,60p >"$out/top-symbols.txt"
perf report -i "$out/perf.data" --no-children -g none --sort dso --stdio 2>/dev/null | tidy | sed -n 1,25p >"$out/top-dsos.txt"
# By role: threads are named role + number (node-s3, qim-fanout-p12), so the numbers are summed away.
perf report -i "$out/perf.data" --no-children -g none --sort comm --stdio 2>/dev/null | tidy |
  awk '{ share = $1; sub(/%$/, "", share); $1 = ""; sub(/^ /, ""); sub(/[0-9]+$/, "N"); by[$0] += share }
       END { for (role in by) printf "%6.2f%% %s\n", by[role], role }' | sort -rn >"$out/top-threads.txt"
# Per role, what its samples were in (inclusive: the sample's stack holds the function) and what they
# were on (self), from the call graphs. perf's --comms would split a role by its threads' names, and the
# kernel cuts names at 15 characters (qim-archiver-p1 stands for p1 and p10-p15).
perf script -i "$out/perf.data" -F comm,ip,sym 2>/dev/null | awk '
  function flush() { if (role == "") return; samples[role]++; if (first != "") self[role SUBSEP first]++
                     for (f in seen) inc[role SUBSEP f]++; delete seen; role = ""; first = "" }
  /^\t/ { f = $0; sub(/^\t *[0-9a-f]+ /, "", f); if (f == "" || f == "[unknown]") next
          if (first == "") first = f; seen[f] = 1; next }
  NF > 0 { flush(); role = $1; sub(/[0-9]+$/, "N", role) }
  END { flush(); for (k in inc) { split(k, p, SUBSEP); printf "%s\t1\tinclusive\t%.1f\t%s\n", p[1], 100 * inc[k] / samples[p[1]], p[2] }
        for (k in self) { split(k, p, SUBSEP); printf "%s\t2\tself\t%.1f\t%s\n", p[1], 100 * self[k] / samples[p[1]], p[2] }
        for (r in samples) printf "%s\t0\tsamples\t%d\t-\n", r, samples[r] }' |
  sort -t$'\t' -k1,1 -k2,2n -k4,4nr |
  awk -F'\t' '$3 == "samples" { print "== " $1 ": " $4 " samples"; next }
               { key = $1 SUBSEP $3; if (++n[key] <= ($3 == "self" ? 12 : 25)) printf "%-9s %5.1f%% %s\n", $3, $4, substr($5, 1, 140) }' \
  >"$out/top-by-role.txt"
echo "profile: $out/top-symbols.txt, $out/top-dsos.txt, $out/top-threads.txt, $out/top-by-role.txt, $out/load.md (perf.data kept for perf report -i)"
