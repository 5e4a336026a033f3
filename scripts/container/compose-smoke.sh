#!/usr/bin/env bash
# The compose files in the image (scripts/container/podman-compose.sh):
# - deploy/compose/qim-up.yml: `qim up` starts and passes its healthcheck as the non-root user, a message
#   goes through it (qimctl from the host against the published port), and the message is still there after
#   `down` and `up` (the data is on the volume); `down -v` at the end removes the volume;
# - deploy/compose/distributed.yml on the engines QIM_KAFKA_BROKERS, QIM_ROUTING_REDIS, QIM_MAILBOX_REDIS
#   (host loopback; unset: a failed check): every container healthy, the two MailboxNodes share the shards
#   through leases, a message sent through gateway-1 is read through gateway-2.
# Needs the image ($QIM_IMAGE) and qimctl ($QIMCTL, default build/release's).
#   QIM_DEPLOY_BASE_PORT   ports BASE+60 (clients) and BASE+61 (admin) for qim up, BASE+70..77 for the
#                          distributed one, on 127.0.0.1   (41600)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
base=${QIM_DEPLOY_BASE_PORT:-41600}
qimctl=${QIMCTL:-$qim_root/build/release/src/ctl/qimctl}
project=qimsmoke$$
pc=(bash "$qim_root/scripts/container/podman-compose.sh")
compose=("${pc[@]}" --project-name "$project" -f "$qim_root/deploy/compose/qim-up.yml")
dproject=qimdist$$
dcompose=("${pc[@]}" --project-name "$dproject" -f "$qim_root/deploy/compose/distributed.yml")
export QIM_IMAGE=$qim_image QIM_HOST_PORT=$((base + 60)) QIM_HOST_ADMIN_PORT=$((base + 61))
container=${project}_qim_1
url=ws://127.0.0.1:$QIM_HOST_PORT
log=$(mktemp "${TMPDIR:-/tmp}/qim-compose.XXXXXX")
cleanup() {
  "${compose[@]}" down -v >>"$log" 2>&1 || true
  qpodman volume rm -f "${project}_qim-data" >/dev/null 2>&1 || true
  [[ -z ${QIM_AUTH_SECRET:-} ]] || "${dcompose[@]}" down -v >>"$log" 2>&1 || true
  qpodman network rm -f "${project}_default" "${dproject}_default" >/dev/null 2>&1 || true
  rm -f "$log"
}
trap cleanup EXIT
up() { "${compose[@]}" up -d >>"$log" 2>&1; }

echo "compose: deploy/compose/qim-up.yml as project $project (clients on 127.0.0.1:$QIM_HOST_PORT)"
if up && wait_healthz "$QIM_HOST_ADMIN_PORT" 60; then pass "compose: qim up starts and answers /healthz"
else fail "compose: qim up starts and answers /healthz" "$(tail -n 5 "$log"; qpodman logs --tail 10 "$container" 2>&1)"
  checks_summary compose; exit 1; fi
uid=$(qpodman exec "$container" id -u 2>&1)
[[ $uid == 10001 ]] && pass "compose: runs as the non-root user 10001" || fail "compose: runs as the non-root user 10001" "id -u: $uid"
if out=$(qpodman healthcheck run "$container" 2>&1); then pass "compose: the image's healthcheck passes"
else fail "compose: the image's healthcheck passes" "$out"; fi
alice=$(qpodman exec "$container" qim token --user alice --device d1 2>&1 | tail -n 1)
bob=$(qpodman exec "$container" qim token --user bob --device d1 2>&1 | tail -n 1)
text="through compose $$-$RANDOM"
if out=$("$qimctl" send --url "$url" --token "$alice" --to bob "$text" 2>&1); then pass "compose: alice's SEND is acknowledged"
else fail "compose: alice's SEND is acknowledged" "$out"; fi
if wait_text 20 "$text" "$qimctl" sync --url "$url" --token "$bob"; then pass "compose: bob's SYNC has the message"
else fail "compose: bob's SYNC has the message" "$("$qimctl" sync --url "$url" --token "$bob" 2>&1 | tail -n 3)"; fi
# down (the volume stays), up: the same data directory, the same secret, the same mailbox.
if "${compose[@]}" down >>"$log" 2>&1 && up && wait_healthz "$QIM_HOST_ADMIN_PORT" 60 &&
  wait_text 20 "$text" "$qimctl" sync --url "$url" --token "$bob"; then
  pass "compose: after down and up the message is still there (data on the volume)"
