#!/usr/bin/env bash
# Builds all of QIM (release preset: RelWithDebInfo, Ninja, 2 jobs) after installing what it needs: every
# part on (the CQL driver in Rust, the Kafka log, the tests and benchmarks), as the test command wants.
# scripts/run.sh configures the same build dir with those parts off when it is the first to configure it;
# this script turns them on again, and ninja rebuilds only what they change.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# ccache, where installed (install-deps.sh installs it), keeps compiled objects across clones: CI builds a
# fresh clone every run. Paths are hashed relative to the clone, so another clone of the same sources hits.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
echo "build: configuring build/release with every part (CQL, Kafka, tests, benchmarks)"
cmake --preset release -DQIM_WITH_CQL=ON -DQIM_WITH_KAFKA=ON -DQIM_WITH_S3=ON -DQIM_BUILD_TESTS=ON -DQIM_BUILD_BENCH=ON "${launcher[@]}" >/dev/null
echo "build: compiling with 2 jobs"
cmake --build --preset release
