#!/usr/bin/env bash
# `qim up` in the image through deploy/compose/qim-up.yml (podman-compose): it starts and passes its
# healthcheck as the non-root user, a message goes through it (qimctl from the host against the published
# port), and the message is still there after `down` and `up` (the data is on the volume); `down -v` at the
# end removes the volume. Needs the image ($QIM_IMAGE) and qimctl ($QIMCTL, default build/release's).
#   QIM_DEPLOY_BASE_PORT   ports BASE+60 (clients) and BASE+61 (admin) on 127.0.0.1   (41600)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
base=${QIM_DEPLOY_BASE_PORT:-41600}
qimctl=${QIMCTL:-$qim_root/build/release/src/ctl/qimctl}
project=qimsmoke$$
compose=(podman-compose --project-name "$project" -f "$qim_root/deploy/compose/qim-up.yml")
export QIM_IMAGE=$qim_image QIM_HOST_PORT=$((base + 60)) QIM_HOST_ADMIN_PORT=$((base + 61))
container=${project}_qim_1
url=ws://127.0.0.1:$QIM_HOST_PORT
log=$(mktemp "${TMPDIR:-/tmp}/qim-compose.XXXXXX")
cleanup() {
  "${compose[@]}" down -v >>"$log" 2>&1 || true
  qpodman volume rm -f "${project}_qim-data" >/dev/null 2>&1 || true
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
checks_summary compose
