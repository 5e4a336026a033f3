#!/usr/bin/env bash
# The deploy test (scripts/test.sh phase "deploy"; docs/deploy.md): the image, the chart, the monitoring
# files, `qim up` through compose and the chart's manifests through `podman kube play`, on this machine.
#   bash scripts/container/deploy-test.sh [BUILD_DIR]    (default build/release: its qim and qimctl)
# Needs the engines of the distributed deployment on loopback for the kube-play part: QIM_KAFKA_BROKERS,
# QIM_ROUTING_REDIS, QIM_MAILBOX_REDIS (scripts/test.sh passes its own). Installs what it needs first
# (scripts/container/install-deps.sh). Every step is a check; a step that cannot run (podman cannot start a
# container, no helm) is a failed check, never a skip. The last line is "deploy smoke: N passed, M failed".
#   QIM_DEPLOY_BASE_PORT (41600), QIM_IMAGE (localhost/qim:dev), QIM_CACHE_DIR (~/.cache/qim)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
build=$(realpath "${1:-$qim_root/build/release}")
export QIMCTL=${QIMCTL:-$build/src/ctl/qimctl}
export QIM_CHECKS_FILE
QIM_CHECKS_FILE=$(mktemp "${TMPDIR:-/tmp}/qim-deploy-checks.XXXXXX")
trap 'rm -f "$QIM_CHECKS_FILE"' EXIT
start=$SECONDS
timings=()
step() { timings+=("$1 $((SECONDS - step_start)) s"); step_start=$SECONDS; }
step_start=$SECONDS
# The final line counts every check, the sub-scripts' too (they append to QIM_CHECKS_FILE).
finish() {
  local p f
  p=$(grep -c '^pass$' "$QIM_CHECKS_FILE")
  f=$(grep -c '^fail$' "$QIM_CHECKS_FILE")
  echo "deploy: steps: ${timings[*]/%/;} total $((SECONDS - start)) s"
  echo "deploy smoke: $p passed, $f failed"
  ((f == 0))
  exit
}

echo "deploy: installing the container tools (scripts/container/install-deps.sh)"
if out=$(bash "$qim_root/scripts/container/install-deps.sh" 2>&1); then pass "install: podman, buildah, runc, promtool, ... present"
else fail "install: podman, buildah, runc, promtool, ... present" "$out"; finish; fi
echo "$out" | sed 's/^/    /'
step install

# --- monitoring files (no container needed)
out=$(promtool check rules "$qim_root/deploy/prometheus/qim-alerts.yml" 2>&1) &&
  pass "promtool check rules deploy/prometheus/qim-alerts.yml" || fail "promtool check rules" "$out"
out=$(cd "$qim_root/deploy/prometheus" && promtool test rules qim-alerts.test.yml 2>&1) &&
  pass "promtool test rules deploy/prometheus/qim-alerts.test.yml" || fail "promtool test rules" "$out"
# Every metric the dashboard and the alerts name is one QIM exports (its name is in src/).
out=$(python3 - "$qim_root" <<'PY'
import json, re, subprocess, sys
root = sys.argv[1]
text = open(root + "/deploy/grafana/qim-dashboard.json").read()
json.loads(text)
text += open(root + "/deploy/prometheus/qim-alerts.yml").read()
names = set(re.findall(r"\b(qim_[a-z0-9_]+?)(?:_bucket|_sum|_count)?\b", text))
src = subprocess.run(["grep", "-rhoE", '"qim_[a-z0-9_]+"', root + "/src"], capture_output=True, text=True).stdout
known = set(s.strip('"') for s in src.split())
missing = sorted(n for n in names if n not in known)
print("%d metric names" % len(names))
if missing:
    print("not exported by QIM:", " ".join(missing))
    sys.exit(1)
PY
) && pass "grafana dashboard is JSON; it and the alerts name only QIM's metrics ($out)" ||
  fail "grafana dashboard and alert metric names" "$out"
