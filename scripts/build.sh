#!/usr/bin/env bash
# Builds all of QIM (release preset: RelWithDebInfo, Ninja, 2 jobs) after installing what it needs: every
# part on (the CQL driver in Rust, the Kafka log, the tests and benchmarks), as the test command wants.
# scripts/run.sh configures the same build dir with those parts off when it is the first to configure it;
# this script turns them on again, and ninja rebuilds only what they change.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
echo "build: configuring build/release with every part (CQL, Kafka, tests, benchmarks)"
cmake --preset release -DQIM_WITH_CQL=ON -DQIM_WITH_KAFKA=ON -DQIM_BUILD_TESTS=ON -DQIM_BUILD_BENCH=ON >/dev/null
echo "build: compiling with 2 jobs"
cmake --build --preset release
