#!/usr/bin/env bash
# Installs every Debian package QIM builds, tests and runs with. Idempotent: a second run installs nothing.
# The real engines (Kafka and Cassandra jars) are fetched by scripts/engines/*.sh when first started.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git curl ca-certificates python3
  clang-14 clang-format libfuzzer-14-dev libclang-rt-14-dev
  libboost1.81-all-dev librocksdb-dev libsimdjson-dev libspdlog-dev libfmt-dev libcli11-dev
  libxxhash-dev libgtest-dev libgmock-dev libbenchmark-dev libhiredis-dev librdkafka-dev
  prometheus-cpp-dev libssl-dev zlib1g-dev
  redis-server redis-tools openjdk-17-jre-headless maven gnuplot-nox
  spin
  nodejs chromium
  faketime  # libfaketime: the nemesis test's skewed clock (tests/e2e/nemesis_test.cc)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The TypeScript SDK and the browser test need npm. A nodejs package that bundles npm (e.g. one from the
# Node.js project) conflicts with Debian's npm package, so npm is asked for only when no npm is on PATH.
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi
# Debian's redis-server package starts a system instance on 6379; QIM runs its own on other ports.
command -v cargo >/dev/null || { echo "install-deps: cargo (Rust) is required for the CQL driver" >&2; exit 1; }
