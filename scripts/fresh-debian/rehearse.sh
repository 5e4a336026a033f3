#!/usr/bin/env bash
# The README's first command on a fresh Debian 12 without Rust (issue 37, "Done when"), in a container:
#   1. a Debian 12 root filesystem from Debian's mirror (debootstrap --variant=minbase bookworm), imported
#      as a podman image (no base image is pulled: this machine reaches package registries only);
#   2. a fresh clone of this repository's HEAD;
#   3. in the container, as root, from the clone: `bash scripts/run.sh` (apt, the build of qim and qimctl,
#      the SDK for the web page), until `qim up` answers /healthz; then a message from alice to bob through
#      it with qimctl (bob's `listen` prints it).
# It prints the time of each stage. It compiles from scratch (about 20+ min on 2 cores): it is NOT part of
# the test command. Needs root, debootstrap, podman and runc (Debian packages).
#   bash scripts/fresh-debian/rehearse.sh [WORK_DIR]     (default /tmp/qim-fresh-debian; kept for a rerun:
#                                                         the root filesystem is made once)
#   QIM_REHEARSE_KEEP_CLONE=1 ...                       reuse the clone of a run cut short (its build dir)
# Containers on this VM need `--runtime runc --cgroup-manager cgroupfs` (crun refuses the hybrid cgroups)
# and explicit nofile/nproc limits no higher than this process may set without CAP_SYS_RESOURCE (podman's
# defaults are refused: "error setting rlimit type 6: operation not permitted"): nofile is 65536 or this
# shell's hard limit if lower, nproc 32768 (65536 was refused here with a hard limit of 96369);
# QIM_REHEARSE_NOFILE, QIM_REHEARSE_NPROC override them, QIM_REHEARSE_PODMAN_ARGS adds more. Behind a
# TLS-inspecting proxy (as on the machine this was written on) npm in the container must trust the host's
# CA: QIM_REHEARSE_PODMAN_ARGS="-v /etc/ssl/certs/ca-certificates.crt:/host-ca.crt:ro
# -e NODE_EXTRA_CA_CERTS=/host-ca.crt".
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-/tmp/qim-fresh-debian}
mirror=${QIM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
image=localhost/qim-fresh-debian:bookworm
podman=(podman --runtime runc --cgroup-manager cgroupfs)
hard_nofile=$(ulimit -Hn)
[[ $hard_nofile == unlimited ]] && hard_nofile=65536
nofile=${QIM_REHEARSE_NOFILE:-$((hard_nofile < 65536 ? hard_nofile : 65536))}
nproc=${QIM_REHEARSE_NPROC:-32768}
say() { echo "rehearse: $*"; }
mkdir -p "$work"

t0=$SECONDS
if ! "${podman[@]}" image exists "$image"; then
  if [[ ! -x $work/rootfs/bin/bash ]]; then
    say "debootstrap bookworm from $mirror into $work/rootfs (log: $work/debootstrap.log)"
    rm -rf "$work/rootfs"
    debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1
  fi
  # The security and updates suites, as a Debian 12 install has them.
  cat >"$work/rootfs/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${mirror%/debian}/debian-security bookworm-security main
SOURCES
  say "importing the root filesystem as $image"
  tar -C "$work/rootfs" -c . | "${podman[@]}" import - "$image" >/dev/null
fi
say "image ready after $((SECONDS - t0)) s"

if [[ ${QIM_REHEARSE_KEEP_CLONE:-0} == 1 && -d $work/qim ]]; then
  # A run cut short: the same clone, its build dir as far as it got (the time is then not a clean clone's).
  say "reusing the clone in $work/qim (QIM_REHEARSE_KEEP_CLONE=1)"
else
  rm -rf "$work/qim"
  git clone -q --no-local "$repo" "$work/qim"
  say "fresh clone of $(git -C "$repo" rev-parse --short HEAD) in $work/qim"
fi

# Inside: no Rust, then the README's command in the background, timed until /healthz answers, then a
# message through it. The clone is the container's /qim.
inside=$(cat <<'INSIDE'
set -uo pipefail
cd /qim
if command -v cargo >/dev/null || command -v rustc >/dev/null; then echo "inside: Rust is present, not a fresh machine"; exit 1; fi
echo "inside: no Rust here; starting bash scripts/run.sh"
start=$(date +%s)
bash scripts/run.sh --port 41500 --admin-port 41501 >/tmp/run.log 2>&1 &
runner=$!
until curl -fsS http://127.0.0.1:41501/healthz >/dev/null 2>&1; do
  if ! kill -0 $runner 2>/dev/null; then echo "inside: run.sh ended before qim up served:"; tail -n 40 /tmp/run.log; exit 1; fi
  sleep 5
done
echo "inside: qim up serves after $(( $(date +%s) - start )) s (from a clean clone unless QIM_REHEARSE_KEEP_CLONE=1)"
grep -E '^(install-deps|run):' /tmp/run.log | sed 's/^/inside:   /'
export PATH=/qim/build/release/src/app:/qim/build/release/src/ctl:$PATH
ALICE=$(qim token --user alice) BOB=$(qim token --user bob); export QIM_URL=ws://127.0.0.1:41500
qimctl listen --token "$BOB" --count 1 --timeout-s 30 >/tmp/listen.out 2>&1 &
listener=$!
sleep 1
qimctl send --token "$ALICE" --to bob "hello from a fresh Debian 12"
wait $listener; code=$?
cat /tmp/listen.out
kill $runner 2>/dev/null; wait $runner 2>/dev/null
if [[ $code == 0 ]] && grep -q "body=hello from a fresh Debian 12" /tmp/listen.out; then
  echo "inside: PASSED: a message went through qim up"; exit 0
fi
echo "inside: FAILED: bob did not get the message"; exit 1
INSIDE
)
say "running the README's command in the container (compiles from scratch: about 20+ min on 2 cores)"
t1=$SECONDS
rc=0
# shellcheck disable=SC2086 # QIM_REHEARSE_PODMAN_ARGS: extra words on purpose
"${podman[@]}" run --rm --network host --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc" \
  ${QIM_REHEARSE_PODMAN_ARGS:-} -v "$work/qim:/qim" "$image" bash -c "$inside" || rc=$?
say "container finished after $((SECONDS - t1)) s (exit $rc); total $((SECONDS - t0)) s"
exit $rc
