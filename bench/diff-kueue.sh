#!/usr/bin/env bash
# diff-kueue.sh - Kueue as the oracle: the same objects given to Kueue and
# to Cueue on real control planes, and their decisions compared.
#
#   bench/diff-kueue.sh [--cases DIR]... [--case PATH]...
#                       [--random N --seed S [--fair-share-ratio R]]
#                       [--known FILE] [--shrink DIR] [--out DIR] [--json]
#                       [--quiet SECONDS] [--mode online|snapshot] [--keep]
#
# Two control planes (e2e/k8s/cluster.sh's etcd and kube-apiserver, with
# Kueue v0.17.0's CRDs from its module) come up side by side; for each
# scenario both are emptied, given the scenario's objects in the same
# seconds, and then Kueue's manager (bench/kueue/build.sh) starts on one
# and `cueue controller` on the other, each with the scenario's
# Configuration. Once no Workload has changed for a few seconds, the
# controllers stop and bench/kueue/diff.py compares, per Workload: admitted
# or not, ClusterQueue, flavor per pod set and resource, pod count, the
# topology assignment's domains (Topology-Aware Scheduling), evicted or
# not; per ClusterQueue: usage per flavor and resource. Nodes and Pods in
# a scenario are created with their status (no kubelet runs): the
# capacity TAS places on and the pods bound to it.
#
#   --cases DIR   every scenario in DIR: a subfolder with input.yaml (the
#                 objects, v1beta1 or v1beta2, in creation order) and an
#                 optional config.yaml (a Kueue Configuration), or a YAML
#                 file of objects with an optional Configuration document
#                 (as sim/scenarios/*.yaml)
#   --case PATH   one such scenario (repeatable)
#   --random N --seed S
#                 N scenarios of bench/kueue/gen.py (seeded, reproducible);
#                 --fair-share-ratio R: the share with fair sharing on
#                 (default 1/3)
#   --known FILE  deliberate differences (docs/kueue-differences.md lists
#                 them): lines "SCENARIO WORKLOAD-or-CLUSTERQUEUE" (shell
#                 patterns); a difference matching one is reported as
#                 known and does not fail the run
#   --shrink DIR  each random scenario that differs is shrunk
#                 (bench/kueue/shrink.py) to a minimal one that still
#                 differs, written to DIR/<scenario>/
#   --out DIR     both sides' decisions per scenario, in the JSON form of
#                 `cueue simulate -o json`: DIR/<scenario>/kueue.json and
#                 DIR/<scenario>/cueue.json
#   --json        print one summary line: {"scenarios":N,"identical":M,
#                 "differences":[...],...}
#   --quiet S     the Workload silence that ends a run (default 3)
#   --mode M      online (default): the controllers start on the queues and
#                 the pre-admitted Workloads, and the other Workloads arrive
#                 after; snapshot: every object first, then the controllers
#                 (a cold Kueue may then admit before its cohort tree is
#                 whole: docs/kueue-differences.md)
#   --keep        leave the control planes and logs (the work folder is
#                 printed)
#
# Environment: CUEUE_BIN (default build/cueue), KUEUE_BIN (default
# build.sh's manager).
# Exit status: 0 no difference (beyond --known ones), 1 differences,
# 2 bad command line, 3 a scenario could not be run.
set -u
# the whole script is one compound command, read before it runs: an edit
# of this file while a long run is under way cannot derail that run
{
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K="$ROOT/bench/kueue"
CASES=() RANDOM_N= SEED= RATIO= KNOWN= SHRINK= OUT= JSON=0 QUIET=3 KEEP=0 MODE=online
usage() { sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() { echo "diff-kueue.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --cases) [ -d "${2:-}" ] || die "--cases takes a folder"; CASES+=(--cases "$2"); shift 2 ;;
    --case) [ -e "${2:-}" ] || die "--case takes a scenario folder or file"; CASES+=(--case "$2"); shift 2 ;;
    --random) RANDOM_N=${2:-}; shift 2 ;;
    --seed) SEED=${2:-}; shift 2 ;;
    --fair-share-ratio) RATIO=${2:-}; shift 2 ;;
    --known) [ -r "${2:-}" ] || die "--known takes a readable file"; KNOWN=$2; shift 2 ;;
    --shrink) SHRINK=${2:-}; shift 2 ;;
    --out) OUT=${2:-}; shift 2 ;;
    --json) JSON=1; shift ;;
    --quiet) QUIET=${2:-}; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --mode) MODE=${2:-}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
    esac
done
if [ -n "$RANDOM_N" ]; then
    [[ $RANDOM_N =~ ^[0-9]+$ ]] || die "--random takes a count, got '$RANDOM_N'"
    [[ ${SEED:-} =~ ^[0-9]+$ ]] || die "--random needs --seed S (a number)"
