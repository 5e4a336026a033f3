#!/usr/bin/env bash
# Installs the Debian packages the deploy phase needs (image build, compose, kube play, promtool), apart from
# scripts/install-deps.sh so that `scripts/run.sh` users never need podman. Idempotent: a second run installs
# nothing. apt's output goes to a log file ($QIM_CACHE_DIR/apt-container.log); one line a step here.
#   podman, buildah, runc       build and run the OCI image (runc: crun refuses this VM's hybrid cgroups)
#   debootstrap                 a Debian root filesystem (a build container; the image itself is made from
#                               the build's own files, decision 63)
#   slirp4netns, uidmap, fuse-overlayfs, containernetworking-plugins   podman's networking and storage
#   catatonit                   the pods' pause process (podman kube play)
#   python3-venv                podman-compose from PyPI (scripts/container/podman-compose.sh; Debian's 1.0.3
#                               cannot run host-network services)
#   python3-yaml                the deploy test reads rendered manifests
#   prometheus                  promtool (check rules, test rules); its daemon is not started here
set -euo pipefail
cache=${QIM_CACHE_DIR:-$HOME/.cache/qim}
mkdir -p "$cache"
packages=(podman buildah runc debootstrap slirp4netns uidmap fuse-overlayfs containernetworking-plugins
  catatonit python3-venv prometheus python3-yaml curl)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "container install: all Debian packages present"
  exit 0
fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
log=$cache/apt-container.log
echo "container install: installing ${missing[*]} (apt's output: $log; about a minute)"
start=$SECONDS
$SUDO apt-get update -qq >>"$log" 2>&1 || { tail -n 20 "$log" >&2; exit 1; }
# The prometheus package would start its daemon where systemd runs; only promtool is wanted.
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$log" 2>&1 ||
  { tail -n 20 "$log" >&2; echo "container install: apt-get install failed (see $log)" >&2; exit 1; }
echo "container install: done in $((SECONDS - start)) s"
