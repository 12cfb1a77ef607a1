#!/usr/bin/env bash
# addons.sh - controllers of other projects that run on the real control
# plane of cluster.sh for the integration tests (JobSet, LeaderWorkerSet),
# each built from its Go module into the cache like the rest. One file per
# addon, e2e/k8s/addon-NAME.sh, defines addon_build, addon_built and
# addon_up DIR (apply its CRDs, start its controller against DIR/kubeconfig,
# wait until it is ready; its pid in DIR/pids-NAME, its log DIR/NAME.log).
#
#   e2e/k8s/addons.sh list              the addons
#   e2e/k8s/addons.sh build [NAME...]   build them (all by default); a
#                                       no-op once built
#   e2e/k8s/addons.sh built NAME        exit 0 when NAME is built
#   e2e/k8s/addons.sh up DIR NAME...    start them on the cluster in DIR
#   e2e/k8s/addons.sh down DIR [NAME...] stop them (all by default;
#                                       cluster.sh down does it too)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${CUEUE_K8S_CACHE:-$HOME/.cache/cueue-k8s}
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

die() { echo "addons.sh: $*" >&2; exit 1; }

all() {
    local f
    for f in "$HERE"/addon-*.sh; do
        [ -e "$f" ] || continue
        f=${f##*/addon-}
        echo "${f%.sh}"
    done
}

# load NAME: its functions, in a subshell of the caller's
load() {
    [ -r "$HERE/addon-$1.sh" ] || die "unknown addon $1 ($(all | tr '\n' ' '))"
    # shellcheck disable=SC1090
    . "$HERE/addon-$1.sh"
}

stop_addon() {
    local dir=$1 name=$2 p
    p=$(cat "$dir/pids-$name" 2>/dev/null) || return 0
    [ -n "$p" ] && kill "$p" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
    rm -f "$dir/pids-$name"
}

case ${1:-} in
list) all ;;
build)
    shift
    names=${*:-$(all)}
    for n in $names; do (load "$n" && addon_build) || exit 1; done ;;
built) [ $# -ge 2 ] || die "usage: addons.sh built NAME"; (load "$2" && addon_built) ;;
up)
    [ $# -ge 3 ] || die "usage: addons.sh up DIR NAME..."
    DIR=$(cd "$2" && pwd) || die "no folder $2"
    shift 2
    for n in "$@"; do (load "$n" && addon_up "$DIR") || exit 1; done ;;
down)
    [ $# -ge 2 ] || die "usage: addons.sh down DIR [NAME...]"
    DIR=$(cd "$2" 2>/dev/null && pwd) || exit 0
    shift 2
    names=${*:-$(all)}
    for n in $names; do stop_addon "$DIR" "$n"; done ;;
-h|--help|help)
    sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' ;;
*) die "usage: addons.sh list|build [NAME...]|built NAME|up DIR NAME...|down DIR [NAME...]" ;;
esac
