#!/usr/bin/env bash
# Installs what QIM builds, tests and runs with. Idempotent: a second run installs nothing.
#   bash scripts/install-deps.sh          everything the test command needs: Debian packages, Rust >= 1.89
#                                         for the CQL driver (src/mailbox/scylla/cql) and the S3 signing crate
#                                         (src/attachments/s3/sign), from rustup when the machine's cargo is
#                                         missing or older; Go >= 1.26.6 to build the object store engine
#                                         (SeaweedFS, scripts/engines/objstore.sh), a pinned toolchain from the
#                                         Go module proxy when the machine's go is missing or older; and that
#                                         engine's binary, built once into ~/.cache/qim/seaweedfs
#   bash scripts/install-deps.sh --run    only what `qim up` and qimctl need (scripts/run.sh): no Rust, no
#                                         Kafka, Java, Chromium or test libraries
#   bash scripts/install-deps.sh --attachments   --run, plus what attachments need (QIM_ATTACHMENTS=1
#                                         scripts/run.sh): Rust for the S3 signing crate, Go and the SeaweedFS
#                                         binary of the object store engine
# apt's own output goes to a log file (QIM_INSTALL_LOG, default build/install-deps.log); the terminal gets a
# line per step. The real engines (Kafka and Cassandra jars) are fetched by scripts/engines/*.sh when first
# started.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=all
case "${1:-}" in
  --run) profile=run ;;
  --attachments) profile=attachments ;;
  "" | --all) ;;
  *) echo "usage: bash scripts/install-deps.sh [--run|--attachments|--all]" >&2; exit 2 ;;
esac

# What `qim up` and qimctl build with (CMake options QIM_WITH_CQL, QIM_WITH_KAFKA, QIM_BUILD_TESTS and
# QIM_BUILD_BENCH off), and the TypeScript SDK behind the web page.
run_packages=(
  build-essential cmake ninja-build ccache pkg-config git curl ca-certificates python3
  libboost1.81-all-dev librocksdb-dev libsimdjson-dev libspdlog-dev libfmt-dev libcli11-dev
  libxxhash-dev libhiredis-dev prometheus-cpp-dev libssl-dev zlib1g-dev
  libcurl4-openssl-dev  # the push role's HTTP/2 client (docs/push.md)
  libvips-dev  # image attachments' thumbnails (src/attachments/thumbnailer.cc; used at run time)
  nodejs
)
# The rest of the test command: Kafka, the tests and benchmarks, the fuzzer, the engines, the browser.
all_packages=(
  "${run_packages[@]}"
  clang-14 clang-format libfuzzer-14-dev libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev librdkafka-dev
  redis-server redis-tools openjdk-17-jre-headless maven gnuplot-nox
  spin      # the model check (model/check.sh)
  faketime  # libfaketime: the nemesis test's skewed clock (tests/e2e/nemesis_test.cc)
  nftables  # nft: the nemesis partitions (tests/e2e/nemesis_partition_test.cc)
  chromium
  python3-pip python3-yaml  # the server API test's validators (tests/api/requirements.txt)
  libcurl4-openssl-dev  # the S3 contract test's client of presigned URLs (src/attachments/s3)
)
if [[ $profile == all ]]; then packages=("${all_packages[@]}"); else packages=("${run_packages[@]}"); fi

