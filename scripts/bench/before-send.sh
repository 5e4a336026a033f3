#!/usr/bin/env bash
# The before-send hook's cost on SEND_ACK (docs/benchmarks.md "Before-send hook"): `qim up` without a hook,
# then with a local hook answering allow (scripts/bench/before-send-hook.mjs), each under qim-load at the
# same offered rate; prints qim-load's tables and the load average beside them.
# usage: scripts/bench/before-send.sh [RATE=2000] [DURATION=20]   (env: QIM, QIM_LOAD, BASE_PORT=44100)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
RATE=${1:-2000}
DURATION=${2:-20}
QIM=${QIM:-build/release/src/app/qim}
QIM_LOAD=${QIM_LOAD:-build/release/src/bench/load/qim-load}
BASE_PORT=${BASE_PORT:-44100}
HOOK_PORT=$((BASE_PORT + 50))
SECRET="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
work=$(mktemp -d /tmp/qim-before-send-bench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

run() {  # NAME [ENV...]
  local name=$1
  shift
  local dir="$work/$name"
  mkdir -p "$dir"
  env QIM_DATA_DIR="$dir" QIM_LOG_LEVEL=warn QIM_AUTH_SECRET=bench-secret-0123456789abcdef "$@" \
    "$QIM" up --port "$BASE_PORT" --admin-port $((BASE_PORT + 1)) >"$dir.log" 2>&1 &
  local qim_pid=$!
  for _ in $(seq 1 300); do [[ -f "$dir/running.json" ]] && break; sleep 0.1; done
  [[ -f "$dir/running.json" ]] || { echo "qim up ($name) did not start:"; cat "$dir.log"; exit 1; }
  echo "=== $name: load average $(cut -d' ' -f1-3 /proc/loadavg) before"
  "$QIM_LOAD" --data-dir "$dir" --secret bench-secret-0123456789abcdef --rate "$RATE" --duration "$DURATION" \
    --drain 5 --config "$name"
  echo "=== $name: load average $(cut -d' ' -f1-3 /proc/loadavg) after"
  kill "$qim_pid"
  wait "$qim_pid" || true
}

run "no-hook"
node scripts/bench/before-send-hook.mjs "$HOOK_PORT" >"$work/hook.log" 2>&1 &
pids+=($!)
sleep 0.5
run "local-hook" QIM_BEFORE_SEND_URL="http://127.0.0.1:$HOOK_PORT/" QIM_BEFORE_SEND_SECRET="$SECRET"
kill "${pids[0]}" && sleep 0.3 && cat "$work/hook.log"