else fail "compose: after down and up the message is still there (data on the volume)" "$(tail -n 5 "$log")"; fi
"${compose[@]}" down -v >>"$log" 2>&1
if qpodman volume exists "${project}_qim-data"; then fail "compose: down -v removes the volume" "it is still there"
else pass "compose: down -v removes the volume"; fi

# --- the distributed deployment on the host's engines
distributed() {
  if [[ -z ${QIM_KAFKA_BROKERS:-} || -z ${QIM_ROUTING_REDIS:-} || -z ${QIM_MAILBOX_REDIS:-} ]]; then
    fail "compose distributed: the engines" "QIM_KAFKA_BROKERS, QIM_ROUTING_REDIS and QIM_MAILBOX_REDIS must be set"
    return
  fi
  local run=dc$$x$RANDOM name port out
  export QIM_AUTH_SECRET=$run-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  export QIM_KAFKA_TOPIC_PREFIX=$run. QIM_MAILBOX_REDIS_PREFIX=$run: QIM_ROUTING_REDIS_PREFIX=$run:
  export QIM_GATEWAY1_PORT=$((base + 70)) QIM_GATEWAY1_ADMIN_PORT=$((base + 71)) QIM_GATEWAY2_PORT=$((base + 72))
  export QIM_GATEWAY2_ADMIN_PORT=$((base + 73)) QIM_FANOUT_ADMIN_PORT=$((base + 74))
  export QIM_MAILBOX1_ADMIN_PORT=$((base + 75)) QIM_MAILBOX2_ADMIN_PORT=$((base + 76)) QIM_ARCHIVER_ADMIN_PORT=$((base + 77))
  echo "compose: deploy/compose/distributed.yml as project $dproject (gateways on 127.0.0.1:$QIM_GATEWAY1_PORT and :$QIM_GATEWAY2_PORT)"
  if ! "${dcompose[@]}" up -d >>"$log" 2>&1; then
    fail "compose distributed: up" "$(grep -i error "$log" | grep -v systemd | tail -n 3)"
    return
  fi
  # Bounds, not expectations: on a loaded CI machine (the whole test run beside other work) a MailboxNode
  # has been seen to take over a minute to open its stores and to take its half of the leases.
  local healthy=1
  for name in mailbox-1:75 mailbox-2:76 archiver:77 fanout:74 gateway-1:71 gateway-2:73; do
    port=$((base + ${name#*:}))
    if ! wait_healthz "$port" 180 || ! out=$(qpodman healthcheck run "${dproject}_${name%:*}_1" 2>&1); then
      healthy=0
      fail "compose distributed: ${name%:*} healthy" "$(qpodman logs --tail 5 "${dproject}_${name%:*}_1" 2>&1)"
    fi
  done
  ((healthy)) && pass "compose distributed: all six containers healthy"
  # Both nodes hold shards once the leases are balanced (16 shards: 8 each).
  held() { local p; for p in "$QIM_MAILBOX1_ADMIN_PORT" "$QIM_MAILBOX2_ADMIN_PORT"; do
    curl -fsS --max-time 2 "http://127.0.0.1:$p/metrics" | sed -n 's/^qim_lease_shards_held //p'; done | tr '\n' ' '; }
  if wait_text 120 "8 8 " held; then pass "compose distributed: the two MailboxNodes hold 8 shards each (leases)"
  else fail "compose distributed: the two MailboxNodes hold 8 shards each (leases)" "held: $(held)"; fi
  local alice bob text="through gateway-1 to gateway-2 $run"
  alice=$(qpodman exec "${dproject}_gateway-1_1" qim token --user alice --device d1 2>&1 | tail -n 1)
  bob=$(qpodman exec "${dproject}_gateway-2_1" qim token --user bob --device d1 2>&1 | tail -n 1)
  if out=$("$qimctl" send --url "ws://127.0.0.1:$QIM_GATEWAY1_PORT" --token "$alice" --to bob "$text" 2>&1) &&
    wait_text 20 "$text" "$qimctl" sync --url "ws://127.0.0.1:$QIM_GATEWAY2_PORT" --token "$bob"; then
    pass "compose distributed: a message sent through gateway-1 is read through gateway-2"
  else fail "compose distributed: a message sent through gateway-1 is read through gateway-2" "$out"; fi
  "${dcompose[@]}" down -v >>"$log" 2>&1
}
distributed
checks_summary compose
