#!/usr/bin/env bash
# Builds QIM's OCI image (deploy/image/Containerfile) from a build's binaries, without pulling anything:
#   bash scripts/container/build-image.sh [BUILD_DIR]     (default: build/release; tag $QIM_IMAGE, localhost/qim:dev)
# The root filesystem is made here from
#   - BUILD_DIR/src/app/qim and BUILD_DIR/src/ctl/qimctl, debug info stripped (symbols kept for backtraces);
#   - every shared library they link (ldd), copied from this Debian host's packages; each is listed with its
#     package and version in /usr/share/qim/image-manifest.txt (so the image matches the host that built
#     the binaries: build on the Debian release the image is for);
#   - busybox from Debian's busybox-static package (downloaded once with apt-get into the cache): /bin/sh and
#     wget for the healthcheck, and /usr/local/bin/curl, a two-line wrapper over wget, because podman kube
#     play turns an httpGet probe into `curl -f URL`;
#   - /etc/passwd and /etc/group with the user qim (10001), /data owned by it, /tmp.
# Prints the image's size as the last line ("image: localhost/qim:dev N MB").
set -euo pipefail
source "$(dirname "$0")/lib.sh"
build=$(realpath "${1:-$qim_root/build/release}")
qim_bin=$build/src/app/qim
ctl_bin=$build/src/ctl/qimctl
for b in "$qim_bin" "$ctl_bin"; do [[ -x $b ]] || { echo "image: $b is missing (build the targets qim and qimctl)" >&2; exit 1; }; done
podman_ready >&2 || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/qim-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir -p "$root"/{bin,etc,tmp,usr/local/bin,usr/share/qim,lib64} "$work/data"
chmod 1777 "$root/tmp"

# The binaries, without their debug sections (-g1 line tables are most of their size).
for b in "$qim_bin" "$ctl_bin"; do
  objcopy --strip-debug "$b" "$root/usr/local/bin/$(basename "$b")"
done

# The libraries: every path ldd resolves, copied (dereferenced) to the same path, plus the loader.
manifest=$root/usr/share/qim/image-manifest.txt
{
  echo "# QIM image $(date -u +%Y-%m-%dT%H:%M:%SZ): binaries from $build"
  echo "# $(. /etc/os-release && echo "$PRETTY_NAME"); each file, its Debian package and version"
} >"$manifest"
mapfile -t libs < <(ldd "$qim_bin" "$ctl_bin" | awk '/=> \//{print $3} /^\t\/[^ ]+ \(/{print $1}' | sort -u)
for lib in "${libs[@]}"; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
  real=$(realpath "$lib")
  pkg=$(dpkg -S "$real" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || dpkg -S "/usr$lib" 2>/dev/null || echo "?: unknown")
  pkg=${pkg%%:*}
  ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || echo "?")
  echo "$lib $pkg $ver" >>"$manifest"
done

# busybox-static from Debian, cached: sh, wget and the usual applets for `podman exec ... sh`.
debs=$qim_cache/debs
mkdir -p "$debs"
deb=$(ls "$debs"/busybox-static_*.deb 2>/dev/null | tail -n 1 || true)
if [[ -z $deb ]]; then
  echo "image: downloading Debian's busybox-static into $debs" >&2
  (cd "$debs" && apt-get download busybox-static >/dev/null 2>&1) || { echo "image: apt-get download busybox-static failed" >&2; exit 1; }
  deb=$(ls "$debs"/busybox-static_*.deb | tail -n 1)
fi
dpkg-deb -x "$deb" "$work/busybox"
cp "$work/busybox/bin/busybox" "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
  [[ -e $root/bin/$applet || $applet == busybox ]] || ln -s busybox "$root/bin/$applet"
done
echo "/bin/busybox busybox-static $(dpkg-deb -f "$deb" Version)" >>"$manifest"
cat >"$root/usr/local/bin/curl" <<'SH'
#!/bin/sh
# Not curl: podman kube play runs an httpGet probe as `curl -f URL`; this answers that form with busybox wget.
for a; do url=$a; done
exec wget -q -O /dev/null "$url"
SH
chmod 755 "$root/usr/local/bin/curl"

printf 'root:x:0:0:root:/root:/bin/sh\nqim:x:10001:10001:qim:/data:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nqim:x:10001:\n' >"$root/etc/group"
printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"

cp "$qim_root/deploy/image/Containerfile" "$work/Containerfile"
echo "image: building $qim_image (binaries from $build)" >&2
old=$(qpodman image inspect "$qim_image" --format '{{.Id}}' 2>/dev/null || true)
qpodman build --quiet --format docker --tag "$qim_image" "$work" >/dev/null
# The image this tag named before, now untagged: removed (unless a container still uses it).
new=$(qpodman image inspect "$qim_image" --format '{{.Id}}')
[[ -z $old || $old == "$new" ]] || qpodman rmi "$old" >/dev/null 2>&1 || true
size=$(qpodman image inspect "$qim_image" --format '{{.Size}}')
echo "image: $qim_image $((size / 1000000)) MB ($size bytes; $(wc -l <"$manifest") files listed in /usr/share/qim/image-manifest.txt)"
