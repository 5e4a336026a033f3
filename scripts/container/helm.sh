#!/usr/bin/env bash
# Prints the path of a pinned Helm binary, building it once from the Go module proxy into the cache
# (GOFLAGS=-mod=mod go install helm.sh/helm/v4/cmd/helm@$QIM_HELM_VERSION). Later calls print the cached
# binary at once. The Go that builds it: a `go` >= 1.21 on PATH or in /usr/local/go (it fetches the
# toolchain helm's go.mod asks for through the module proxy itself, GOTOOLCHAIN=auto); otherwise (Debian
# 12's golang-go is 1.19, or no Go at all) the Go toolchain module golang.org/toolchain at
# $QIM_HELM_GO_VERSION, downloaded from the module proxy into the cache and checked against the checksum
# database (sum.golang.org), as `go` itself would.
#   QIM_HELM_VERSION     the pinned Helm (v4.3.2, whose go.mod needs Go 1.26.0)
#   QIM_HELM_GO_VERSION  the Go toolchain fetched when there is no suitable go (1.26.0)
#   QIM_HELM_GO          a go binary to use, or "fetch": the toolchain module even if a go is installed
#   QIM_CACHE_DIR        the cache (~/.cache/qim); the binary is $QIM_CACHE_DIR/helm/<version>/bin/helm
#   helm.sh --go         prints the go it would build with (fetching the toolchain if needed), builds nothing
set -euo pipefail
version=${QIM_HELM_VERSION:-v4.3.2}
go_version=${QIM_HELM_GO_VERSION:-1.26.0}
cache=${QIM_CACHE_DIR:-$HOME/.cache/qim}
proxy=${GOPROXY:-https://proxy.golang.org}
proxy=${proxy%%,*}
dir=$cache/helm/$version
if [[ ${1:-} != --go && -x $dir/bin/helm ]]; then echo "$dir/bin/helm"; exit 0; fi

# go_minor GO: the minor version of that go (21 for go1.21.3), 0 if it does not run.
go_minor() { "$1" env GOVERSION 2>/dev/null | sed -n 's/^go1\.\([0-9]*\).*/\1/p' || true; }
# The toolchain module, fetched and verified once: prints its bin/go.
fetch_toolchain() {
  local arch mod zip root
  case $(uname -m) in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; *) echo "helm: no Go toolchain for $(uname -m)" >&2; return 1 ;; esac
  mod="golang.org/toolchain@v0.0.1-go$go_version.linux-$arch"
  root=$cache/go-toolchain/go$go_version
  if [[ ! -x $root/bin/go ]]; then
    echo "helm: fetching the Go $go_version toolchain ($mod) from $proxy" >&2
    mkdir -p "$cache/go-toolchain"
    zip=$cache/go-toolchain/go$go_version.linux-$arch.zip
    curl -fsSL --retry 3 -o "$zip" "$proxy/golang.org/toolchain/@v/v0.0.1-go$go_version.linux-$arch.zip" || return 1
    local sum
    # The checksum database through the proxy (as go does: $GOPROXY/sumdb/sum.golang.org/...).
    sum=$(curl -fsSL --retry 3 "$proxy/sumdb/sum.golang.org/lookup/$mod" | awk -v m="${mod%@*}" '$1 == m && $3 ~ /^h1:/ {print $3; exit}') || return 1
    python3 - "$zip" "$mod" "$sum" "$root" <<'PY' || { rm -f "$zip"; return 1; }
import base64, hashlib, os, stat, sys, zipfile
zip_path, mod, want, root = sys.argv[1:]
z = zipfile.ZipFile(zip_path)
# The module's h1 hash (golang.org/x/mod/sumdb/dirhash Hash1): sha256 of "sha256hex  name\n" lines in
# the order of the sorted file names.
names = sorted(n for n in z.namelist() if not n.endswith("/"))
lines = ["%s  %s\n" % (hashlib.sha256(z.read(n)).hexdigest(), n) for n in names]
got = "h1:" + base64.b64encode(hashlib.sha256("".join(lines).encode()).digest()).decode()
if got != want:
    sys.exit("helm: the toolchain's hash %s is not the checksum database's %s" % (got, want))
prefix = mod + "/"
for n in z.namelist():
    if not n.startswith(prefix) or n.endswith("/"):
        continue
    dest = os.path.join(root, n[len(prefix):])
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "wb") as f:
        f.write(z.read(n))
    # The zip keeps no modes; go's own toolchain switch makes bin/ and pkg/tool/ executable the same way.
    rel = n[len(prefix):]
    if rel.startswith("bin/") or rel.startswith("pkg/tool/"):
        os.chmod(dest, os.stat(dest).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
PY
    rm -f "$zip"
  fi
  echo "$root/bin/go"
}

go=""
candidates=("$(command -v go || true)" /usr/local/go/bin/go)
case ${QIM_HELM_GO:-} in
  "") ;;
  fetch) candidates=() ;;
  *) candidates=("$QIM_HELM_GO") ;;
esac
for candidate in "${candidates[@]}"; do
  [[ -n $candidate && -x $candidate ]] || continue
  minor=$(go_minor "$candidate")
  if ((${minor:-0} >= 21)); then go=$candidate; break; fi
done
if [[ -z $go ]]; then
  go=$(fetch_toolchain) || { echo "helm: no Go >= 1.21 and the Go toolchain could not be fetched" >&2; exit 1; }
fi
if [[ ${1:-} == --go ]]; then echo "$go"; exit 0; fi

mkdir -p "$dir"
echo "helm: building helm $version with $("$go" env GOVERSION) into $dir (once; about 5 minutes on 2 cores)" >&2
# One package at a time (-p 1): the machine's two cores are shared with everything else.
GOBIN=$dir/bin GOPATH=$cache/go GOMODCACHE=$cache/go/mod GOCACHE=$cache/go/build GOFLAGS=-mod=mod \
  GOTOOLCHAIN=auto CGO_ENABLED=0 "$go" install -p 1 -trimpath -ldflags=-s "helm.sh/helm/v4/cmd/helm@$version" >&2
"$dir/bin/helm" version >&2
# The build's module and object caches (about 1.7 GB) are not needed once the binary is there.
chmod -R u+w "$cache/go" && rm -rf "$cache/go"
echo "$dir/bin/helm"
