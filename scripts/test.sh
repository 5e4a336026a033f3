#!/usr/bin/env bash
# The test command (README, CI): installs, builds, starts each engine once, runs every test, stops them.
#   bash scripts/test.sh            everything: unit, contract suites, engines, pipeline, e2e (one process
#                                    and distributed on Kafka), faults, CQL gate, the deployment files
#                                    (image, Helm chart, compose, podman kube play: docs/deploy.md)
#   QIM_TEST_SKIP_CLUSTER=1 ...      skip the three-node Cassandra gate (faster local runs)
#
# Output (DEVELOPERS.md, "Tests"): each phase starts with "=== test phase: NAME" and ends with
# "=== NAME: passed (...) in T s" or "=== NAME: FAILED (...: why) in T s"; after the engines are stopped, a summary of
# the phases and, as the very last line, "tests: N passed, M failed": every individual test of every phase
# (ctest's, counted from its JUnit report, and each smoke script's checks). A phase that fails without a
# failed test of its own (its engine did not start, it ran no test, all its tests were skipped, a test
# skipped for want of an engine the phase provides) counts the tests it did not run as failed (at least
# one), so M > 0 exactly when something failed, and the exit code is non-zero exactly then.
#
# Overrides, to run the script beside other copies on one machine or only some phases:
#   QIM_TEST_PHASES="unit asan model objstore redis kafka pipeline cassandra cluster deploy web"   the groups to run (default: all)
#   QIM_TEST_REDIS_PORTS="16379 16380 16381"   two mailbox instances and one routing; QIM_TEST_SMOKE_REDIS_PORT
#   (16382); QIM_RUN_DIR, QIM_CASSANDRA_ADDRESS_PREFIX, QIM_CASSANDRA_JMX_PORT, QIM_KAFKA_PORT,
#   QIM_KAFKA_CONTROLLER_PORT, QIM_KAFKA_HEAP: as the engine scripts; QIM_TEST_SKIP_BUILD=1 uses the build as
#   it is.
set -euo pipefail
# Bash reads a script as it runs it; everything is in functions and the last line calls them, so editing
# this file during a run cannot change what the run does next.
setup() {
  cd "$(dirname "$0")/.."
  # Until the phases start (on_exit below takes over), any exit is a failure that still ends the output with
  # the total line.
  trap 'rc=$?; echo "test: stopped before the first phase (exit code $rc)"; echo "tests: 0 passed, 1 failed"; exit $((rc ? rc : 1))' EXIT
  [[ ${QIM_TEST_SKIP_BUILD:-0} == 1 ]] || bash scripts/build.sh
  echo "test: installing and building took $SECONDS s"
  phase_mark=$SECONDS

  export QIM_RUN_DIR=${QIM_RUN_DIR:-/tmp/qim-test-engines}
  engines=scripts/engines
  # The fault tests stop an engine and start it again through these scripts (tests/e2e/engine_control.h).
  export QIM_TEST_ENGINES_DIR=$PWD/$engines
  # Client histories the e2e and fault tests record (docs/reliability.md), kept after the run so that
  # `qim-history-check` can read them again.
  export QIM_E2E_HISTORY_DIR=${QIM_E2E_HISTORY_DIR:-$PWD/build/histories}
  read -r -a redis_ports <<<"${QIM_TEST_REDIS_PORTS:-16379 16380 16381}"
  ((${#redis_ports[@]} == 3)) || { echo "test: QIM_TEST_REDIS_PORTS needs three ports"; exit 2; }
  smoke_redis_port=${QIM_TEST_SMOKE_REDIS_PORT:-16382}
  prefix=${QIM_CASSANDRA_ADDRESS_PREFIX:-127.0.0.}
  # Every phase group, in the order they run.
  local all="unit asan model objstore redis kafka pipeline cassandra cluster deploy web"
  phases=" ${QIM_TEST_PHASES:-$all} "
  [[ ${QIM_TEST_SKIP_CLUSTER:-0} != 1 ]] || phases=${phases/ cluster / }
  local p
  for p in $phases; do
    [[ " $all " == *" $p "* ]] || { echo "test: unknown phase group '$p' in QIM_TEST_PHASES ($all)"; exit 2; }
  done

  work=$(mktemp -d "${TMPDIR:-/tmp}/qim-test.XXXXXX")
  total_passed=0
  total_failed=0
  phase_lines=()
  declare -gA engine_up=()  # engine -> 1 once started and ready, 0 if its start failed
}

# ------------------------------------------------------------------------------------------- engines

# engine_start NAME COMMAND...: the start and readiness commands of an engine; prints its failure clearly
# and records it, so the phases that need it fail instead of running against nothing.
engine_start() {
  local name=$1
  shift
  echo
  echo "=== engine: starting $name"
  if "$@"; then
    engine_up[$name]=1
    echo "=== engine $name: ready"
  else
    engine_up[$name]=0
    echo "=== engine $name: FAILED to start or to become ready; the phases that need it fail"
  fi
}
# engine_stop NAME COMMAND...: a failed stop (ports still held) marks the engine down, so nothing that
# comes next (another Cassandra mode on the same ports) starts on a half-stopped one.
engine_stop() {
  local name=$1
  shift
  [[ -n ${engine_up[$name]:-} ]] || return 0
  if ! "$@"; then echo "=== engine $name: FAILED to stop cleanly"; engine_up[$name]=0; return 1; fi
  unset "engine_up[$name]"
}
# The redis.sh instance name of the Redis on PORT (the routing one: the third port).
redis_name() { echo "mailbox$1"; }
redis_start() {
  local port
  for port in "${redis_ports[@]}"; do bash $engines/redis.sh start "$(redis_name "$port")" "$port" || return 1; done
  for port in "${redis_ports[@]}"; do bash $engines/redis.sh wait "$(redis_name "$port")" "$port" || return 1; done
}
redis_stop() {
  local port rc=0
  for port in "${redis_ports[@]}"; do bash $engines/redis.sh stop "$(redis_name "$port")" "$port" || rc=1; done
  return $rc
}
# The e2e scenarios run QIM's clock days ahead (QIM_TEST_CLOCK_OFFSET_MS, scenario 13); the broker's
# default refuses record timestamps more than an hour in the future, so the test broker accepts them.
# Exported for the whole run: a fault test that stops the broker starts it again with the same settings.
# The broker starts from empty data each run: earlier runs' topics (a thousand partitions a run) would
# otherwise pile up and slow every start, the fault test's restart included.
kafka_start() {
  bash $engines/kafka.sh clean >/dev/null || return 1
  printf 'log.message.timestamp.after.max.ms=9223372036854775807\n' >"$work/kafka-test.properties"
  export QIM_KAFKA_EXTRA_CONFIG=$work/kafka-test.properties
  bash $engines/kafka.sh start && bash $engines/kafka.sh wait
}
# The single node starts from empty data each run: the keyspaces of earlier runs (one per e2e process) would
# otherwise pile up in its heap run after run.
cassandra_start() {
  if [[ $1 == single ]]; then bash $engines/cassandra.sh clean single >/dev/null || return 1; fi
  bash $engines/cassandra.sh start "$1" && bash $engines/cassandra.sh wait "$1"
}
# The object store (SeaweedFS, S3 API) for the attachments: from empty data each run, its bucket created by
# `wait`; its endpoint, bucket and keys exported for the tests (QIM_TEST_S3_*) for the rest of the run. The
# binary is built once and cached (scripts/engines/objstore.sh), so this costs a few seconds.
objstore_start() {
  bash $engines/objstore.sh clean >/dev/null || return 1
  bash $engines/objstore.sh start && bash $engines/objstore.sh wait || return 1
  # A second bucket for the e2e sweep test's own `qim up` (tests/e2e/attachment_sweep_test.cc): its short
  # orphan age must not reach the other tests' uploads.
  QIM_OBJSTORE_BUCKET=qim-attachments-sweep bash $engines/objstore.sh wait >/dev/null || return 1
  export QIM_TEST_S3_SWEEP_BUCKET=qim-attachments-sweep
  local vars
  vars=$(bash $engines/objstore.sh env) || return 1
  export QIM_TEST_S3_ENDPOINT QIM_TEST_S3_BUCKET QIM_TEST_S3_ACCESS_KEY QIM_TEST_S3_SECRET_KEY
  QIM_TEST_S3_ENDPOINT=$(sed -n 's/^export QIM_S3_ENDPOINT=//p' <<<"$vars")
  QIM_TEST_S3_BUCKET=$(sed -n 's/^export QIM_S3_BUCKET=//p' <<<"$vars")
  QIM_TEST_S3_ACCESS_KEY=$(sed -n 's/^export QIM_S3_ACCESS_KEY=//p' <<<"$vars")
  QIM_TEST_S3_SECRET_KEY=$(sed -n 's/^export QIM_S3_SECRET_KEY=//p' <<<"$vars")
}
cleanup_engines() {
  echo
  echo "test: stopping engines"
  bash $engines/objstore.sh stop >/dev/null 2>&1 || true
  bash $engines/cassandra.sh stop >/dev/null 2>&1 || true
  bash $engines/kafka.sh stop >/dev/null 2>&1 || true
  redis_stop >/dev/null 2>&1 || true
}

# ------------------------------------------------------------------------------------------- phases

wanted() { [[ $phases == *" $1 "* ]]; }

# record NAME PASSED FAILED SKIPPED WHY: the phase's closing line and its share of the totals. WHY empty:
# passed; otherwise it failed, and when no test of it failed its not-run tests (at least one) count as failed.
record() {
  local name=$1 passed=$2 failed=$3 skipped=$4 why=$5 line
  if [[ -z $why ]]; then
    line="$name: passed ($passed passed, $skipped skipped)"
  else
    if ((failed == 0)); then failed=$((skipped > 0 ? skipped : 1)); fi
    line="$name: FAILED ($passed passed, $failed failed, $skipped skipped: $why)"
  fi
  # The time since the previous phase ended (its engine's start included), so a slow run says where.
  line="$line in $((SECONDS - phase_mark)) s"
  phase_mark=$SECONDS
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  phase_lines+=("$line")
  echo "=== $line"
}

# needs ENGINE...: true if every engine is up; otherwise prints which is not.
missing_engine=""
needs() {
  local e
  missing_engine=""
  for e in "$@"; do
    if [[ ${engine_up[$e]:-0} != 1 ]]; then missing_engine=$e; return 1; fi
  done
}

# The ctest preset of the phases (release; the asan phase sets asan).
ctest_preset=release
ct() { ctest --preset "$ctest_preset" --output-on-failure --timeout 600 --no-tests=error "$@"; }

# Counts a ctest JUnit report: prints "PASSED FAILED SKIPPED", then one line per skipped test whose skip
# reason names a QIM_* variable this phase has set (a test that skipped for want of an engine the phase
# says is there). A "skipped" test whose output shows a gtest failure (gtest marks every test skipped
# when a global or suite set-up fails fatally) counts as failed. A ctest test that is a whole gtest binary
# (qim_test WHOLE) is counted by the tests in the XML report it left in GTEST_DIR (the second argument):
# each of its tests once, plus one failure if the binary failed with none of its tests failed (e.g. a
# failing global tear-down); without a report (it crashed) it counts as one failed test.
junit_counts() {
  python3 - "$1" "${2:-}" <<'PY'
import os, re, sys, xml.etree.ElementTree as ET
passed = failed = skipped = 0
claimed = []
gtest_dir = sys.argv[2]

def claim(name, reasons):
    names = sorted(v for v in set(re.findall(r"QIM_[A-Z0-9_]+", reasons)) if os.environ.get(v))
    if names:
        claimed.append("%s: skipped naming %s, which this phase sets" % (name, ", ".join(names)))

for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    status = case.get("status", "")
    out = "".join(e.text or "" for e in case.iter("system-out"))
    report = os.path.join(gtest_dir, case.get("name", "") + ".xml") if gtest_dir else ""
    if report and os.path.isfile(report):
        bad = 0
        for t in ET.parse(report).getroot().iter("testcase"):
            if t.find("failure") is not None:
                bad += 1
            elif t.get("result") == "skipped" or t.find("skipped") is not None:
                skipped += 1
                claim(t.get("classname", "") + "." + t.get("name", ""),
                      " ".join((e.get("message") or "") + (e.text or "") for e in t.iter("skipped")))
            elif t.get("status") == "run":
                passed += 1
        failed += bad
        if status != "run" and bad == 0:
            failed += 1
        continue
    if status == "run":
        passed += 1
    elif status not in ("notrun", "disabled"):
        failed += 1
    elif re.search(r"(: Failure$|^\[  FAILED  \])", out, re.M):
        failed += 1
    else:
        skipped += 1
        claim(case.get("name"), " ".join(re.findall(r": Skipped\n(.*?)(?=^\[  SKIPPED \])", out, re.M | re.S)))
print(passed, failed, skipped)
for c in claimed:
    print(c)
PY
}

# ctest_phase NAME ENGINES CTEST_ARGS...: a ctest run; ENGINES ("" or a space-separated list) must be up.
ctest_phase() {
  local name=$1 needed=$2
  shift 2
  echo
  echo "=== test phase: $name"
  # shellcheck disable=SC2086 # word splitting wanted: a list of engines
  if ! needs $needed; then
    local n
    n=$(ctest --preset "$ctest_preset" -N "$@" 2>/dev/null | sed -n 's/^Total Tests: //p')
    record "$name" 0 "${n:-1}" 0 "engine $missing_engine is not up; its tests did not run"
    return 0
  fi
  local junit="$work/phase$((${#phase_lines[@]} + 1)).xml" rc=0
  local gtest_dir="$work/phase$((${#phase_lines[@]} + 1))-gtest"
  # Every gtest binary writes its XML report there (one file per binary, the last process's): the counts
  # of a binary registered whole (qim_test WHOLE) are read from it.
  GTEST_OUTPUT="xml:$gtest_dir/" ct --output-junit "$junit" "$@" || rc=$?
  if [[ ! -s $junit ]]; then
    record "$name" 0 0 0 "ctest exited $rc without a report"
    return 0
  fi
  local counts passed failed skipped why=""
  mapfile -t counts < <(junit_counts "$junit" "$gtest_dir" || true)
  if ! [[ ${counts[0]:-} =~ ^[0-9]+\ [0-9]+\ [0-9]+$ ]]; then
    record "$name" 0 0 0 "could not read ctest's JUnit report $junit"
    return 0
  fi
  read -r passed failed skipped <<<"${counts[0]}"
  if ((${#counts[@]} > 1)); then
    why="a test skipped for want of its engine:"
    printf '    %s\n' "${counts[@]:1}"
    why+=" ${counts[1]}$( ((${#counts[@]} > 2)) && echo " and $((${#counts[@]} - 2)) more")"
  elif ((failed > 0)); then why="$failed failed"
  elif ((passed + skipped == 0)); then why="no tests ran"
  elif ((passed == 0)); then why="all $skipped tests were skipped"
  elif ((rc != 0)); then why="ctest exited $rc"
  fi
  record "$name" "$passed" "$failed" "$skipped" "$why"
}

# smoke_phase NAME ENGINES COMMAND...: a smoke script; its counts come from its last line
# "NAME smoke: N passed, M failed".
smoke_phase() {
  local name=$1 needed=$2
  shift 2
  echo
  echo "=== test phase: $name"
  # shellcheck disable=SC2086
  if ! needs $needed; then
    record "$name" 0 1 0 "engine $missing_engine is not up; the smoke did not run"
    return 0
  fi
  local log="$work/smoke$((${#phase_lines[@]} + 1)).log" rc=0 last passed failed why=""
  QIM_SMOKE_USE_RUNNING=1 "$@" 2>&1 | tee "$log" || rc=$?
  last=$(grep -E '^[a-z]+ smoke: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)
  if [[ $last =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    passed=${BASH_REMATCH[1]} failed=${BASH_REMATCH[2]}
  else
    passed=0 failed=0 why="no smoke summary line"
  fi
  if [[ -z $why ]]; then
    if ((failed > 0)); then why="$failed failed"
    elif ((passed == 0)); then why="no checks ran"
    elif ((rc != 0)); then why="exited $rc"
    fi
  fi
  record "$name" "$passed" "$failed" 0 "$why"
}

# The SDK and the web page (clients/js): `npm ci` from the committed lock file (its cache under the build dir)
# and the build, once; false if either fails.
web_prepared=""
web_prepare() {
  if [[ -z $web_prepared ]]; then
    web_prepared=0
    echo "test: npm ci and build in clients/js"
    (cd clients/js && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --prefer-offline \
      --cache "$PWD/../../build/npm-cache" && npm run build) && web_prepared=1
  fi
  [[ $web_prepared == 1 ]]
}
# node_phase NAME FILES...: `node --test` in clients/js against a real `qim up` (the tests start their own,
# port 0, data under /tmp/web-*); counts from its TAP summary (cancelled counts as failed, todo as
# skipped). QIM_BINARY: the build's qim.
node_phase() {
  local name=$1
  shift
  echo
  echo "=== test phase: $name"
  if ! web_prepare; then
    record "$name" 0 1 0 "npm ci or the SDK's build failed; its tests did not run"
    return 0
  fi
  local tap="$work/phase$((${#phase_lines[@]} + 1)).tap" rc=0
  # The patterns are expanded in clients/js (Node 20's --test does not expand globs itself). The counts come
  # from the TAP reporter's summary, which Debian 12's Node 18 has too (its --test has no junit reporter).
  # shellcheck disable=SC2048,SC2086
  # Bounded (QIM_TEST_NODE_TIMEOUT seconds, 15 min by default): a test file whose process never exits (a
  # handle left open) would otherwise hold the whole run. timeout signals its process group: node, its test
  # files' processes and the `qim up` they started.
  (cd clients/js && files=($*) && QIM_BINARY=$PWD/../../build/release/src/app/qim \
    timeout --kill-after=30 "${QIM_TEST_NODE_TIMEOUT:-900}" node --test \
    --test-reporter=spec --test-reporter-destination=stdout --test-reporter=tap \
    --test-reporter-destination="$tap" "${files[@]}") || rc=$?
  local counts passed failed skipped why=""
  # "# pass N", "# fail N", "# cancelled N", "# skipped N", "# todo N": the run's totals, last in the report.
  counts=$(python3 - "$tap" <<'PY' || true
import re, sys
totals = {}
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    m = re.match(r"^# (pass|fail|cancelled|skipped|todo) (\d+)$", line.strip())
    if m: totals[m.group(1)] = int(m.group(2))
if "pass" in totals and "fail" in totals:
    print(totals["pass"], totals["fail"] + totals.get("cancelled", 0), totals.get("skipped", 0) + totals.get("todo", 0))
PY
)
  if ((rc == 124 || rc == 137)); then
    record "$name" 0 0 0 "node --test did not finish within ${QIM_TEST_NODE_TIMEOUT:-900} s (killed)"
    return 0
  fi
  if ! [[ $counts =~ ^[0-9]+\ [0-9]+\ [0-9]+$ ]]; then
    record "$name" 0 0 0 "no readable TAP summary from node --test (exit $rc)"
    return 0
  fi
  read -r passed failed skipped <<<"$counts"
  if ((failed > 0)); then why="$failed failed"
  elif ((passed == 0)); then why="no tests ran"
  elif ((rc != 0)); then why="node --test exited $rc"
  fi
  record "$name" "$passed" "$failed" "$skipped" "$why"
}

# The e2e suite on a given mailbox store (the other QIM_* variables of the phase reach `qim up` unchanged).
e2e_phase() {
  local name=$1 needed=$2 backend=$3
  QIM_E2E_BACKEND=$backend ctest_phase "$name" "$needed" -L e2e
}
# The e2e suite on the distributed deployment (tests/e2e/deployment.h): every role its own process on the
# Kafka broker, the given store, routing through the third Redis instance (the fault tests restart it by
# its redis.sh name, QIM_TEST_ROUTING_REDIS_NAME, and the broker through kafka.sh: with the run's topics,
# over a thousand partitions by then, the broker takes a minute or more to serve again, hence the longer wait).
#   e2e_distributed_phase NAME ENGINES BACKEND [LABEL]   (LABEL: e2e, or faults / faults-cluster for the
#   fault tests; matched whole: ctest's -L is a regular expression, and faults would match faults-cluster)
e2e_distributed_phase() {
  local name=$1 needed=$2 backend=$3 label=${4:-e2e} s3=0
  # With the object store up (phase group objstore), the e2e label's attachment scenarios (A*) run on the
  # distributed deployment too: every role inherits QIM_S3_* (the gateways serve ATTACH, the archiver deletes
  # a recalled message's objects); without it they skip, saying why. Exported for this phase only.
  if [[ $label == e2e && -n ${QIM_TEST_S3_ENDPOINT:-} ]]; then
    s3=1
    export QIM_S3_ENDPOINT=$QIM_TEST_S3_ENDPOINT QIM_S3_BUCKET=$QIM_TEST_S3_BUCKET \
      QIM_S3_ACCESS_KEY=$QIM_TEST_S3_ACCESS_KEY QIM_S3_SECRET_KEY=$QIM_TEST_S3_SECRET_KEY
  fi
  QIM_KAFKA_WAIT_TIMEOUT=${QIM_KAFKA_WAIT_TIMEOUT:-200} QIM_E2E_DEPLOYMENT=distributed QIM_E2E_BACKEND=$backend \
    QIM_KAFKA_BROKERS=127.0.0.1:${QIM_KAFKA_PORT:-19092} QIM_ROUTING_REDIS=127.0.0.1:${redis_ports[2]} \
    QIM_TEST_ROUTING_REDIS_NAME="$(redis_name "${redis_ports[2]}")" ctest_phase "$name" "$needed" -L "^$label\$"
  if ((s3)); then unset QIM_S3_ENDPOINT QIM_S3_BUCKET QIM_S3_ACCESS_KEY QIM_S3_SECRET_KEY; fi
}

# The unit tests (the gateway's among them) built with AddressSanitizer and UndefinedBehaviorSanitizer (the
# asan preset, build/asan): a use after free, an overflow or undefined behaviour fails the test that hit it.
# Only the test binaries labelled unit are built, without the CQL client (Rust; no unit test needs it);
# -O1 keeps them fast enough to run. ccache is used when installed. Leak checks are off: the point is memory
# errors, and libraries' process-lifetime allocations would be reported as leaks.
asan_phase() {
  local dir=build/asan launcher=() targets started=$SECONDS
  echo
  echo "=== test phase: unit (asan): building"
  if command -v ccache >/dev/null; then
    # Paths relative to the clone, as in build.sh: another clone of the same sources hits the cache.
    export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  if ! cmake --preset asan -DQIM_WITH_CQL=OFF -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" "${launcher[@]}" >/dev/null; then
    record "unit (asan)" 0 1 0 "the sanitizer build did not configure"
    return 0
  fi
  # The unit tests' binaries: every qim_test(NAME ... LABELS ... unit ...) of the CMake files that this
  # configuration defines (ninja knows it). Read from the sources: ctest knows a test's labels only once its
  # binary is built.
  targets=$(ninja -C "$dir" -t targets all | python3 -c '
import pathlib, re, sys
defined = {line.split(":")[0] for line in sys.stdin}
names = set()
for f in pathlib.Path(".").glob("**/CMakeLists.txt"):
    if f.parts[0] == "build": continue
    for m in re.finditer(r"qim_test\(\s*(\w+)([^)]*)\)", f.read_text()):
        labels = re.search(r"LABELS\s+([\w\s-]+)", m.group(2))
        if labels and "unit" in labels.group(1).split() and m.group(1) in defined: names.add(m.group(1))
print(" ".join(sorted(names)))') || targets=""
  # shellcheck disable=SC2086 # word splitting wanted: a list of targets
  if [[ -z $targets ]] || ! cmake --build --preset asan --target $targets; then
    record "unit (asan)" 0 1 0 "the sanitizer build failed"
    return 0
  fi
  echo "test: the sanitizer build took $((SECONDS - started)) s"
  ctest_preset=asan ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} ctest_phase "unit (asan)" "" -L unit
  echo "test: the asan phase took $((SECONDS - started)) s"
}

# ------------------------------------------------------------------------------------------- the end

# Runs on every exit: engines stopped first, then the summary; the last line is the total.
finished=0
on_exit() {
  local code=$?
  trap - EXIT
  cleanup_engines
  if ((!finished)); then
    total_failed=$((total_failed + 1))
    phase_lines+=("the test command stopped early (exit code $code)")
  elif ((total_passed + total_failed == 0)); then
    total_failed=1
    phase_lines+=("no test ran at all")
  fi
  rm -rf "$work"
  echo
  echo "phases:"
  printf '  %s\n' "${phase_lines[@]}"
  echo "test: the whole run took $((SECONDS / 60)) min $((SECONDS % 60)) s"
  echo "tests: $total_passed passed, $total_failed failed"
  ((total_failed == 0)) || exit 1
  exit 0
}

# ------------------------------------------------------------------------------------------- the run

run_phases() {
  # 1. Unit tests and the contract suite on memory and embedded: no engine needed.
  if wanted unit; then ctest_phase "unit" "" -L unit; fi
  if wanted asan; then asan_phase; fi

  # The delivery rules, model-checked with Spin (model/README.md): no engine, no build; about 30 s of CPU.
  if wanted model; then smoke_phase "model" "" bash model/check.sh; fi

  # The attachments' object store (SeaweedFS through its S3 API): started once, kept up for the rest of the
  # run (QIM_TEST_S3_* stay exported); the S3 backend's contract tests (src/attachments/s3, label s3: presigned
  # PUT/GET checked with libcurl, refusals, a 100 MiB upload; about 10 s).
  if wanted objstore; then
    engine_start objstore objstore_start
    ctest_phase "object store (S3 on SeaweedFS)" objstore -L '^s3$'
  fi

  # Kafka (KRaft, one broker) is started once and stays up through the Redis, Cassandra and cluster blocks,
  # whose distributed e2e and fault phases run on it.
  if wanted kafka || wanted redis || wanted cassandra || wanted cluster || wanted deploy; then
    engine_start kafka kafka_start
  fi
  if wanted kafka; then
    smoke_phase "kafka smoke" kafka bash tests/engines/kafka_smoke.sh
    QIM_TEST_KAFKA_BROKERS=127.0.0.1:${QIM_KAFKA_PORT:-19092} ctest_phase "kafka log" kafka -L kafka
  fi

  # 2. Redis: two mailbox instances (a shard maps to one of them) and one for routing; they stay up for the
  #    distributed phase of the Cassandra block (routing).
  if wanted redis; then
    engine_start redis redis_start
    export QIM_TEST_REDIS=127.0.0.1:${redis_ports[0]},127.0.0.1:${redis_ports[1]}
    export QIM_TEST_ROUTING_REDIS=127.0.0.1:${redis_ports[2]}  # the routing tests (label redis)
    smoke_phase "redis smoke" "" env QIM_SMOKE_REDIS_PORT="$smoke_redis_port" bash tests/engines/redis_smoke.sh
    ctest_phase "redis store" redis -L redis
    ctest_phase "contract suite on redis" redis -R '/redis( |$)'
    export QIM_MAILBOX_REDIS=$QIM_TEST_REDIS
    e2e_phase "e2e (embedded log, redis store)" redis redis
    e2e_distributed_phase "e2e (distributed: Kafka, redis store)" "redis kafka" redis
    e2e_distributed_phase "faults (distributed: Kafka, redis store)" "redis kafka" redis faults
    # Pauses past leases and timeouts, a node's clock skewed, partitions (nftables: needs root and
    # nftables), seed 1 of the random schedule for 30 s (tests/e2e/nemesis_*_test.cc; docs/reliability.md).
    e2e_distributed_phase "nemesis (distributed: Kafka, redis store)" "redis kafka" redis nemesis
    # The event webhook as its own role (`qim webhooks`, beside `qim gateway` and `qim fanout`), its hook
    # verified with the npm standardwebhooks library (clients/js/test/webhooks.test.mjs; ~15 s).
    if needs redis kafka; then
      QIM_WEBHOOK_TEST_KAFKA=127.0.0.1:${QIM_KAFKA_PORT:-19092} QIM_ROUTING_REDIS=127.0.0.1:${redis_ports[2]} \
        node_phase "webhooks (distributed: Kafka, redis store)" 'test/webhooks.test.mjs'
    else
      record "webhooks (distributed: Kafka, redis store)" 0 1 0 "engine $missing_engine is not up; its tests did not run"
    fi
    # Offline push as its own role (`qim push`, beside `qim gateway` and `qim fanout`), against local Web
    # Push, APNs and FCM servers (clients/js/test/push.test.mjs, docs/push.md; ~10 s).
    if needs redis kafka; then
      QIM_PUSH_TEST_KAFKA=127.0.0.1:${QIM_KAFKA_PORT:-19092} QIM_ROUTING_REDIS=127.0.0.1:${redis_ports[2]} \
        node_phase "push (distributed: Kafka, redis store)" 'test/push.test.mjs'
    else
      record "push (distributed: Kafka, redis store)" 0 1 0 "engine $missing_engine is not up; its tests did not run"
    fi
    unset QIM_TEST_REDIS QIM_TEST_ROUTING_REDIS QIM_MAILBOX_REDIS
  fi

  # 3. The pipeline in process and the end-to-end suite against `qim up` (embedded default).
  if wanted pipeline; then
    ctest_phase "pipeline" "" -L pipeline
    # With the object store up (phase group objstore), `qim up` gets it too: the attachment scenarios (A*)
    # need it and skip, saying why, without it; so does the orphan sweep's (qim_e2e_sweep_test, its own
    # `qim up` on the bucket QIM_TEST_S3_SWEEP_BUCKET with a 2 s orphan age).
    if [[ -n ${QIM_TEST_S3_ENDPOINT:-} ]]; then
      QIM_S3_ENDPOINT=$QIM_TEST_S3_ENDPOINT QIM_S3_BUCKET=$QIM_TEST_S3_BUCKET QIM_S3_ACCESS_KEY=$QIM_TEST_S3_ACCESS_KEY \
        QIM_S3_SECRET_KEY=$QIM_TEST_S3_SECRET_KEY e2e_phase "e2e (embedded)" "" embedded
    else
      e2e_phase "e2e (embedded)" "" embedded
    fi
    # The embedded deployment's disk filled up and its fsync slowed (tests/e2e/nemesis_disk_test.cc: mounts a
    # tmpfs, needs root).
    QIM_E2E_BACKEND=embedded ctest_phase "nemesis (qim up, embedded)" "" -L '^nemesis$'
  fi

  # 4. Cassandra: the contract suite on one node, then the CQL gate on three nodes, RF 3. The stop of one
  #    mode returns once its ports are free (cassandra.sh), so the other can start on them.
  if wanted cassandra; then
    # The single node holds every keyspace of the run (the contract suite's, one per e2e process on the
    # embedded log and on the distributed deployment, each with history and lease tables): 768m ran out of
    # heap in the distributed phase, so this run gives it 1.5 GiB (the three-node ring keeps its 512m each).
    QIM_CASSANDRA_HEAP=${QIM_CASSANDRA_HEAP:-1536m} engine_start cassandra-single cassandra_start single
    [[ -n ${engine_up[redis]:-} ]] || engine_start redis redis_start  # routing, for the distributed phase
    export QIM_TEST_CQL_HOSTS=${prefix}1 QIM_CQL_HOSTS=${prefix}1
    smoke_phase "cassandra smoke" cassandra-single bash tests/engines/cassandra_smoke.sh single
    ctest_phase "CQL client (one node)" cassandra-single -L '^scylla$'
    ctest_phase "contract suite on scylla (one node)" cassandra-single -R '/scylla( |$)'
    # The inbox's backend contract and property suites on the CQL inbox beside the scylla mailbox (qim_inbox_test,
    # cases named .../cql; about 5 min: two keyspaces a case). qim_inbox_cql_test runs with the label above.
    ctest_phase "inbox suites on cql (one node)" cassandra-single -R '/cql( |$)'
    ctest_phase "scylla CQL gate (one node, RF 1)" cassandra-single -L scylla-cluster
    e2e_phase "e2e (embedded log, scylla store on Cassandra)" cassandra-single scylla
    e2e_distributed_phase "e2e (distributed: Kafka, scylla store on Cassandra)" "cassandra-single kafka redis" scylla
    # Two `qim mailbox` owning one shard at two epochs, fed through Kafka, then audited (about 30 s).
    QIM_TEST_KAFKA_BROKERS=127.0.0.1:${QIM_KAFKA_PORT:-19092} \
      ctest_phase "split brain (two owners on Cassandra, Kafka)" "cassandra-single kafka" -L split-brain
    unset QIM_TEST_CQL_HOSTS QIM_CQL_HOSTS
    engine_stop cassandra-single bash $engines/cassandra.sh stop single || true
  fi
  # 5. The three-node ring (RF 3): the CQL gate, and the fault of one node of three stopped on the
  #    distributed deployment, on the Kafka broker and the routing Redis kept up from the blocks above
  #    (~1 GiB beside the ring's 3 x 512m; starting them again would cost ~20 s).
  if wanted cluster; then
    if [[ ${engine_up[cassandra-single]:-} == 0 ]]; then
      engine_up[cassandra-cluster]=0
      echo "=== engine cassandra cluster: not started (the single node did not stop; they share ${prefix}1)"
    else
      engine_start cassandra-cluster cassandra_start cluster
    fi
    [[ -n ${engine_up[redis]:-} ]] || engine_start redis redis_start  # routing, for the fault phase
    export QIM_TEST_CQL_HOSTS=${prefix}1,${prefix}2,${prefix}3 QIM_TEST_CQL_CLUSTER=1
    smoke_phase "cassandra smoke (cluster)" cassandra-cluster bash tests/engines/cassandra_smoke.sh cluster
    # Stops node 3 and starts it again (tests/e2e/faults_cluster_test.cc): before the gate, which then
    # also checks the ring is whole again.
    QIM_CQL_HOSTS=$QIM_TEST_CQL_HOSTS QIM_CQL_RF=3 e2e_distributed_phase \
      "faults (distributed: Kafka, scylla store on three Cassandra nodes, RF 3)" "cassandra-cluster kafka redis" \
      scylla faults-cluster
    ctest_phase "scylla CQL gate (three nodes, RF 3)" cassandra-cluster -L scylla-cluster
    unset QIM_TEST_CQL_HOSTS QIM_TEST_CQL_CLUSTER
  fi
  # 6. The deployment (deploy/, docs/deploy.md): the image built from this build, helm lint and template,
  #    promtool, `qim up` through compose, and the chart's manifests through `podman kube play` on this run's
  #    Kafka and Redis (the pods use the host's network). Fails, never skips, when podman cannot run.
  if wanted deploy; then
    [[ -n ${engine_up[redis]:-} ]] || engine_start redis redis_start
    QIM_KAFKA_BROKERS=127.0.0.1:${QIM_KAFKA_PORT:-19092} QIM_ROUTING_REDIS=127.0.0.1:${redis_ports[2]} \
      QIM_MAILBOX_REDIS=127.0.0.1:${redis_ports[0]},127.0.0.1:${redis_ports[1]} \
      smoke_phase "deploy (image, helm, compose, kube play)" "kafka redis" bash scripts/container/deploy-test.sh
  fi
  engine_stop kafka bash $engines/kafka.sh stop || true
  engine_stop redis redis_stop || true

  # 7. TLS and the web page: wss:// through the C++ client and qimctl (label web), the TypeScript SDK
  #    against `qim up`, the chat page in headless Chromium (screenshots on failure: build/browser-artifacts).
  if wanted web; then
    ctest_phase "tls and web (C++)" "" -L '^web$'
    node_phase "sdk (node --test)" 'test/*.test.mjs'
    node_phase "browser (Chromium)" 'browser-test/*.test.mjs'
  fi
}

main() {
  setup
  trap on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  run_phases
  finished=1
}

main "$@"; exit
