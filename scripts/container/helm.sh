#!/usr/bin/env bash
# Prints the path of a pinned Helm binary, building it once from the Go module proxy into the cache
# (GOFLAGS=-mod=mod go install helm.sh/helm/v4/cmd/helm@$QIM_HELM_VERSION). Later calls print the cached
# binary at once. Needs Go >= 1.22 on PATH or in /usr/local/go (Debian 12's golang-go 1.19 is too old; a
# newer go fetches the toolchain helm's go.mod asks for through the module proxy, GOTOOLCHAIN=auto).
#   QIM_HELM_VERSION   the pinned version (v4.3.2)
#   QIM_CACHE_DIR      the cache (~/.cache/qim); the binary is $QIM_CACHE_DIR/helm/<version>/bin/helm
set -euo pipefail
version=${QIM_HELM_VERSION:-v4.3.2}
cache=${QIM_CACHE_DIR:-$HOME/.cache/qim}
dir=$cache/helm/$version
if [[ -x $dir/bin/helm ]]; then echo "$dir/bin/helm"; exit 0; fi
go=$(command -v go || true)
[[ -n $go ]] || { [[ -x /usr/local/go/bin/go ]] && go=/usr/local/go/bin/go; }
[[ -n $go ]] || { echo "helm: no go on PATH (nor /usr/local/go): Go >= 1.22 is needed to build helm $version" >&2; exit 1; }
minor=$("$go" env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
((${minor:-0} >= 22)) || { echo "helm: $("$go" env GOVERSION) is too old to build helm $version (Go >= 1.22)" >&2; exit 1; }
mkdir -p "$dir"
echo "helm: building helm $version from the Go module proxy into $dir (once; a few minutes on 2 cores)" >&2
# One package at a time (-p 1): the machine's two cores are shared with everything else.
GOBIN=$dir/bin GOPATH=$cache/go GOMODCACHE=$cache/go/mod GOCACHE=$cache/go/build GOFLAGS=-mod=mod \
  GOTOOLCHAIN=auto CGO_ENABLED=0 "$go" install -p 1 -trimpath -ldflags=-s "helm.sh/helm/v4/cmd/helm@$version" >&2
"$dir/bin/helm" version >&2
# The build's module and object caches (about 1.7 GB) are not needed once the binary is there.
chmod -R u+w "$cache/go" && rm -rf "$cache/go"
echo "$dir/bin/helm"
