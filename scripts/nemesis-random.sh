#!/usr/bin/env bash
# The randomized nemesis schedule (issue 42, item 5; docs/reliability.md; decision 86), seed after seed, on
# the distributed deployment: each run is the test Nemesis.RandomScheduleOfPausesKillsAndPartitionsLosesNothing
# (tests/e2e/nemesis_random_test.cc) with its own seed: a fresh deployment of nodes on leases under load,
# random pauses, kills, cuts, one-way cuts, lossy and delayed links for --each seconds, then healing and
# the history checker. The test command runs one short seed of it; this script runs it for longer.
#
#   bash scripts/nemesis-random.sh [--minutes M] [--each S] [--seed N]
#     --minutes M   total time to spend (default 5): runs start until M minutes have passed, so the last
#                   one may end up to S + about 60 s later (start, healing and the final read)
#     --each S      length of each run's schedule in seconds (default 120)
#     --seed N      the first seed (default: from the clock, printed); the next runs take N+1, N+2, ...
#
# Needs, as the distributed e2e phase (docs/running.md): a build (build/release/tests/e2e/qim_nemesis_test),
# root and nftables (scripts/install-deps.sh), and the engines in the environment: QIM_E2E_BACKEND=redis
# with QIM_MAILBOX_REDIS (two instances), or scylla with QIM_CQL_HOSTS; QIM_KAFKA_BROKERS and
# QIM_ROUTING_REDIS. E.g. on the engines scripts/test.sh starts:
#   QIM_E2E_BACKEND=redis QIM_KAFKA_BROKERS=127.0.0.1:19092 QIM_ROUTING_REDIS=127.0.0.1:16381 \
#     QIM_MAILBOX_REDIS=127.0.0.1:16379,127.0.0.1:16380 bash scripts/nemesis-random.sh --minutes 30
# Each run's history is kept in $QIM_E2E_HISTORY_DIR (default build/histories) as
# nemesis-random-<seed>.history.jsonl and its output in build/nemesis-random/<seed>.log. Exit 0 if every
# run passed; 1 otherwise (the failed seeds are listed: rerun one with --minutes 0 --seed N).
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=5 each=120 seed=""
while (($#)); do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --each) each=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) echo "usage: bash scripts/nemesis-random.sh [--minutes M] [--each S] [--seed N]" >&2; exit 2 ;;
  esac
done
[[ $minutes =~ ^[0-9]+$ && $each =~ ^[0-9]+$ ]] || { echo "nemesis-random: --minutes and --each take whole numbers" >&2; exit 2; }
seed=${seed:-$(date +%s)}
binary=build/release/tests/e2e/qim_nemesis_test
[[ -x $binary ]] || { echo "nemesis-random: $binary is missing: build it (cmake --build --preset release --target qim_nemesis_test)" >&2; exit 2; }
for v in QIM_E2E_BACKEND QIM_KAFKA_BROKERS QIM_ROUTING_REDIS; do
  [[ -n ${!v:-} ]] || { echo "nemesis-random: $v is not set (see the head of this script)" >&2; exit 2; }
done
export QIM_E2E_DEPLOYMENT=distributed
export QIM_E2E_HISTORY_DIR=${QIM_E2E_HISTORY_DIR:-$PWD/build/histories}
logs=build/nemesis-random
mkdir -p "$logs" "$QIM_E2E_HISTORY_DIR"

echo "nemesis-random: ${minutes} min on the distributed deployment ($QIM_E2E_BACKEND store), runs of ${each} s, first seed $seed"
began=$SECONDS runs=0 failed=()
# At least one run (--minutes 0 reruns one seed).
while ((runs == 0 || SECONDS - began < minutes * 60)); do
  log=$logs/$seed.log
  started=$SECONDS
  if QIM_NEMESIS_SEED=$seed QIM_NEMESIS_DURATION_S=$each "$binary" \
    --gtest_filter='Nemesis.RandomScheduleOfPausesKillsAndPartitionsLosesNothing' >"$log" 2>&1; then
    verdict=passed
  else
    verdict=FAILED
    failed+=("$seed")
  fi
  figures=$(grep -m1 '^\[ nemesis  \] random schedule, seed' "$log" | sed 's/^\[ nemesis  \] //' || true)
  echo "nemesis-random: seed $seed $verdict in $((SECONDS - started)) s: ${figures:-no figures (see $log)}"
  runs=$((runs + 1))
  seed=$((seed + 1))
done
echo "nemesis-random: $runs runs in $(((SECONDS - began) / 60)) min $(((SECONDS - began) % 60)) s, ${#failed[@]} failed${failed:+: seeds ${failed[*]}}"
((${#failed[@]} == 0))
