#!/usr/bin/env bash
# build-image.sh - Cueue's container image without a Docker daemon: the
# same image as the Dockerfile (a root filesystem of the stripped `cueue`
# binary, exactly the shared libraries `ldd` lists for it, their Debian
# packages' copyright files, and a passwd entry for the non-root user
# 65532), packed as an OCI image layout that skopeo, podman, crane or
# `docker load` (after skopeo copy oci:... docker-archive:...) can push.
#
#   scripts/build-image.sh [BINARY [OUT]]      the OCI image layout in OUT
#                                              (default build/image; BINARY
#                                              default build/cueue), tag
#                                              cueue:VERSION and cueue:latest
#   scripts/build-image.sh --rootfs BINARY DIR the root filesystem alone (the
#                                              Dockerfile's build stage runs this)
#   scripts/build-image.sh --check-rootfs BINARY
#                                              assemble it in a temporary
#                                              folder and run `cueue --version`
#                                              and `cueue controller --help`
#                                              inside it with chroot, as root
#                                              and as 65532 (the CTest
#                                              install_image_rootfs); exits 77
#                                              when chroot is not permitted
#
# The layer is reproducible: files sorted, owner 0 (the binary and
# libraries read-only, world-readable), times 0, gzip without a name or
# time, so the same binary and libraries give the same digests.
# Needs: ldd, dpkg (Debian's packages own the libraries), strip, python3.
set -euo pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "build-image.sh: $*" >&2; exit 1; }

# libs BINARY: the absolute paths of the shared libraries it loads
libs() {
    ldd "$1" | awk '/=> \// {print $3} /^[[:space:]]*\/[^ ]+ \(/ {print $1}' | sort -u
}

# pkg_of PATH: the Debian package that owns PATH (/lib is /usr/lib on a
# merged-/usr system, and dpkg knows one of the two names)
pkg_of() {
    local p
    for p in "$1" "/usr$1" "$(readlink -f "$1")" "/usr$(readlink -f "$1")"; do
        dpkg -S "$p" 2>/dev/null | head -n 1 | cut -d: -f1 && return 0
    done
    return 1
}

rootfs() {
    local bin=$1 dir=$2 l pkg
    [ -x "$bin" ] || die "$bin: not an executable"
    rm -rf "$dir"
    mkdir -p "$dir/etc" "$dir/tmp" "$dir/usr/share/doc"
    chmod 1777 "$dir/tmp"
    cp "$bin" "$dir/cueue"
    strip --strip-unneeded "$dir/cueue"
    chmod 0755 "$dir/cueue"
    : >"$dir/.pkgs"
    for l in $(libs "$bin"); do
        mkdir -p "$dir$(dirname "$l")"
        cp -L "$l" "$dir$l"
        chmod 0644 "$dir$l"
        pkg=$(pkg_of "$l") || die "$l: no Debian package owns it"
        echo "${pkg%%:*}" >>"$dir/.pkgs"
    done
    chmod 0755 "$dir"/lib64/ld-linux-* 2>/dev/null || true
    for pkg in $(sort -u "$dir/.pkgs"); do
        if [ -f "/usr/share/doc/$pkg/copyright" ]; then
            mkdir -p "$dir/usr/share/doc/$pkg"
            cp "/usr/share/doc/$pkg/copyright" "$dir/usr/share/doc/$pkg/copyright"
        fi
    done
    sort -u "$dir/.pkgs" >"$dir/usr/share/doc/cueue-image-packages"
    rm -f "$dir/.pkgs"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dir/etc/passwd"
    printf 'root:x:0:\nnonroot:x:65532:\n' >"$dir/etc/group"
    printf 'hosts: files dns\n' >"$dir/etc/nsswitch.conf"
}