# Every query of the dashboard parses: each becomes a recording rule ($__rate_interval -> 5m, $instance
# -> .*) that promtool checks.
queries=$(mktemp "${TMPDIR:-/tmp}/qim-dashboard-rules.XXXXXX")
python3 - "$qim_root/deploy/grafana/qim-dashboard.json" >"$queries" <<'PY'
import json, sys
exprs = [t["expr"] for p in json.load(open(sys.argv[1]))["panels"] for t in p.get("targets", [])]
rules = [{"record": "qim_dashboard:q%d" % i, "expr": e.replace("$__rate_interval", "5m").replace("$instance", ".*")}
         for i, e in enumerate(exprs)]
print(json.dumps({"groups": [{"name": "dashboard", "rules": rules}]}))
PY
out=$(promtool check rules "$queries" 2>&1) &&
  pass "grafana dashboard: its $(grep -o '"record"' "$queries" | wc -l) queries parse (promtool)" ||
  fail "grafana dashboard: its queries parse" "$out"
rm -f "$queries"
step monitoring

# --- Helm: the pinned binary (built once from the Go module proxy), lint, template, the manifests' shape
if HELM=$(bash "$qim_root/scripts/container/helm.sh"); then
  export HELM
  pass "helm $("$HELM" version --short 2>/dev/null) (cached under $qim_cache/helm)"
  out=$("$HELM" lint --strict "$qim_root/deploy/helm/qim" 2>&1 &&
    "$HELM" lint --strict "$qim_root/deploy/helm/qim" --set networkPolicy.enabled=true 2>&1) &&
    pass "helm lint --strict deploy/helm/qim (default values, and with the NetworkPolicy)" ||
    fail "helm lint --strict deploy/helm/qim" "$out"
  rendered=$(mktemp "${TMPDIR:-/tmp}/qim-rendered.XXXXXX")
  if out=$("$HELM" template qim "$qim_root/deploy/helm/qim" 2>&1 >"$rendered"); then
    pass "helm template deploy/helm/qim ($(grep -c '^kind:' "$rendered") objects)"
    out=$(python3 "$qim_root/scripts/container/chart-check.py" "$rendered" 2>&1) &&
      pass "chart: Deployments per role, gateway Service, ConfigMap, Secret, /healthz probes, Prometheus annotations, non-root" ||
      fail "chart: the rendered manifests' shape" "$out"
  else
    fail "helm template deploy/helm/qim" "$out"
  fi
  rm -f "$rendered"
else
  fail "helm: the pinned binary" "scripts/container/helm.sh failed"
fi
step helm

# --- the image
if ! out=$(podman_ready); then
  fail "podman can run here" "$out (the image, compose and kube-play checks cannot run)"
  finish
fi
if out=$(bash "$qim_root/scripts/container/build-image.sh" "$build" 2>&1); then
  echo "$out" | sed 's/^/    /'
  pass "image built from $build ($(echo "$out" | tail -n 1 | sed 's/^image: //'))"
else
  fail "image built from $build" "$out"
  finish
fi
cfg=$(qpodman image inspect "$qim_image" --format '{{.Config.User}}|{{.Config.Healthcheck}}|{{.Config.Entrypoint}}' 2>&1)
[[ $cfg == 10001:10001\|*healthz*\|*qim* ]] && pass "image: user 10001, a /healthz healthcheck, entrypoint qim" ||
  fail "image: user 10001, a /healthz healthcheck, entrypoint qim" "$cfg"
# Both binaries start in the image (every library they link is there).
out=$(qpodman run --rm "${podman_run_flags[@]}" "$qim_image" --help 2>&1) && [[ $out == *gateway* ]] &&
  out=$(qpodman run --rm "${podman_run_flags[@]}" --entrypoint qimctl "$qim_image" --help 2>&1) &&
  pass "image: podman runs qim and qimctl in it (runc, cgroupfs, explicit ulimits)" ||
  fail "image: podman runs qim and qimctl in it" "$out"
step image

# --- compose: qim up with its data on a volume
bash "$qim_root/scripts/container/compose-smoke.sh"
step compose

# --- the chart's manifests through podman kube play
bash "$qim_root/scripts/container/kube-play-test.sh"
step kube-play
finish
