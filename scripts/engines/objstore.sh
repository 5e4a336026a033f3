#!/usr/bin/env bash
# Runs an S3-compatible object store (SeaweedFS: master, volume, filer and S3 gateway in one `weed server`
# process) on 127.0.0.1 for QIM's attachments (issue 41): tests, and `qim up` with attachments on.
#
#   scripts/engines/objstore.sh {start|wait|stop|logs|status|clean|build|env}
#
#   start   builds the `weed` binary once (cached, see below), writes the S3 identities, starts the server in
#           the background (does nothing if it already runs)
#   wait    waits until the S3 port answers a signed request, then creates the bucket (idempotent)
#           ($QIM_OBJSTORE_WAIT_TIMEOUT, default 60 s)
#   stop    SIGTERM, SIGKILL after 5 s (weed has been seen to outlast SIGTERM), then waits for its ports; idempotent
#   logs    last lines of the log ($LINES, default 100)
#   status  running or not, pid, ports, memory
#   clean   stop, then delete the data (objects, bucket, generated keys)
#   build   only builds (or finds) the cached binary and prints its path
#   env     prints `export QIM_S3_...=...` lines for qim (endpoint, bucket, region, keys): eval "$(... env)"
#
# Requests must be signed: the store knows one identity (access key and secret below), with no anonymous
# one, so an unsigned request is refused (403).
#
# The binary: SeaweedFS is a Go module pinned at $QIM_SEAWEEDFS_VERSION. `go install` refuses it (its go.mod
# has replace directives), so the module is fetched with `go mod download`, copied to a writable directory
# and `go build ./weed` runs there (about 5 min on 2 cores, once); the binary is kept in
# $QIM_CACHE_DIR/seaweedfs/VERSION/weed. The Go used is the first of $QIM_GO, the toolchain
# scripts/install-deps.sh fetched ($QIM_CACHE_DIR/go/go$QIM_GO_TOOLCHAIN/bin/go), and `go` on PATH that is
# at least the module's `go` version ($QIM_SEAWEEDFS_GO_MIN).
#
# Environment (see also common.sh):
#   QIM_OBJSTORE_PORT        S3 port (18333); the server's other ports follow it: master +1, volume +2,
#                            filer +3, their gRPC ports +11, +12, +13, the S3 gRPC port +14
#   QIM_OBJSTORE_BUCKET      the bucket `wait` creates (qim-attachments)
#   QIM_OBJSTORE_REGION      us-east-1
#   QIM_OBJSTORE_ACCESS_KEY, QIM_OBJSTORE_SECRET_KEY   the identity; default: generated at the first start
#                            and kept in the run dir (access_key, secret_key)
#   QIM_OBJSTORE_BUILD_JOBS  go build -p (1: frugal on a shared machine)
set -euo pipefail
QIM_ENGINE=objstore
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

version=${QIM_SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}
module=github.com/seaweedfs/seaweedfs
go_min=${QIM_SEAWEEDFS_GO_MIN:-1.26.6}
go_toolchain=${QIM_GO_TOOLCHAIN:-1.27.3}
port=${QIM_OBJSTORE_PORT:-18333}
bucket=${QIM_OBJSTORE_BUCKET:-qim-attachments}
region=${QIM_OBJSTORE_REGION:-us-east-1}
[[ $port =~ ^[0-9]+$ ]] || qim_die "bad QIM_OBJSTORE_PORT '$port'"
master_port=$((port + 1)) volume_port=$((port + 2)) filer_port=$((port + 3))
home="$QIM_CACHE_DIR/seaweedfs/$version"
weed="$home/weed"
dir="$QIM_RUN_DIR/objstore"
data="$dir/data"
pidfile="$dir/weed.pid"
logfile="$dir/weed.log"
identities="$dir/s3.json"
marker="-s3.port=$port"

running_pid() { qim_pid "$pidfile" "$marker"; }

# version_at_least HAVE WANT
version_at_least() { [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1) == "$2" ]]; }

go_version_of() { "$1" env GOVERSION 2>/dev/null | sed 's/^go//'; }