log=${QIM_INSTALL_LOG:-$PWD/build/install-deps.log}
mkdir -p "$(dirname "$log")"
: >>"$log"
# step DESCRIPTION COMMAND...: one line on the terminal, the command's output in the log; on failure the
# log's last lines and its path.
step() {
  local what=$1 start=$SECONDS
  shift
  echo "install-deps: $what (output in $log)"
  echo "==== $(date -u '+%F %T') $what: $*" >>"$log"
  if ! "$@" >>"$log" 2>&1; then
    echo "install-deps: FAILED: $what; the last lines of $log:" >&2
    tail -n 20 "$log" >&2
    [[ -z ${step_hint:-} ]] || echo "install-deps: $step_hint" >&2
    exit 1
  fi
  echo "install-deps:   done in $((SECONDS - start)) s"
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The TypeScript SDK and the browser test need npm. A nodejs package that bundles npm (e.g. one from the
# Node.js project) conflicts with Debian's npm package, so npm is asked for only when no npm is on PATH.
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "install-deps: ${#missing[@]} Debian packages to install: ${missing[*]}"
  step "apt-get update" $SUDO apt-get update -q
  step "apt-get install (${#missing[@]} packages; a few minutes on a fresh machine)" \
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi
# Debian's redis-server package starts a system instance on 6379; QIM runs its own on other ports.

[[ $profile == run ]] && exit 0

# ---- the server API test's OpenAPI validators (PyPI: Debian 12 has no openapi-spec-validator) ----
api_requirements="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/api/requirements.txt"
if [[ $profile == attachments ]]; then
  :
elif python3 -c 'import openapi_spec_validator, openapi_schema_validator, yaml, standardwebhooks' 2>/dev/null; then
  # Every module of the requirements file: a machine with the validators but not a later addition
  # (standardwebhooks) still gets it.
  echo "install-deps: the API tests' Python modules present (OpenAPI validators, standardwebhooks)"
else
  # Debian's python3 is externally managed (PEP 668): installed for this user, beside Debian's packages.
  step "pip: the API tests' Python modules ($api_requirements)" \
    python3 -m pip install --user --break-system-packages -q -r "$api_requirements"
fi

# ---- Rust for the CQL driver and the S3 signing crate (scylla needs rustc >= 1.88, rusty-s3 1.89; Debian 12
# ships 1.63) ----
# The cargo CMake uses is the first of $CARGO_HOME/bin, ~/.cargo/bin and PATH (src/mailbox/scylla/cql).
rust_min=1.89
rust_pinned=${QIM_RUST_TOOLCHAIN:-1.95.0}  # the version the test command runs with here
cargo_home=${CARGO_HOME:-$HOME/.cargo}
find_cargo() {
  local c
  for c in "$cargo_home/bin/cargo" "$HOME/.cargo/bin/cargo" "$(command -v cargo || true)"; do
    [[ -n $c && -x $c ]] && { echo "$c"; return 0; }
  done
  return 1
}
# version_at_least HAVE WANT: true when dotted version HAVE >= WANT.
version_at_least() { [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1) == "$2" ]]; }

ensure_rust() {
  have=""
  if cargo=$(find_cargo); then have=$("$cargo" --version 2>/dev/null | awk '{print $2}' || true); fi
  if [[ -n $have ]] && version_at_least "$have" "$rust_min"; then
    echo "install-deps: Rust $have present ($cargo)"
    return 0
  fi
  echo "install-deps: the CQL driver needs Rust >= $rust_min; found ${have:+$have at $cargo}${have:-none}."
  echo "install-deps: installing Rust $rust_pinned with rustup (the Rust project's installer, https://rustup.rs)"
  echo "install-deps:   into $cargo_home and ${RUSTUP_HOME:-$HOME/.rustup} for this user, PATH and Debian's"
  echo "install-deps:   packages untouched; about 30 s to 2 min (a ~80 MB download), then the first build compiles"
  echo "install-deps:   the driver's crates (about 5 min on 2 cores)"
  # The documented command (curl ... https://sh.rustup.rs | sh -s -- -y), with the minimal profile and the
  # pinned toolchain; sh.rustup.rs serves static.rust-lang.org/rustup/rustup-init.sh, tried second.
  fetch_rustup() {
    local url
    for url in https://sh.rustup.rs https://static.rust-lang.org/rustup/rustup-init.sh; do
      if curl --proto '=https' --tlsv1.2 -sSf --connect-timeout 15 --max-time 120 "$url" -o "$1"; then
        echo "fetched $url"
        return 0
      fi
    done
    return 1
  }
  installer=$(mktemp)
  trap 'rm -f "$installer"' EXIT
  step_hint="could not download rustup from sh.rustup.rs or static.rust-lang.org (no internet, or the Rust
    project's host is not reachable from here). Install Rust >= $rust_min yourself (e.g. from another mirror, then
    put its cargo on PATH or in \$CARGO_HOME/bin), or run QIM without the CQL driver: bash scripts/run.sh"
  step "downloading rustup-init.sh" fetch_rustup "$installer"
  step_hint="rustup could not install Rust $rust_pinned (see the log above; QIM_RUST_TOOLCHAIN picks another
    version >= $rust_min). scripts/run.sh needs no Rust."
  step "rustup: toolchain $rust_pinned, profile minimal" \
    sh "$installer" -y --no-modify-path --profile minimal --default-toolchain "$rust_pinned"
  step_hint=""
  cargo="$cargo_home/bin/cargo"
  have=$("$cargo" --version 2>/dev/null | awk '{print $2}' || true)
  if [[ -z $have ]] || ! version_at_least "$have" "$rust_min"; then
    echo "install-deps: rustup ran but $cargo reports '${have:-nothing}'; see $log" >&2
    exit 1
  fi
  echo "install-deps: Rust $have installed ($cargo; add $cargo_home/bin to PATH to use it yourself)"
}

