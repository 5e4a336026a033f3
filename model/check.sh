#!/usr/bin/env bash
# The delivery rules, model-checked (model/README.md): Spin verifies model/qim.pml exhaustively in each
# fault configuration (0 errors over the full state space), and each mutant of a rule must yield a
# counterexample (a trail, replayed here). Installs nothing: needs `spin` and `gcc` (scripts/install-deps.sh).
#   bash model/check.sh            every check; the last line is "model smoke: N passed, M failed"
# QIM_MODEL_OUT=DIR keeps the generated verifiers, their output and the trails there (default: a temporary
# directory, removed at the end unless a check failed). QIM_MODEL_MEMLIM (MiB, default 2048) bounds each
# verifier's memory.
set -uo pipefail
cd "$(dirname "$0")"
model=$PWD/qim.pml
memlim=${QIM_MODEL_MEMLIM:-2048}
passed=0
failed=0

for tool in spin gcc; do
  command -v "$tool" >/dev/null || {
    echo "model: $tool is not installed (scripts/install-deps.sh installs it)"
    echo "model smoke: 0 passed, 1 failed"
    exit 1
  }
done

if [[ -n ${QIM_MODEL_OUT:-} ]]; then
  out=$QIM_MODEL_OUT
  mkdir -p "$out"
  keep=1
else
  out=$(mktemp -d "${TMPDIR:-/tmp}/qim-model.XXXXXX")
  keep=0
fi

# The fault budgets of each configuration (the model's defaults: model/qim.pml). Every configuration is
# checked exhaustively; together they cover each fault with each other one that it can interact with.
#   crash-replay  a crash and a restart, a lost identity write, an uncertain frontier write
#   stale-owner   a clock that falls behind its lease (the first line fails), an uncertain frontier write
#   shard-move    a planned move, a crash, a clock that falls behind its lease
declare -A configs=(
  [crash-replay]="-DSKEWS=0 -DMOVES=0"
  [stale-owner]="-DCRASHES=0 -DLOSSES=0 -DMOVES=0"
  [shard-move]="-DLOSSES=0 -DUNCERTAIN=0"
)
order=(crash-replay stale-owner shard-move)

ok() { echo "model: ok   $1"; passed=$((passed + 1)); }
bad() { echo "model: FAIL $1"; failed=$((failed + 1)); keep=1; }

# verify NAME DEFINES: builds and runs one verifier in $out/NAME; its output in $out/NAME/pan.out.
verify() {
  local name=$1 defines=$2 dir="$out/$1" start end
  mkdir -p "$dir"
  cp "$model" "$dir/qim.pml"
  # shellcheck disable=SC2086
  if ! (cd "$dir" && spin -a $defines qim.pml >spin.out 2>&1); then
    sed 's/^/  /' "$dir/spin.out"
    return 1
  fi
  # Safety properties only (assertions, invalid end states); exhaustive, no compression needed at these
  # bounds (the largest configuration stores ~3 million states, ~0.5 GB); the memory is bounded all the
  # same, and a search that hits the bound is reported as incomplete, never as a pass.
  if ! (cd "$dir" && gcc -O2 -DSAFETY -DMEMLIM="$memlim" -DVECTORSZ=2048 -w -o pan pan.c 2>gcc.out); then
    sed 's/^/  /' "$dir/gcc.out"
    return 1
  fi
  start=$(date +%s.%N)
  (cd "$dir" && ./pan -m20000 -w24 >pan.out 2>&1)
  end=$(date +%s.%N)
  elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  return 0
}

# figures NAME: states stored, depth, errors of a finished run.
figures() {
  local f="$out/$1/pan.out"
  states=$(awk '/states, stored/ { print $1; exit }' "$f")
  depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$f" | head -n 1)
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$f" | head -n 1)
  at=$(sed -n 's/.*(at depth \([0-9]*\)).*/\1/p' "$f" | head -n 1)
}

# complete NAME: the search covered the whole state space (no memory or depth bound hit).
complete() {
  local f="$out/$1/pan.out"
  ! grep -qE 'Search not completed|reached -DMEMLIM bound|max search depth too small|out of memory' "$f"
}

echo "model: spin $(spin -V | sed -n 's/Spin Version \([^ ]*\).*/\1/p'), model/qim.pml, output in $out"

# 1. The rules as the code has them: every configuration verifies with no error over its full state space.
for cfg in "${order[@]}"; do
  name="rules, $cfg"
  if ! verify "$cfg" "${configs[$cfg]}"; then
    bad "$name: the verifier did not build"
    continue
  fi
  figures "$cfg"
  line="$name: ${states:-?} states stored, depth ${depth:-?}, errors ${errors:-?}, ${elapsed} s"
  if [[ ${errors:-x} == 0 ]] && complete "$cfg"; then
    ok "$line"
  elif [[ ${errors:-x} == 0 ]]; then
    why=$(grep -m1 -E 'Search not completed|MEMLIM|depth too small|out of memory' "$out/$cfg/pan.out")
    bad "$line: the search did not complete ($why)"
  else
    bad "$line"
    # shellcheck disable=SC2086
    (cd "$out/$cfg" && spin -t ${configs[$cfg]} qim.pml 2>&1 | grep -E 'text of failed' | sed 's/^/  /')
  fi
done

# 2. Mutants: each breaks one rule, and Spin must find a counterexample that violates the property that
#    rule protects (the trail is replayed and the failed assertion named).
declare -A mutants=(
  [leak-read]="MUTANT_LEAK_READ crash-replay so<fr[se]"
  [frontier-before-identity]="MUTANT_FRONTIER_BEFORE_IDENT crash-replay (ca<=1)&&(cb<=1)"
  [stale-owner-not-fenced]="MUTANT_NO_FENCE stale-owner stale_writes[ep]<=1"
)
for m in leak-read frontier-before-identity stale-owner-not-fenced; do
  read -r flag cfg expect <<<"${mutants[$m]}"
  name="mutant $m ($flag, $cfg)"
  if ! verify "$m" "-D$flag ${configs[$cfg]}"; then
    bad "$name: the verifier did not build"
    continue
  fi
  figures "$m"
  if [[ ${errors:-0} -ge 1 && -f $out/$m/qim.pml.trail ]]; then
    # shellcheck disable=SC2086
    violated=$(cd "$out/$m" && spin -t -D$flag ${configs[$cfg]} qim.pml 2>&1 |
      sed -n 's/^spin: text of failed assertion: //p' | head -n 1)
    if [[ $violated == *"$expect"* ]]; then
      ok "$name: counterexample at depth ${at:-?} (${states:-?} states), violates $violated, ${elapsed} s"
    else
      bad "$name: a counterexample, but of another property: ${violated:-none replayed} (expected $expect)"
    fi
  else
    bad "$name: no counterexample (errors ${errors:-?}): the model no longer shows this rule matters"
  fi
done

if ((keep == 0)); then rm -rf "$out"; else echo "model: verifiers, outputs and trails kept in $out"; fi
echo "model smoke: $passed passed, $failed failed"
((failed == 0))
