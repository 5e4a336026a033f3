#!/usr/bin/env bash
# The Helm chart's rendered manifests run with `podman kube play` on this machine: a message sent through
# one gateway pod arrives through the other.
#
# Two releases of deploy/helm/qim, rendered with `helm template` and played: "qim" (a gateway, fanout, a
# MailboxNode on shard leases, the archiver) and "qimb" (only a gateway, sharing qim's Secret through
# auth.existingSecret). On one machine the pods use the host's network (hostNetwork: the engines are on
# loopback), so two gateway pods need two ports: two releases rather than replicas: 2 (which podman plays as
# two pods on one port). qimctl on the host listens as bob through qimb's gateway and sends as alice through
# qim's; the message must arrive, and then be in alice's history (the archiver).
#
# Environment: the engines (required): QIM_KAFKA_BROKERS, QIM_ROUTING_REDIS, QIM_MAILBOX_REDIS; HELM (the
# binary; default: scripts/container/helm.sh), QIMCTL, QIM_IMAGE; QIM_DEPLOY_BASE_PORT (41600): qim's
# gateway BASE+10 (admin +11), fanout admin +21, mailbox admin +31, archiver admin +41, qimb's gateway
# BASE+50 (admin +51), all on 127.0.0.1. Topic and key prefixes are unique to the run.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
if [[ -z ${QIM_KAFKA_BROKERS:-} || -z ${QIM_ROUTING_REDIS:-} || -z ${QIM_MAILBOX_REDIS:-} ]]; then
  fail "kube-play: the engines" "QIM_KAFKA_BROKERS, QIM_ROUTING_REDIS and QIM_MAILBOX_REDIS must be set"
  checks_summary kube-play
  exit 1
fi
base=${QIM_DEPLOY_BASE_PORT:-41600}
if ! helm=${HELM:-$(bash "$qim_root/scripts/container/helm.sh")}; then
  fail "kube-play: helm" "scripts/container/helm.sh failed"
  checks_summary kube-play
  exit 1
fi
qimctl=${QIMCTL:-$qim_root/build/release/src/ctl/qimctl}
chart=$qim_root/deploy/helm/qim
work=$(mktemp -d "${TMPDIR:-/tmp}/qim-kube-play.XXXXXX")
run=kp$$x$RANDOM
secrets=()
cleanup() {
  local f
  for f in "$work"/*/play.yaml; do [[ -f $f ]] && qpodman kube down "$f" >/dev/null 2>&1; done
  for s in "${secrets[@]}"; do qpodman secret rm "$s" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT

repo=${qim_image%:*}
tag=${qim_image##*:}
cat >"$work/values.yaml" <<YAML
image: {repository: "$repo", tag: "$tag", pullPolicy: IfNotPresent}
hostNetwork: true
listen: {gateway: 127.0.0.1, admin: 127.0.0.1}
config:
  QIM_LOG_BACKEND: kafka
  QIM_KAFKA_BROKERS: "$QIM_KAFKA_BROKERS"
  QIM_KAFKA_TOPIC_PREFIX: "$run."
  QIM_MAILBOX_STORE_BACKEND: redis
  QIM_MAILBOX_REDIS: "$QIM_MAILBOX_REDIS"
  QIM_MAILBOX_REDIS_PREFIX: "$run:"
  QIM_ROUTING_REDIS: "$QIM_ROUTING_REDIS"
  QIM_ROUTING_REDIS_PREFIX: "$run:"
  QIM_SHARDS: "4"
  QIM_SHARD_LEASE_TTL_MS: "4000"
  QIM_LOG_LEVEL: info
gateway: {replicas: 1, port: $((base + 10)), adminPort: $((base + 11))}
fanout: {adminPort: $((base + 21))}
mailbox: {replicas: 1, adminPort: $((base + 31))}
archiver: {adminPort: $((base + 41))}
YAML
cat >"$work/values-b.yaml" <<YAML
auth: {existingSecret: qim-auth}
gateway: {replicas: 1, port: $((base + 50)), adminPort: $((base + 51))}
fanout: {enabled: false}
mailbox: {enabled: false}
archiver: {enabled: false}
YAML

# render RELEASE VALUES...: helm template into $work/RELEASE/, then the play file and the secrets.
render() {
  local release=$1 out=$work/$1
  shift
  mkdir -p "$out"
  local args=() v
  for v in "$@"; do args+=(-f "$v"); done
  "$helm" template "$release" "$chart" "${args[@]}" >"$out/rendered.yaml" 2>"$out/helm.err" || return 1
  python3 "$qim_root/scripts/container/kube-play.py" "$out/rendered.yaml" "$out" >"$out/secrets" || return 1
}
# play RELEASE: creates the release's secrets and plays its pods.
play() {
  local out=$work/$1 word name file
  while read -r word name file; do
    qpodman secret create "$name" "$file" >/dev/null || return 1
    secrets+=("$name")
  done <"$out/secrets"
  qpodman kube play "$out/play.yaml" >"$out/play.log" 2>&1
}

echo "kube-play: releases qim and qimb of deploy/helm/qim (image $qim_image, prefix $run)"
if render qim "$work/values.yaml" && render qimb "$work/values.yaml" "$work/values-b.yaml"; then
  pass "kube-play: helm template renders both releases"
else fail "kube-play: helm template renders both releases" "$(cat "$work"/*/helm.err)"; checks_summary kube-play; exit 1; fi