# ---- Go to build the object store engine (SeaweedFS's go.mod says go 1.26.6; Debian 12 ships 1.19) ----
# scripts/engines/objstore.sh builds SeaweedFS with the first of $QIM_GO, the toolchain fetched below and the
# go on PATH that is recent enough; the same minimum and pinned version are set there.
go_min=1.26.6
go_pinned=${QIM_GO_TOOLCHAIN:-1.27.3}
qim_cache=${QIM_CACHE_DIR:-$HOME/.cache/qim}
go_dir="$qim_cache/go/go$go_pinned"
go_version_of() { "$1" env GOVERSION 2>/dev/null | sed 's/^go//'; }
# Fetches go$go_pinned as the go command itself does for GOTOOLCHAIN: the module
# golang.org/toolchain@v0.0.1-go$go_pinned.linux-ARCH from the Go module proxy (a module zip; the toolchain is
# under golang.org/toolchain@.../ inside), unpacked into $go_dir. Module zips keep no file modes: the
# commands are made executable, as the go command does.
fetch_go_toolchain() {
  local arch proxy url zip
  case $(uname -m) in
    x86_64) arch=amd64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "no Go toolchain for $(uname -m)"; return 1 ;;
  esac
  proxy=${GOPROXY:-https://proxy.golang.org}
  proxy=${proxy%%,*}
  [[ $proxy == http* ]] || proxy=https://proxy.golang.org
  url="$proxy/golang.org/toolchain/@v/v0.0.1-go$go_pinned.linux-$arch.zip"
  zip=$(mktemp --suffix=.zip)
  echo "fetching $url"
  if ! curl -sSfL --connect-timeout 15 --max-time 600 "$url" -o "$zip"; then rm -f "$zip"; return 1; fi
  rm -rf "$go_dir.partial"
  mkdir -p "$go_dir.partial"
  python3 - "$zip" "$go_dir.partial" "golang.org/toolchain@v0.0.1-go$go_pinned.linux-$arch/" <<'PY' ||
import os, sys, zipfile
src, dest, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
with zipfile.ZipFile(src) as z:
    for info in z.infolist():
        if info.is_dir() or not info.filename.startswith(prefix):
            continue
        name = info.filename[len(prefix):]
        path = os.path.join(dest, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with z.open(info) as f, open(path, "wb") as out:
            out.write(f.read())
        if name.startswith("bin/") or name.startswith("pkg/tool/"):
            os.chmod(path, 0o755)
PY
    { rm -rf "$zip" "$go_dir.partial"; return 1; }
  [[ -x $go_dir.partial/bin/go ]] || { echo "no bin/go in the toolchain zip"; rm -rf "$zip" "$go_dir.partial"; return 1; }
  rm -f "$zip"
  rm -rf "$go_dir"
  mv "$go_dir.partial" "$go_dir"
}
ensure_go() {
  local c v
  for c in "${QIM_GO:-}" "$go_dir/bin/go" "$(command -v go || true)" /usr/local/go/bin/go; do
    [[ -n $c && -x $c ]] || continue
    v=$(go_version_of "$c" || true)
    if [[ -n $v ]] && version_at_least "$v" "$go_min"; then
      echo "install-deps: Go $v present ($c)"
      return 0
    fi
  done
  echo "install-deps: the object store engine (SeaweedFS) needs Go >= $go_min; found ${v:-none}."
  echo "install-deps: fetching Go $go_pinned from the Go module proxy (module golang.org/toolchain, ~76 MB) into $go_dir"
  step_hint="could not fetch the Go toolchain golang.org/toolchain@v0.0.1-go$go_pinned from the Go module proxy
  (GOPROXY or proxy.golang.org not reachable, or no such version: QIM_GO_TOOLCHAIN picks another >= $go_min).
  Install Go >= $go_min yourself and set QIM_GO to its go command. Only the attachments' tests need it."
  step "Go toolchain $go_pinned (Go module proxy)" fetch_go_toolchain
  step_hint=""
  v=$(go_version_of "$go_dir/bin/go" || true)
  if [[ -z $v ]] || ! version_at_least "$v" "$go_min"; then
    echo "install-deps: FAILED: $go_dir/bin/go reports '${v:-nothing}'; see $log" >&2
    exit 1
  fi
  echo "install-deps: Go $v installed ($go_dir/bin/go; used by scripts/engines/objstore.sh only)"
}

ensure_rust
ensure_go
# The object store engine's binary, built once (about 5 min on 2 cores) and cached: later runs skip this.
step_hint="the SeaweedFS build failed (scripts/engines/objstore.sh build; its log is named above)."
step "the object store engine: SeaweedFS binary (scripts/engines/objstore.sh build; once)" \
  bash scripts/engines/objstore.sh build
step_hint=""
