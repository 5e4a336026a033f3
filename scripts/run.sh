#!/usr/bin/env bash
# The main job: installs, builds and runs QIM on the embedded default (`qim up`), data under ./qim-data, with
# the web chat page on the client port (clients/web, with development tokens for loopback browsers: the
# banner prints its address; docs/running.md "The web chat page").
#
# It installs and builds only what `qim up` and qimctl need: no Rust (the CQL driver), no Kafka, no tests
# or benchmarks (CMake options QIM_WITH_CQL, QIM_WITH_KAFKA, QIM_BUILD_TESTS, QIM_BUILD_BENCH off when it
# configures build/release first; a build dir the test command configured keeps every part). The scylla
# store and the Kafka log then say at start-up that they were not built in; scripts/build.sh builds all.
#   QIM_SKIP_BUILD=1 bash scripts/run.sh     run ./build/release as it is
#   QIM_ATTACHMENTS=1 bash scripts/run.sh    with attachments (issue 41): also installs Rust and Go, builds the
#                                            S3 backend (QIM_WITH_S3), starts the object store engine
#                                            (scripts/engines/objstore.sh: SeaweedFS, S3 on 127.0.0.1:18333,
#                                            data under /tmp/qim-engines/objstore) and hands its QIM_S3_*
#                                            to qim; it keeps running after qim stops
#                                            (scripts/engines/objstore.sh stop). docs/operations.md, "Attachments".
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
if [[ ${QIM_SKIP_BUILD:-0} != 1 ]]; then
  s3=()
  if [[ ${QIM_ATTACHMENTS:-0} == 1 ]]; then
    bash scripts/install-deps.sh --attachments
    s3=(-DQIM_WITH_S3=ON)
  else
    bash scripts/install-deps.sh --run
  fi
  if [[ -f build/release/CMakeCache.txt ]]; then
    echo "run: configuring build/release (its options as they are)"
    cmake --preset release "${s3[@]}" >/dev/null
  else
    echo "run: configuring build/release for qim and qimctl only (no CQL driver, no Kafka, no tests)"
    cmake --preset release -DQIM_WITH_CQL=OFF -DQIM_WITH_KAFKA=OFF -DQIM_BUILD_TESTS=OFF \
      -DQIM_BUILD_BENCH=OFF -DQIM_WITH_S3=OFF "${s3[@]}" >/dev/null
  fi
  echo "run: compiling qim and qimctl with 2 jobs (162 steps: about 20-30 min from a clean clone on 2 cores)"
  cmake --build --preset release --target qim qimctl
fi
echo "run: building the TypeScript SDK for the web page (clients/js)"
(cd clients/js && { [[ -d node_modules ]] || PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund; } && npm run build >/dev/null)
if [[ ${QIM_ATTACHMENTS:-0} == 1 ]]; then
  echo "run: starting the object store engine (SeaweedFS) for attachments"
  bash scripts/engines/objstore.sh start
  bash scripts/engines/objstore.sh wait
  eval "$(bash scripts/engines/objstore.sh env)"  # export QIM_S3_ENDPOINT, _BUCKET, _REGION, _ACCESS_KEY, ...
fi
echo "run: ready after $((SECONDS - started)) s; starting qim up"
export QIM_WEB_DIR=${QIM_WEB_DIR:-$PWD/clients/web}
export QIM_WEB_DEV_TOKENS=${QIM_WEB_DEV_TOKENS:-1}
exec ./build/release/src/app/qim up "$@"