if play qim && play qimb; then pass "kube-play: podman kube play starts every pod"
else fail "kube-play: podman kube play starts every pod" "$(tail -n 5 "$work"/*/play.log)"; checks_summary kube-play; exit 1; fi

declare -A admin=([qim-mailbox]=$((base + 31)) [qim-archiver]=$((base + 41)) [qim-fanout]=$((base + 21))
  [qim-gateway]=$((base + 11)) [qimb-gateway]=$((base + 51)))
for d in qim-mailbox qim-archiver qim-fanout qim-gateway qimb-gateway; do
  ctr=$d-pod-0-qim
  if wait_healthz "${admin[$d]}" 90; then
    # The liveness probe as podman runs it, inside the image (`curl -f http://localhost:PORT/healthz`).
    if out=$(qpodman healthcheck run "$ctr" 2>&1); then pass "kube-play: $d answers /healthz and its probe passes"
    else fail "kube-play: $d answers /healthz and its probe passes" "podman healthcheck run: $out"; fi
  else
    fail "kube-play: $d answers /healthz and its probe passes" "no /healthz on ${admin[$d]}: $(qpodman logs --tail 5 "$ctr" 2>&1)"
  fi
done

metrics=$(curl -fsS --max-time 3 "http://127.0.0.1:$((base + 11))/metrics" 2>&1)
[[ $metrics == *qim_gateway_connections* ]] && pass "kube-play: the gateway pod serves /metrics" ||
  fail "kube-play: the gateway pod serves /metrics" "${metrics:0:200}"

alice=$(qpodman exec qim-gateway-pod-0-qim qim token --user alice --device d1 2>&1 | tail -n 1)
bob=$(qpodman exec qimb-gateway-pod-0-qim qim token --user bob --device d1 2>&1 | tail -n 1)
url_a=ws://127.0.0.1:$((base + 10))
url_b=ws://127.0.0.1:$((base + 50))
text="through two gateway pods $run"
"$qimctl" listen --url "$url_b" --token "$bob" --count 1 --timeout-s 60 >"$work/listen.out" 2>&1 &
listener=$!
sleep 1
if out=$("$qimctl" send --url "$url_a" --token "$alice" --to bob "$text" 2>&1); then
  pass "kube-play: alice's SEND through qim's gateway pod is acknowledged"
else fail "kube-play: alice's SEND through qim's gateway pod is acknowledged" "$out"; fi
wait "$listener"
if grep -qF "$text" "$work/listen.out"; then pass "kube-play: bob receives it through qimb's gateway pod"
else fail "kube-play: bob receives it through qimb's gateway pod" "$(tail -n 5 "$work/listen.out")"; fi
if wait_text 30 "$text" "$qimctl" history --url "$url_b" --token "$bob" --with alice; then
  pass "kube-play: the archiver pod wrote it to history"
else fail "kube-play: the archiver pod wrote it to history" "$("$qimctl" history --url "$url_b" --token "$bob" --with alice 2>&1 | tail -n 3)"; fi
checks_summary kube-play
