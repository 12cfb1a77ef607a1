#!/usr/bin/env bash
# bench_fragmentation.sh - what Topology-Aware Scheduling changes on a
# fragmented GPU cluster (issue 18), on `cueue cluster` with `cueue controller`.
#
# N nodes of 8 nvidia.com/gpu (4 per rack, labelled with the rack and
# kubernetes.io/hostname) are fragmented by single-GPU pods that Kueue does
# not manage (--fill per node, default 6: 2 GPUs free on each node). Then M
# Jobs of 2 pods x 3 GPUs are submitted to a ClusterQueue whose quota takes
# them all, twice, each time on a fresh cluster:
#   tas-off  the ResourceFlavor has no topologyName: admission by quota only;
#   tas-on   the ResourceFlavor has topologyName and a Topology [rack,
#            hostname]; the Jobs ask for podset-required-topology: rack.
# After the Jobs settle it prints, per mode: the Jobs admitted (Workload
# QuotaReserved True), the admitted Jobs whose pods stay Pending unscheduled
# (no nodeName: they hold quota and run nothing), the GPUs of quota those
# stuck Jobs hold, and the Jobs pending because no topology domain fits
# (QuotaReserved False with the placement's reason). Expected: tas-off has
# stuck Jobs holding quota; tas-on has none, the Jobs wait with the reason.
#
# Usage: bench/bench_fragmentation.sh [options]
#   --nodes N    GPU nodes (default 16)
#   --jobs M     Jobs per mode (default 10)
#   --fill K     filler GPUs used per node, 0..8 (default 6)
#   --settle S   seconds to wait once every Job is admitted or pending
#                (default 3)
#   --build DIR  the build directory holding cueue (default ./build)
#   --check      exit 1 unless tas-on has 0 stuck Jobs and tas-off >= 1
#   --help       this text
# Needs bash, kubectl, jq, timeout. Runs on the embedded cluster only.
# Exit codes: 0 done (and with --check, the shape held), 1 a failure, 2 bad usage.
set -u -o pipefail
export LC_ALL=C

me=bench_fragmentation.sh
die_usage() { echo "$me: $*" >&2; echo "Run '$me --help' for the options." >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
nodes=16 njobs=10 fill=6 settle=3 build=$root/build docheck=0
isnum() { [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge "${3:-1}" ] || die_usage "$1: '$2' is not a whole number >= ${3:-1}"; }
while [ $# -gt 0 ]; do
    case "$1" in
    --nodes|--jobs|--fill|--settle|--build) [ $# -ge 2 ] || die_usage "$1 needs a value" ;;
    esac
    case "$1" in
    --nodes) isnum "$1" "$2"; nodes=$2; shift 2 ;;
    --jobs) isnum "$1" "$2"; njobs=$2; shift 2 ;;
    --fill) isnum "$1" "$2" 0; fill=$2; shift 2 ;;
    --settle) isnum "$1" "$2" 0; settle=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --check) docheck=1; shift ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die_usage "unknown option '$1'" ;;
    esac
done
[ "$fill" -le 8 ] || die_usage "--fill: $fill is more than the 8 GPUs of a node"
[ -x "$build/cueue" ] || die_usage "$build/cueue is not an executable (build the target cueue)"
CUEUE_E2E_CLUSTER=embedded
. "$root/e2e/lib.sh"
e2e_init "$build/cueue" kubectl jq

RACK=cloud.provider.com/topology-rack
HOST=kubernetes.io/hostname
GPU=nvidia.com/gpu
PODS=2 PER_POD=3

queue_yaml() { # MODE
    local topo=()
    if [ "$1" = tas-on ]; then
        topology_yaml gpu-topology "$RACK" "$HOST"
        echo ---
        topo=(--topology gpu-topology)
    fi
    quota_yaml --flavor h100 --labels '{node-group: tas}' "${topo[@]}" --resource "$GPU" \
        "cq:lq:$((njobs * PODS * PER_POD))"
}

jobs_of_mode() { # MODE
    local i
    for ((i = 0; i < njobs; i++)); do
        cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: gang-$i
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  suspend: true
  parallelism: $PODS
  completions: $PODS
  completionMode: Indexed
  template:
    metadata:
      annotations:
        cueue.dev/simulated-runtime: 1h
$([ "$1" = tas-on ] && echo "        kueue.x-k8s.io/podset-required-topology: $RACK")
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        resources: {requests: {$GPU: "$PER_POD"}, limits: {$GPU: "$PER_POD"}}
---
YAML
    done
}

