#!/usr/bin/env bash
# The test command (README, CI): installs, builds, starts each engine once, runs every test, stops them.
#   bash scripts/test.sh            everything: unit, contract suites, engines, pipeline, e2e, CQL gate
#   QIM_TEST_SKIP_CLUSTER=1 ...      skip the three-node Cassandra gate (faster local runs)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh

export QIM_RUN_DIR=${QIM_RUN_DIR:-/tmp/qim-test-engines}
engines=scripts/engines
cleanup() {
  echo "test: stopping engines"
  bash $engines/cassandra.sh stop >/dev/null 2>&1 || true
  bash $engines/kafka.sh stop >/dev/null 2>&1 || true
  for port in 16379 16380 16381; do bash $engines/redis.sh stop "mailbox$port" "$port" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

failed=0
passed=0
run() {  # run LABEL COMMAND...: a phase that must pass; the run goes on so every phase reports
  local label=$1; shift
  echo; echo "=== test phase: $label"
  if "$@"; then
    echo "=== $label: passed"; passed=$((passed + 1))
  else
    echo "=== $label: FAILED"; failed=$((failed + 1))
  fi
}
ct() { ctest --preset release --output-on-failure --timeout 600 "$@"; }
# The e2e suite on a given mailbox store (the other QIM_* variables of the phase reach `qim up` unchanged).
e2e_on() { (export QIM_E2E_BACKEND=$1; ct -L e2e); }

# 1. Unit tests and the contract suite on memory and embedded: no engine needed.
run "unit" ct -L unit

# 2. Redis: two mailbox instances (a shard maps to one of them) and one for routing.
for port in 16379 16380 16381; do bash $engines/redis.sh start "mailbox$port" "$port"; done
for port in 16379 16380 16381; do bash $engines/redis.sh wait "mailbox$port" "$port"; done
export QIM_TEST_REDIS=127.0.0.1:16379,127.0.0.1:16380
run "redis smoke" env QIM_SMOKE_REDIS_PORT=16382 bash tests/engines/redis_smoke.sh
run "redis store" ct -L redis
run "contract suite on redis" ct -R '/redis( |$)'
export QIM_MAILBOX_REDIS=$QIM_TEST_REDIS
run "e2e (embedded log, redis store)" e2e_on redis

# 3. Kafka (KRaft, one broker).
bash $engines/kafka.sh start && bash $engines/kafka.sh wait
run "kafka smoke" bash tests/engines/kafka_smoke.sh
bash $engines/kafka.sh stop

# 4. The pipeline in process and the end-to-end suite against `qim up` (embedded default).
run "pipeline" ct -L pipeline
run "e2e (embedded)" e2e_on embedded

# 5. Cassandra: the contract suite on one node, then the CQL gate on three nodes, RF 3.
bash $engines/cassandra.sh start single && bash $engines/cassandra.sh wait single
export QIM_TEST_CQL_HOSTS=127.0.0.1 QIM_CQL_HOSTS=127.0.0.1
run "cassandra smoke" bash tests/engines/cassandra_smoke.sh single
run "CQL client (one node)" ct -L scylla
run "contract suite on scylla (one node)" ct -R '/scylla( |$)'
run "scylla CQL gate (one node, RF 1)" ct -L scylla-cluster
run "e2e (embedded log, scylla store on Cassandra)" e2e_on scylla
bash $engines/cassandra.sh stop
if [ "${QIM_TEST_SKIP_CLUSTER:-0}" != 1 ]; then
  bash $engines/cassandra.sh start cluster && bash $engines/cassandra.sh wait cluster
  export QIM_TEST_CQL_HOSTS=127.0.0.1,127.0.0.2,127.0.0.3 QIM_TEST_CQL_CLUSTER=1
  run "cassandra smoke (cluster)" bash tests/engines/cassandra_smoke.sh cluster
  run "scylla CQL gate (three nodes, RF 3)" ct -L scylla-cluster
fi

echo
echo "phases: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
