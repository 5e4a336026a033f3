#!/usr/bin/env bash
# Runs a pinned podman-compose from PyPI (installed once into a virtualenv in the cache) with this repo's
# podman settings: bash scripts/container/podman-compose.sh -f deploy/compose/qim-up.yml up -d
# Debian 12's podman-compose (1.0.3) always adds the project network to a service's `podman run`, which
# podman refuses beside `network_mode: host` ("cannot set multiple networks without bridge network mode"):
# deploy/compose/distributed.yml needs 1.0.6.
#   QIM_PODMAN_COMPOSE_VERSION (1.0.6), QIM_CACHE_DIR (~/.cache/qim): the virtualenv is
#   $QIM_CACHE_DIR/podman-compose-<version>
set -euo pipefail
source "$(dirname "$0")/lib.sh"
version=${QIM_PODMAN_COMPOSE_VERSION:-1.0.6}
venv=$qim_cache/podman-compose-$version
if [[ ! -x $venv/bin/podman-compose ]]; then
  echo "podman-compose: installing podman-compose $version from PyPI into $venv (once)" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "podman-compose==$version" >&2
fi
exec "$venv/bin/podman-compose" "$@"
