# shellcheck shell=bash
# Shared by tests/engines/*_smoke.sh: counters, checks and the closing line "NAME smoke: N passed, N failed".
# The sourcing script sets SMOKE_NAME first.
SMOKE_PASSED=0
SMOKE_FAILED=0
ENGINES="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../scripts/engines" && pwd)"

smoke_pass() { SMOKE_PASSED=$((SMOKE_PASSED + 1)); echo "PASS: $*"; }
smoke_fail() { SMOKE_FAILED=$((SMOKE_FAILED + 1)); echo "FAIL: $*"; }

# smoke_check DESCRIPTION CMD...: passes if CMD succeeds; on failure shows its output.
smoke_check() {
  local what=$1 out
  shift
  if out=$("$@" 2>&1); then smoke_pass "$what"; else smoke_fail "$what"; printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'; return 1; fi
}

# QIM_SMOKE_USE_RUNNING=1: the engine must already run (the caller started it and checks its start); a
# smoke that started its own would hide that the caller's start failed.
smoke_use_running() { [[ ${QIM_SMOKE_USE_RUNNING:-0} == 1 ]]; }

smoke_summary() {
  echo "$SMOKE_NAME smoke: $SMOKE_PASSED passed, $SMOKE_FAILED failed"
  ((SMOKE_FAILED == 0))
}