check_rootfs() {
    local bin tmp out rc=0
    bin=$(readlink -f "$1")
    # a sanitizer build is no image's binary, and its runtime needs /proc,
    # which the root filesystem has not
    if grep -q __asan_init "$bin"; then
        echo "SKIP  $bin is a sanitizer build: the image holds a release build"
        exit 77
    fi
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    rootfs "$bin" "$tmp/rootfs"
    if ! chroot "$tmp/rootfs" /cueue --version >"$tmp/out" 2>&1; then
        if [ "$(id -u)" != 0 ] || grep -qi "operation not permitted" "$tmp/out"; then
            echo "SKIP  chroot is not permitted here: $(head -n 1 "$tmp/out")"
            exit 77
        fi
        echo "FAIL  cueue --version in the root filesystem: $(cat "$tmp/out")"
        exit 1
    fi
    want=$("$bin" --version)
    if [ "$(cat "$tmp/out")" = "$want" ]; then
        echo "PASS  cueue --version in the root filesystem, as root: $want"
    else
        echo "FAIL  cueue --version in the root filesystem: '$(cat "$tmp/out")', want '$want'"
        rc=1
    fi
    if out=$(chroot --userspec=65532:65532 "$tmp/rootfs" /cueue controller --help 2>&1) &&
        grep -q -- "--kubeconfig" <<<"$out"; then
        echo "PASS  cueue controller --help as user 65532"
    else
        echo "FAIL  cueue controller --help as user 65532: $(head -n 3 <<<"$out")"
        rc=1
    fi
    # nothing but the binary, the libraries ldd lists, licenses and /etc
    extra=$(cd "$tmp/rootfs" && find . -type f | sed 's|^\.||' | sort |
        grep -vxF -f <({ echo /cueue; libs "$bin"; }) | grep -vE '^/(usr/share/doc/|etc/)' || true)
    if [ -z "$extra" ]; then
        echo "PASS  only the binary, its $(libs "$bin" | wc -l) libraries, $(ls "$tmp/rootfs/usr/share/doc" | grep -vc cueue-image) packages' licenses and /etc"
    else
        echo "FAIL  unexpected files: $extra"
        rc=1
    fi
    lic=$(comm -23 "$tmp/rootfs/usr/share/doc/cueue-image-packages" \
        <(ls "$tmp/rootfs/usr/share/doc" | sort))
    if [ -z "$lic" ]; then
        echo "PASS  every library's package has its copyright file"
    else
        echo "FAIL  packages without a copyright file: $lic"
        rc=1
    fi
    # the OCI layout: built, and its layer unpacks to the same tree
    if "$0" "$bin" "$tmp/oci" >"$tmp/oci.log" 2>&1 &&
        mkdir "$tmp/un" && tar -xzf "$tmp/oci/blobs/sha256/$(python3 -c '
import json, sys
d = sys.argv[1]
idx = json.load(open(d + "/index.json"))
m = json.load(open(d + "/blobs/sha256/" + idx["manifests"][0]["digest"].split(":")[1]))
print(m["layers"][0]["digest"].split(":")[1])' "$tmp/oci")" -C "$tmp/un" &&
        diff -r "$tmp/rootfs" "$tmp/un" >/dev/null; then
        echo "PASS  OCI image layout: its layer is the root filesystem"
    else
        echo "FAIL  OCI image layout: $(tail -n 3 "$tmp/oci.log")"
        rc=1
    fi
    exit $rc
}

# oci ROOTFS OUT VERSION: an OCI image layout of one layer
oci() {
    python3 - "$@" <<'PY'
import gzip, hashlib, io, json, os, sys, tarfile
rootfs, out, version = sys.argv[1:4]
def add_blob(data, media):
    d = hashlib.sha256(data).hexdigest()
    os.makedirs(f"{out}/blobs/sha256", exist_ok=True)
    with open(f"{out}/blobs/sha256/{d}", "wb") as f:
        f.write(data)
    return {"mediaType": media, "digest": "sha256:" + d, "size": len(data)}
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
    paths = []
    for base, dirs, files in os.walk(rootfs):
        dirs.sort()
        for n in sorted(dirs + files):
            paths.append(os.path.join(base, n))
    for p in sorted(paths, key=lambda p: os.path.relpath(p, rootfs)):
        ti = t.gettarinfo(p, arcname=os.path.relpath(p, rootfs))
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = ""
        ti.mtime = 0
        if ti.isfile():
            with open(p, "rb") as f:
                t.addfile(ti, f)
        else:
            t.addfile(ti)
tar = raw.getvalue()
gz = io.BytesIO()
with gzip.GzipFile(fileobj=gz, mode="wb", mtime=0, filename="") as g:
    g.write(tar)
layer = add_blob(gz.getvalue(), "application/vnd.oci.image.layer.v1.tar+gzip")
config = {
    "architecture": "amd64", "os": "linux",
    "config": {"User": "65532:65532", "Entrypoint": ["/cueue"], "Cmd": ["controller"],
               "WorkingDir": "/", "Env": ["PATH=/"],
               "Labels": {"org.opencontainers.image.title": "cueue",
                          "org.opencontainers.image.version": version}},
    "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(tar).hexdigest()]},
    "history": [{"created_by": "scripts/build-image.sh"}],
}
cfg = add_blob(json.dumps(config, sort_keys=True).encode(), "application/vnd.oci.image.config.v1+json")
manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": cfg, "layers": [layer]}
man = add_blob(json.dumps(manifest, sort_keys=True).encode(), "application/vnd.oci.image.manifest.v1+json")
index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [
    dict(man, annotations={"org.opencontainers.image.ref.name": tag}) for tag in (version, "latest")]}
with open(f"{out}/index.json", "w") as f:
    json.dump(index, f, sort_keys=True)
with open(f"{out}/oci-layout", "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
print(f"{out}: cueue:{version} {man['digest']} (layer {layer['size']} bytes)")
PY
}

case "${1:-}" in
--rootfs)
    [ $# -eq 3 ] || die "usage: $0 --rootfs BINARY DIR"
    rootfs "$2" "$3"
    ;;
--check-rootfs)
    [ $# -eq 2 ] || die "usage: $0 --check-rootfs BINARY"
    check_rootfs "$2"
    ;;
-h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
*)
    bin=${1:-$ROOT/build/cueue} out=${2:-$ROOT/build/image}
    version=$("$bin" --version | awk '{print $2}')
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    rootfs "$bin" "$tmp/rootfs"
    rm -rf "$out"
    mkdir -p "$out"
    oci "$tmp/rootfs" "$out" "$version"
    ;;
esac
