# Shared by scripts/container/*.sh (sourced): podman with this repo's settings, the cache directory.
# CONTAINERS_CONF points podman (and podman-compose, which calls it) at deploy/podman/containers.conf:
# runc with the cgroupfs manager and explicit nofile/nproc limits (docs/deploy.md, "This host's podman").
qim_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export CONTAINERS_CONF=${QIM_CONTAINERS_CONF:-$qim_root/deploy/podman/containers.conf}
qim_cache=${QIM_CACHE_DIR:-$HOME/.cache/qim}
qim_image=${QIM_IMAGE:-localhost/qim:dev}
# The flags every `podman run` of the scripts passes as well (the config file above says the same; the
# flags keep a run right when someone else's CONTAINERS_CONF is in force).
podman_run_flags=(--ulimit nofile=16384:16384 --ulimit nproc=8192:8192)
qpodman() { podman --runtime runc --cgroup-manager cgroupfs "$@"; }
# True when podman can start a container here; otherwise prints why (the deploy phase fails on it).
podman_ready() {
  command -v podman >/dev/null || { echo "podman is not installed (bash scripts/container/install-deps.sh)"; return 1; }
  local out
  out=$(qpodman info --format '{{.Host.OCIRuntime.Name}} {{.Host.CgroupManager}}' 2>&1) ||
    { echo "podman info failed: $out"; return 1; }
}

# Checks: each prints one line ("  ok   NAME" or "  FAIL NAME: WHY") and, when QIM_CHECKS_FILE is set (the
# deploy test), appends "pass"/"fail" to it; checks_summary prints "LABEL: N passed, M failed".
checks_passed=0
checks_failed=0
pass() {
  checks_passed=$((checks_passed + 1))
  echo "  ok   $1"
  [[ -z ${QIM_CHECKS_FILE:-} ]] || echo pass >>"$QIM_CHECKS_FILE"
}
fail() {
  checks_failed=$((checks_failed + 1))
  echo "  FAIL $1: $2"
  [[ -z ${QIM_CHECKS_FILE:-} ]] || echo fail >>"$QIM_CHECKS_FILE"
}
checks_summary() { echo "$1: $checks_passed passed, $checks_failed failed"; ((checks_failed == 0)); }
# wait_healthz PORT SECONDS: true once http://127.0.0.1:PORT/healthz answers 200.
wait_healthz() {
  local deadline=$((SECONDS + $2))
  until curl -fsS --max-time 2 "http://127.0.0.1:$1/healthz" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}
# wait_text SECONDS TEXT COMMAND...: true once COMMAND's output contains TEXT (the command is run again
# every half second).
wait_text() {
  local deadline=$((SECONDS + $1)) text=$2
  shift 2
  until "$@" 2>&1 | grep -qF -- "$text"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}
