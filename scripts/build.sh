#!/usr/bin/env bash
# Builds QIM (release preset: RelWithDebInfo, Ninja, 2 jobs) after installing what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
echo "build: configuring (build/release)"
cmake --preset release >/dev/null
echo "build: compiling with 2 jobs"
cmake --build --preset release