# Prints a go command recent enough for the module, or fails naming what to do.
find_go() {
  local c v
  for c in "${QIM_GO:-}" "$QIM_CACHE_DIR/go/go$go_toolchain/bin/go" "$(command -v go || true)" /usr/local/go/bin/go; do
    [[ -n $c && -x $c ]] || continue
    v=$(go_version_of "$c") || continue
    if [[ -n $v ]] && version_at_least "$v" "$go_min"; then
      printf '%s\n' "$c"
      return 0
    fi
  done
  qim_die "no Go >= $go_min to build SeaweedFS: run scripts/install-deps.sh (it fetches Go $go_toolchain into $QIM_CACHE_DIR/go), or set QIM_GO"
}

build() {
  if [[ -x $weed ]]; then
    qim_log "using the cached SeaweedFS binary $weed"
    return 0
  fi
  command -v flock >/dev/null || qim_die "flock (util-linux) is missing"
  mkdir -p "$home"
  local lockfd
  exec {lockfd}>"$home.lock"
  if ! flock -n "$lockfd"; then
    qim_log "another process is building SeaweedFS; waiting for it"
    flock "$lockfd"
  fi
  if [[ -x $weed ]]; then
    exec {lockfd}>&-
    return 0
  fi
  local go src t0 buildlog="$home/build.log"
  go=$(find_go)
  t0=$(qim_now_ms)
  qim_log "first start: building SeaweedFS $version with $go ($(go_version_of "$go")); log $buildlog; about 5 min on 2 cores"
  : >"$buildlog"
  # GOTOOLCHAIN=local: the go found above builds; it never switches to another toolchain by itself.
  src=$(GOTOOLCHAIN=local GOFLAGS=-mod=mod "$go" mod download -json "$module@$version" 2>>"$buildlog" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || true
  if [[ -z $src || ! -d $src ]]; then
    exec {lockfd}>&-
    qim_show_log_tail "$buildlog"
    qim_die "go mod download $module@$version failed (is the Go module proxy reachable? GOPROXY=$("$go" env GOPROXY)); see $buildlog"
  fi
  local work="$home/src.partial"
  rm -rf "$work"
  cp -r "$src" "$work"
  chmod -R u+w "$work"
  # -trimpath: the compiled packages in Go's build cache do not depend on where this copy is, so a rebuild
  # (another QIM_CACHE_DIR, a removed binary) reuses them instead of compiling SeaweedFS's ~500 packages again.
  if ! (cd "$work" && GOTOOLCHAIN=local GOFLAGS="-trimpath -buildvcs=false -p=${QIM_OBJSTORE_BUILD_JOBS:-1}" \
    nice -n 10 "$go" build -o "$home/weed.partial" ./weed) >>"$buildlog" 2>&1; then
    rm -rf "$work" "$home/weed.partial"
    exec {lockfd}>&-
    qim_show_log_tail "$buildlog"
    qim_die "go build of SeaweedFS failed; see $buildlog"
  fi
  rm -rf "$work"
  mv "$home/weed.partial" "$weed"
  exec {lockfd}>&-
  qim_log "built $weed ($(du -h "$weed" | cut -f1)) in $(qim_since "$t0")"
}

# The identity: from the environment, else generated once and kept in the run dir.
access_key() {
  if [[ -n ${QIM_OBJSTORE_ACCESS_KEY:-} ]]; then printf '%s\n' "$QIM_OBJSTORE_ACCESS_KEY"; return; fi
  [[ -s $dir/access_key ]] || { mkdir -p "$dir"; printf 'qim%s\n' "$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$dir/access_key"; }
  cat "$dir/access_key"
}
secret_key() {
  if [[ -n ${QIM_OBJSTORE_SECRET_KEY:-} ]]; then printf '%s\n' "$QIM_OBJSTORE_SECRET_KEY"; return; fi
  [[ -s $dir/secret_key ]] || { mkdir -p "$dir"; (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/secret_key"); }
  cat "$dir/secret_key"
}

write_identities() {
  (
    umask 077
    cat >"$identities" <<JSON
{
  "identities": [
    {
      "name": "qim",
      "credentials": [{"accessKey": "$(access_key)", "secretKey": "$(secret_key)"}],
      "actions": ["Admin", "Read", "Write", "List", "Tagging"]
    }
  ]
}
JSON
  )
}

start() {
  local pid
  if pid=$(running_pid); then
    qim_log "already running (pid $pid, S3 on 127.0.0.1:$port); nothing to do"
    return 0
  fi
  local p
  for p in "$port" "$master_port" "$volume_port" "$filer_port" $((port + 11)) $((port + 12)) $((port + 13)) $((port + 14)); do
    qim_require_port_free 127.0.0.1 "$p" "objstore"
  done
  build
  mkdir -p "$data"
  qim_rotate_log "$logfile"
  write_identities
  qim_log "starting SeaweedFS (weed server: master, volume, filer, S3) with S3 on 127.0.0.1:$port, dir $dir"
  # -volume.preStopSeconds=0: no 10 s grace before the volume server stops (nothing to drain in tests).
  qim_spawn "$pidfile" "$logfile" "$weed" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$data" \
    -master.port="$master_port" -master.port.grpc=$((port + 11)) -master.volumeSizeLimitMB=1024 \
    -volume.port="$volume_port" -volume.port.grpc=$((port + 12)) -volume.max=16 -volume.preStopSeconds=0 \
    -filer -filer.port="$filer_port" -filer.port.grpc=$((port + 13)) \
    -s3 -s3.port="$port" -s3.port.grpc=$((port + 14)) -s3.config="$identities" -s3.iam=false
  qim_log "started (pid $(<"$pidfile")); log $logfile; run '$0 wait' to wait until it serves"
}

# signed S3 request with curl's own SigV4 (curl >= 7.75)
s3_curl() {
  curl -sS -o /dev/null -w '%{http_code}' --max-time 10 --aws-sigv4 "aws:amz:$region:s3" \
    --user "$(access_key):$(secret_key)" "$@"
}

bucket_ready() {
  local code
  code=$(s3_curl -X PUT "http://127.0.0.1:$port/$bucket" 2>/dev/null) || return 1
  [[ $code == 200 || $code == 409 ]] || return 1
  code=$(s3_curl -I "http://127.0.0.1:$port/$bucket" 2>/dev/null) || return 1
  [[ $code == 200 ]]
}

wait_ready() {
  [[ -f $pidfile ]] || qim_die "not started (no pid file $pidfile): run '$0 start' first"
  qim_wait_for "objstore S3 127.0.0.1:$port, bucket $bucket" "${QIM_OBJSTORE_WAIT_TIMEOUT:-60}" "$logfile" "$pidfile" bucket_ready
  local pid
  pid=$(running_pid) && qim_log "objstore ready: pid $pid, RSS $(qim_rss_mb "$pid") MiB"
}

stop() {
  qim_stop_pidfile "objstore" "$pidfile" 5 "$marker"
  qim_wait_ports_closed "objstore" 10 "127.0.0.1:$port" "127.0.0.1:$master_port" "127.0.0.1:$volume_port" "127.0.0.1:$filer_port"
}

status() {
  local pid
  if pid=$(running_pid); then
    local state="starting"
    bucket_ready && state="serving bucket $bucket"
    qim_log "running: pid $pid, S3 127.0.0.1:$port ($state), master $master_port, volume $volume_port, filer $filer_port, RSS $(qim_rss_mb "$pid") MiB, dir $dir"
  else
    qim_log "not running (dir $dir)"
    return 3
  fi
}

print_env() {
  cat <<ENV
export QIM_S3_ENDPOINT=http://127.0.0.1:$port
export QIM_S3_BUCKET=$bucket
export QIM_S3_REGION=$region
export QIM_S3_ACCESS_KEY=$(access_key)
export QIM_S3_SECRET_KEY=$(secret_key)
export QIM_S3_PATH_STYLE=1
ENV
}

case ${1:-} in
  start) start ;;
  wait) wait_ready ;;
  stop) stop ;;
  logs) tail -n "${LINES:-100}" "$logfile" 2>/dev/null || qim_die "no log yet at $logfile" ;;
  status) status ;;
  clean)
    stop
    qim_log "deleting $dir"
    rm -rf "$dir"
    ;;
  build) build >&2 && echo "$weed" ;;
  env) print_env ;;
  *)
    echo "usage: $0 {start|wait|stop|logs|status|clean|build|env}" >&2
    exit 2
    ;;
esac
