#!/usr/bin/env bash
# build.sh - Kueue built from its Go module, for bench/vs-kueue.sh: its
# manager (cmd/kueue) and the runner and minimalkueue of its scheduler
# performance test (test/performance/scheduler), at the version pinned in
# bench/kueue/go.mod. Nothing of Kueue's is kept in this repository: the
# sources come from the module cache, the binaries go to the cache folder.
#
#   bench/kueue/build.sh build   build the binaries; a no-op once built
#   bench/kueue/build.sh built   exit 0 when every binary is built
#   bench/kueue/build.sh bin     print the folder of the binaries
#   bench/kueue/build.sh src     print the folder of Kueue's module source
#                                (its CRDs: config/components/crd/bases)
#
# The cache is ${CUEUE_K8S_CACHE:-$HOME/.cache/cueue-k8s}, shared with
# e2e/k8s/cluster.sh, whose kube-apiserver and etcd the runner's envtest
# control plane uses.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${CUEUE_K8S_CACHE:-$HOME/.cache/cueue-k8s}
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

die() { echo "kueue/build.sh: $*" >&2; exit 1; }

V=$(sed -n 's|^[[:space:]]*sigs.k8s.io/kueue \(v[^ ]*\).*|\1|p' "$HERE/go.mod" | head -n 1)
[ -n "$V" ] || die "cannot read the pinned Kueue version in $HERE/go.mod"
BIN="$CACHE/kueue-$V"
PERF=sigs.k8s.io/kueue/test/performance/scheduler

built() { [ -x "$BIN/runner" ] && [ -x "$BIN/minimalkueue" ] && [ -x "$BIN/kueue" ]; }

src() {
    local d
    d=$(cd "$HERE" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue 2>/dev/null)
    if [ -z "$d" ] || [ ! -d "$d" ]; then
        (cd "$HERE" && go mod download sigs.k8s.io/kueue) >&2 || die "go mod download sigs.k8s.io/kueue failed"
        d=$(cd "$HERE" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
    fi
    [ -d "$d/config/components/crd/bases" ] || die "no CRDs in the Kueue module at $d"
    echo "$d"
}

build() {
    if built; then
        echo "already built: $BIN"
        return 0
    fi
    command -v go >/dev/null || die "go is not installed"
    local t0=$SECONDS
    mkdir -p "$BIN/.tmp"
    echo "downloading modules for Kueue $V ..."
    (cd "$HERE" && go mod download) || die "go mod download failed in bench/kueue"
    echo "  downloaded in $((SECONDS - t0)) s"
    echo "building Kueue's manager, runner and minimalkueue ..."
    (cd "$HERE" && go build -trimpath -ldflags "-s -w" -o "$BIN/.tmp/" \
        sigs.k8s.io/kueue/cmd/kueue "$PERF/runner" "$PERF/minimalkueue") || die "go build failed"
    mv "$BIN"/.tmp/* "$BIN/"
    rmdir "$BIN/.tmp"
    built || die "not every binary was built in $BIN"
    echo "built in $((SECONDS - t0)) s: $BIN"
}

case ${1:-} in
build) build ;;
built) built ;;
bin) echo "$BIN" ;;
src) src ;;
*) die "usage: build.sh build|built|bin|src" ;;
esac
