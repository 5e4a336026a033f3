#!/usr/bin/env bash
# Builds QIM (release preset: RelWithDebInfo, Ninja, 2 jobs) after installing what it needs.
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
echo "build: configuring (build/release)"
cmake --preset release "${launcher[@]}" >/dev/null
echo "build: compiling with 2 jobs"
cmake --build --preset release
