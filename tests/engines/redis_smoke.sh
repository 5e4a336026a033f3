#!/usr/bin/env bash
# Smoke test of scripts/engines/redis.sh: start (unless running), PING, SET/GET, stop (only if it started it).
# Instance name and port: $QIM_SMOKE_REDIS_NAME (smoke) and $QIM_SMOKE_REDIS_PORT (16379).
set -uo pipefail
SMOKE_NAME=redis
source "$(dirname "${BASH_SOURCE[0]}")/smoke_lib.sh"
name=${QIM_SMOKE_REDIS_NAME:-smoke}
port=${QIM_SMOKE_REDIS_PORT:-16379}
redis=("$ENGINES/redis.sh")

started=0
if [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]]; then
  echo "a redis already answers on 127.0.0.1:$port: using it, leaving it running"
else
  "${redis[@]}" start "$name" "$port" && started=1
fi
if ((started)); then
  smoke_check "redis $name answers PING on 127.0.0.1:$port" "${redis[@]}" wait "$name" "$port"
else  # not ours: no pid file to wait on, just ask it
  smoke_check "the redis on 127.0.0.1:$port answers PING" test "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>&1)" = PONG
fi
key="qim:smoke:$$:$RANDOM"
value="hello-$RANDOM"
smoke_check "SET $key" test "$(redis-cli -h 127.0.0.1 -p "$port" set "$key" "$value" 2>&1)" = OK
got=$(redis-cli -h 127.0.0.1 -p "$port" get "$key" 2>&1)
if [[ $got == "$value" ]]; then smoke_pass "GET returns what SET stored"; else smoke_fail "GET returned '$got', expected '$value'"; fi
redis-cli -h 127.0.0.1 -p "$port" del "$key" >/dev/null 2>&1 || true
if ((started)); then "${redis[@]}" stop "$name" "$port"; fi
smoke_summary