fi
[ ${#CASES[@]} -gt 0 ] || [ -n "$RANDOM_N" ] || die "no scenario: give --cases, --case or --random"
[[ $QUIET =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--quiet takes seconds, got '$QUIET'"
case $MODE in online | snapshot) ;; *) die "--mode takes online or snapshot, got '$MODE'" ;; esac

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
log() { echo "$*" >&2; }
CUEUE_BIN=${CUEUE_BIN:-$ROOT/build/cueue}
[ -x "$CUEUE_BIN" ] || die "no cueue binary at $CUEUE_BIN (build it, or set CUEUE_BIN)"
"$ROOT/e2e/k8s/cluster.sh" build >&2 || die "the control plane could not be built"
"$K/build.sh" build >&2 || die "Kueue could not be built"
KUEUE_BIN=${KUEUE_BIN:-$("$K/build.sh" bin)/kueue}
SRC=$("$K/build.sh" src)

W=$(mktemp -d /tmp/diff-kueue.XXXXXX)
cleanup() {
    local s
    if [ "$KEEP" = 1 ]; then
        log "kept: $W (e2e/k8s/cluster.sh down $W/kueue-cp; ... $W/cueue-cp)"
        return
    fi
    for s in kueue cueue; do "$ROOT/e2e/k8s/cluster.sh" down "$W/$s-cp" >/dev/null 2>&1; done
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# the certificates Kueue's manager reads even when nothing calls it: its
# webhook server's (here) and its metrics server's (a hard-coded path)
. "$K/lib.sh" # selfsigned, free_port
selfsigned "$W/certs" diff-kueue || die "openssl could not make a certificate"
selfsigned /etc/kueue/metrics/certs diff-kueue || die "cannot make /etc/kueue/metrics/certs (Kueue's manager needs it)"

up() {
    "$ROOT/e2e/k8s/cluster.sh" up "$W/$1-cp" --control-plane-only >"$W/$1-up.log" 2>&1 || {
        cat "$W/$1-up.log" >&2
        return 1
    }
    kubectl --kubeconfig "$W/$1-cp/kubeconfig" apply --server-side \
        -f "$SRC/config/components/crd/bases/" >>"$W/$1-up.log" 2>&1 || {
        cat "$W/$1-up.log" >&2
        return 1
    }
    # kubectl wait refuses a CRD whose status has no conditions yet
    local i
    for i in $(seq 60); do
        kubectl --kubeconfig "$W/$1-cp/kubeconfig" wait --for condition=established \
            --timeout=30s crd --all >>"$W/$1-up.log" 2>&1 && return 0
        sleep 1
    done
    cat "$W/$1-up.log" >&2
    return 1
}
t0=$SECONDS
up kueue & a=$!
up cueue & b=$!
wait $a || die "the control plane for Kueue did not come up"
wait $b || die "the control plane for Cueue did not come up"
log "control planes up in $((SECONDS - t0)) s"

if [ -n "$RANDOM_N" ]; then
    g=(--seed "$SEED" --count "$RANDOM_N" --out "$W/random")
    [ -n "$RATIO" ] && g+=(--fair-share-ratio "$RATIO")
    "$PY" "$K/gen.py" "${g[@]}" >&2 || die "gen.py failed"
    CASES+=(--cases "$W/random")
fi

port=$(free_port) || die "no free port"
common=(--kueue-cluster "$W/kueue-cp" --cueue-cluster "$W/cueue-cp" --kueue-bin "$KUEUE_BIN"
    --cueue-bin "$CUEUE_BIN" --certs "$W/certs" --webhook-port "$port" --work "$W/work"
    --quiet "$QUIET" --mode "$MODE")
[ -n "$KNOWN" ] && common+=(--known "$KNOWN")
args=("${common[@]}" "${CASES[@]}" --summary "$W/summary.json")
[ -n "$OUT" ] && args+=(--out "$OUT")
[ "$JSON" = 1 ] && args+=(--json)
"$PY" "$K/diff.py" "${args[@]}"
rc=$?

if [ -n "$SHRINK" ] && [ "$rc" = 1 ] && [ -n "$RANDOM_N" ]; then
    mkdir -p "$SHRINK"
    for s in $("$PY" -c 'import json,sys
seen=[]
for d in json.load(open(sys.argv[1]))["differences"]:
    if d["scenario"] not in seen and not d.get("known") and not d.get("kueueNoAnswer"):
        seen.append(d["scenario"])
print(" ".join(seen))' "$W/summary.json"); do
        [ -d "$W/random/$s" ] || continue
        log "shrinking $s ..."
        # a candidate is interesting when diff.py finds a difference (exit 1)
        test_cmd="$(printf '%q ' "$PY" "$K/diff.py" "${common[@]}") --case {} >/dev/null 2>&1; [ \$? = 1 ]"
        CUEUE_BIN=$CUEUE_BIN "$PY" "$K/shrink.py" --case "$W/random/$s" --out "$SHRINK/$s" \
            --test "$test_cmd" >&2 || log "shrinking $s failed"
    done
fi
exit $rc
}