# figures from one listing of Workloads and Pods: admitted, stuck, gpus, tas_pending,
# admitted with all pods created; the TAS reason is the placement's message in
# QuotaReserved False (couldn't assign flavors ...: topology "T" doesn't allow to fit ...)
# (a Workload's Job is its owner; its pods carry batch.kubernetes.io/job-name)
TAS_REASON='topology "[^"]*" doesn.t allow to fit'
figures() {
    jq -n -r --slurpfile w "$TMP/wl.json" --slurpfile p "$TMP/pods.json" --arg re "$TAS_REASON" \
        --argjson npods "$PODS" '
        def cond($t): [.status.conditions[]? | select(.type == $t)][0];
        ($p[0].items | map(select(.metadata.labels["batch.kubernetes.io/job-name"] != null))
            | group_by(.metadata.labels["batch.kubernetes.io/job-name"])
            | map({key: .[0].metadata.labels["batch.kubernetes.io/job-name"],
                   value: {n: length, bound: map(select((.spec.nodeName // "") != "")) | length}})
            | from_entries) as $byjob
        | [$w[0].items[] | {job: (.metadata.ownerReferences[0].name // ""),
             adm: (cond("QuotaReserved").status == "True"),
             msg: (cond("QuotaReserved").message // ""),
             gpus: ([.status.admission.podSetAssignments[]?.resourceUsage["nvidia.com/gpu"] // "0"
                     | tonumber] | add // 0)}] as $ws
        | ($ws | map(select(.adm))) as $a
        | ($a | map(select(($byjob[.job].bound // 0) < $npods))) as $stuck
        | [($a | length), ($stuck | length), ($stuck | map(.gpus) | add // 0),
           ($ws | map(select((.adm | not) and (.msg | test($re)))) | length),
           ($a | map(select(($byjob[.job].n // 0) >= $npods)) | length)] | @tsv'
}
snapshot() {
    k get workloads -n default -o json >"$TMP/wl.json" && k get pods -n default -o json >"$TMP/pods.json"
}
# settled: every Job is either admitted with its pods created or pending with the reason
settled() {
    local a s g t c
    snapshot || return 1
    read -r a s g t c < <(figures) || return 1
    [ "$c" -eq "$a" ] && [ $((a + t)) -eq "$njobs" ]
}

mode_on_cluster() { # MODE: on a started cluster, the figures into $TMP/MODE.fig
    local mode=$1 n i
    queue_yaml "$mode" | k apply -f - >/dev/null || { fail "$mode: queue objects" "apply failed"; return 1; }
    [ "$fill" -eq 0 ] || for ((i = 0; i < nodes; i++)); do filler_pods_yaml "gpu-$i" "$fill"; done \
        | k apply -f - >/dev/null \
        || { fail "$mode: filler pods" "apply failed"; return 1; }
    n=$((nodes * fill))
    wait_for 120 "$mode: $n filler pods hold $fill GPUs on each of $nodes nodes" fillers_running "$n" || return 1
    start_controller "ctrl-$mode" -v 1 --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 0 \
        --webhook-bind-address 0
    wait_for 60 "$mode: controller synced" grep -q "all informers synced" "$TMP/ctrl-$mode.log" || return 1
    jobs_of_mode "$mode" | k apply -f - >/dev/null || { fail "$mode: Jobs" "apply failed"; return 1; }
    wait_for 180 "$mode: $njobs Jobs settled (admitted with pods, or pending)" settled || true
    sleep "$settle"
    snapshot && figures >"$TMP/$mode.fig"
}
run_mode() { # MODE: a fresh cluster and controller for MODE, stopped after
    start_cluster --nodes "$TMP/nodes.yaml"
    apply_crds
    mode_on_cluster "$1"
    [ -z "$CT_PID" ] || stop_pid "$CT_PID"
    CT_PID=""
    stop_cluster
    CL_LISTEN=""
}

dump() {
    for l in "$TMP"/*.log; do [ -e "$l" ] && show "$l" "${l##*/}" 30; done
}

for ((i = 0; i < nodes; i++)); do
    gpu_node_yaml "gpu-$i" 8 "$RACK: rack-$((i / 4)), $HOST: gpu-$i, node-group: tas"
done >"$TMP/nodes.yaml"
for mode in tas-off tas-on; do run_mode "$mode"; done

echo
echo "fragmented cluster: $nodes nodes x 8 GPUs, $fill used per node by filler pods" \
    "($((8 - fill)) free each, $((nodes * (8 - fill))) in all); $njobs Jobs of $PODS pods x $PER_POD GPUs;" \
    "quota $((njobs * PODS * PER_POD)) GPUs"
printf '%-8s %9s %14s %16s %12s\n' mode admitted stuck-admitted gpus-held-stuck pending-tas
for mode in tas-off tas-on; do
    [ -s "$TMP/$mode.fig" ] || { fail "$mode: figures" "none (see the logs)"; continue; }
    read -r a s g t _ <"$TMP/$mode.fig"
    printf '%-8s %9s %14s %16s %12s\n' "$mode" "$a" "$s" "$g" "$t"
    eval "A_${mode/-/_}=$a S_${mode/-/_}=$s T_${mode/-/_}=$t"
done
echo
if [ "$docheck" = 1 ] && [ "$FAILS" -eq 0 ]; then
    check "tas-off: at least one admitted Job stuck with unscheduled pods (${S_tas_off:-?})" "" \
        test "${S_tas_off:-0}" -ge 1
    check "tas-on: no admitted Job stuck (${S_tas_on:-?})" "" test "${S_tas_on:-1}" -eq 0
    check "tas-on: every Job admitted and running or pending with the TAS reason" \
        "${A_tas_on:-?} + ${T_tas_on:-?} of $njobs" test "$((${A_tas_on:-0} + ${T_tas_on:-0}))" -eq "$njobs"
fi
e2e_finish
