#!/usr/bin/env bash
# The event webhook's lag (docs/benchmarks.md "Event webhook lag"): `qim up` with QIM_WEBHOOK_URL pointing at a
# local receiver (scripts/bench/webhook-lag-receiver.mjs) under qim-load at RATE msg/s for DURATION s; the
# receiver measures each message.created event's arrival minus its Outbox server time. Prints qim-load's table,
# then the receiver's counts and lag percentiles once every acknowledged message's event has arrived (or 60 s
# after the load ended), with the load average beside them.
# usage: scripts/bench/webhook-lag.sh [RATE=2000] [DURATION=20]   (env: QIM, QIM_LOAD, BASE_PORT=44200)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
RATE=${1:-2000}
DURATION=${2:-20}
QIM=${QIM:-build/release/src/app/qim}
QIM_LOAD=${QIM_LOAD:-build/release/src/bench/load/qim-load}
BASE_PORT=${BASE_PORT:-44200}
HOOK_PORT=$((BASE_PORT + 50))
work=$(mktemp -d /tmp/qim-webhook-lag-bench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

node scripts/bench/webhook-lag-receiver.mjs "$HOOK_PORT" >"$work/receiver.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$HOOK_PORT/report" >/dev/null && break; sleep 0.1; done
dir="$work/qim"
mkdir -p "$dir"
env QIM_DATA_DIR="$dir" QIM_LOG_LEVEL=warn QIM_AUTH_SECRET=bench-secret-0123456789abcdef \
  QIM_WEBHOOK_URL="http://127.0.0.1:$HOOK_PORT/" QIM_WEBHOOK_SECRET="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" \
  "$QIM" up --port "$BASE_PORT" --admin-port $((BASE_PORT + 1)) >"$work/qim.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do [[ -f "$dir/running.json" ]] && break; sleep 0.1; done
[[ -f "$dir/running.json" ]] || { echo "qim up did not start:"; cat "$work/qim.log"; exit 1; }
echo "=== webhook lag: load average $(cut -d' ' -f1-3 /proc/loadavg) before"
"$QIM_LOAD" --data-dir "$dir" --secret bench-secret-0123456789abcdef --rate "$RATE" --duration "$DURATION" \
  --drain 5 --config "webhook" | tee "$work/load.out"
echo "=== webhook lag: load average $(cut -d' ' -f1-3 /proc/loadavg) after the load"
# The events still on their way: wait until the count stops growing for 3 s (at most 60 s).
last=-1 still=0
for _ in $(seq 1 600); do
  n=$(curl -sf "http://127.0.0.1:$HOOK_PORT/report" | python3 -c 'import json,sys; print(json.load(sys.stdin)["messages"])')
  if [[ $n == "$last" ]]; then still=$((still + 1)); else still=0; last=$n; fi
  ((still >= 30)) && break
  sleep 0.1
done
echo "=== webhook lag: the receiver (message.created events; lag = arrival - the record's server time)"
curl -sf "http://127.0.0.1:$HOOK_PORT/report"
echo
