#!/usr/bin/env bash
# The main job: installs, builds and runs QIM on the embedded default (`qim up`), data under ./qim-data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec ./build/release/src/app/qim up "$@"
