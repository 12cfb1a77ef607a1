#!/usr/bin/env bash
# helm.sh - runs helm, the version pinned in scripts/helm/go.mod, built from
# its Go module on first use into ${CUEUE_HELM_CACHE:-$HOME/.cache/cueue-helm}
# (one folder per version; outside the repository). Go is for tests only.
#
#   scripts/helm/helm.sh build     build it (a no-op once built); print its path
#   scripts/helm/helm.sh built     exit 0 when it is built
#   scripts/helm/helm.sh ARGS...   build if needed, then run helm ARGS...
#
# Exits 77 when Go is not installed and helm is not built yet.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${CUEUE_HELM_CACHE:-$HOME/.cache/cueue-helm}
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly
V=$(sed -n 's|^require helm.sh/helm/v3 \(v[^ ]*\).*|\1|p' "$HERE/go.mod" | head -n 1)
[ -n "$V" ] || { echo "helm.sh: no helm version in $HERE/go.mod" >&2; exit 1; }
BIN=$CACHE/helm-$V/helm

build() {
    [ -x "$BIN" ] && return 0
    command -v go >/dev/null || { echo "helm.sh: go is not installed" >&2; exit 77; }
    mkdir -p "$(dirname "$BIN")"
    local t0=$SECONDS
    echo "building helm $V ..." >&2
    (cd "$HERE" && nice -n 19 go build -p 2 -trimpath \
        -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$V" \
        -o "$BIN.tmp" helm.sh/helm/v3/cmd/helm) || { echo "helm.sh: go build failed" >&2; exit 1; }
    mv "$BIN.tmp" "$BIN"
    echo "  built in $((SECONDS - t0)) s: $BIN" >&2
}

case "${1:-}" in
build) build && echo "$BIN" ;;
built) [ -x "$BIN" ] ;;
*) build && exec "$BIN" "$@" ;;
esac
