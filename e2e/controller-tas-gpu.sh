#!/usr/bin/env bash
# controller-tas-gpu.sh - end to end: Topology-Aware Scheduling on a
# fragmented GPU cluster (issue 18's "done when"; docs/topology.md).
#
# Four nodes of 8 nvidia.com/gpu (gpu-a, gpu-b in rack r1; gpu-c, gpu-d in
# rack r2; labelled with the rack and kubernetes.io/hostname), a Topology
# [rack, hostname], a ResourceFlavor h100 with topologyName and a
# ClusterQueue of 32 GPUs in it. On each node six single-GPU pods that
# Kueue does not manage (pinned by nodeName) hold 6 GPUs: 8 GPUs are free,
# 2 per node, while the quota has 32 free.
#
# Checks:
#  - a Job of 2 pods x 2 GPUs (podset-required-topology: rack) is admitted;
#    its Workload's admission has a topologyAssignment (levels
#    [kubernetes.io/hostname], two nodes of one rack, one pod each);
#  - its pods are created with the kueue.x-k8s.io/topology gate, the
#    podset label and the workload annotation, are ungated by the
#    controller with the node selector of their domain, and run on the
#    nodes assigned, one on each;
#  - a Job of 2 pods x 3 GPUs (required rack) stays pending: QuotaReserved
#    False with the numbers ("largest free per node"), no pod created,
#    `cueue explain job/NAME` says why in numbers;
#  - the metrics: cueue_tas_quota_free 28 GPUs, cueue_tas_largest_node_free
#    2, cueue_tas_node_free 0 on the nodes the first Job took and 2 on the
#    others, cueue_tas_placeable 0 for the waiting shape of 3 GPUs;
#  - one filler pod deleted on each node of the other rack (3 GPUs free on
#    each): the 3-GPU Job is admitted there and its pods run, one per node.
#
# Usage: e2e/controller-tas-gpu.sh PATH_TO_cueue
# Needs: kubectl, jq, curl, timeout.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq curl

dump() {
    show "$TMP/ctrl.log" "controller log" 60
    show "$TMP/cluster.log" "cluster log" 20
    k get pods -A -o wide 2>&1 | tail -40 | sed 's/^/  | /'
    k get workloads -A -o yaml 2>&1 | tail -80 | sed 's/^/  | /'
}

RACK=cloud.provider.com/topology-rack
HOST=kubernetes.io/hostname
NODES="gpu-a gpu-b gpu-c gpu-d"
for n in gpu-a:r1 gpu-b:r1 gpu-c:r2 gpu-d:r2; do
    gpu_node_yaml "${n%:*}" 8 "$RACK: ${n#*:}, $HOST: ${n%:*}, node-group: tas"
done >"$TMP/nodes.yaml"
K8S_NODES=$TMP/nodes.yaml
start_cluster --nodes "$TMP/nodes.yaml"
apply_crds

{
    topology_yaml gpu-topology "$RACK" "$HOST"
    echo ---
    quota_yaml --flavor h100 --labels '{node-group: tas}' --topology gpu-topology \
        --resource nvidia.com/gpu cq:lq:32
} | k apply -f - >/dev/null || fail "TAS queue objects" "apply failed"

# six single-GPU pods on each node, not Kueue's (bound by nodeName)
for n in $NODES; do filler_pods_yaml "$n" 6; done | k apply -f - >/dev/null \
    || fail "filler pods" "apply failed"
wait_for 90 "24 filler pods hold 6 GPUs on each node" fillers_running 24

start_controller ctrl -v 2 --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 0 \
    --webhook-bind-address 0
wait_for 60 "controller synced" grep -q "all informers synced" "$TMP/ctrl.log"
use_controller "$TMP/ctrl.log"

gang() { # NAME GPUS: a Job of 2 pods of GPUS GPUs, all in one rack
    cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  suspend: true
  parallelism: 2
  completions: 2
  completionMode: Indexed
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: $RACK
        cueue.dev/simulated-runtime: 10m
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        resources: {requests: {nvidia.com/gpu: "$2"}, limits: {nvidia.com/gpu: "$2"}}
YAML
}
wl_of() { k get workloads -n default -o json | jq -r --arg j "$1" \
    '.items[] | select(.metadata.ownerReferences[]?.name == $j) | .metadata.name' | head -n 1; }
wl_json() { local w; w=$(wl_of "$1"); [ -n "$w" ] && k get workload -n default "$w" -o json; }
admitted() { wl_json "$1" | jq -e 'any(.status.conditions[]?; .type == "Admitted" and .status == "True")'; }
# the nodes the pods of Job $1 run on, sorted, space separated
job_nodes() { k get pods -n default -l batch.kubernetes.io/job-name="$1" -o json \
    | jq -r '[.items[] | select(.status.phase == "Running") | .spec.nodeName] | sort | join(" ")'; }
qjq() { jq -e "$@" >/dev/null 2>&1; } # a check that prints nothing
two_running() { [ "$(job_nodes "$1" | wc -w)" -eq 2 ]; }

# ---- a 2 x 2 GPU gang fits: one pod on each node of a rack ----
gang small 2 | k apply -f - >/dev/null || fail "Job small" "create failed"
wait_for 60 "Job small (2 pods x 2 GPUs, required rack) is admitted" admitted small
ta=$(wl_json small | jq -c '.status.admission.podSetAssignments[0].topologyAssignment')
check "its Workload has a topologyAssignment: hostname level, 2 domains of 1 pod ($ta)" "$ta" \
    qjq '.levels == ["kubernetes.io/hostname"] and
           ([.slices[] | .domainCount] | add) == 2' <<<"$ta"
wait_for 60 "its 2 pods run" two_running small
SMALL_NODES=$(job_nodes small)
pods=$(k get pods -n default -l batch.kubernetes.io/job-name=small -o json)
check "on two different nodes of one rack ($SMALL_NODES)" "$SMALL_NODES" \
    bash -c "case '$SMALL_NODES' in 'gpu-a gpu-b'|'gpu-c gpu-d') exit 0;; *) exit 1;; esac"
check "the pods carry the podset label, the workload annotation and their node selector, ungated" \
    "$(jq -c '[.items[] | {l: .metadata.labels, a: .metadata.annotations, s: .spec.nodeSelector, g: .spec.schedulingGates}]' <<<"$pods")" \
    qjq --arg w "$(wl_of small)" '[.items[] |
        .metadata.labels["kueue.x-k8s.io/podset"] == "main" and
        .metadata.annotations["kueue.x-k8s.io/workload"] == $w and
        .spec.nodeSelector["kubernetes.io/hostname"] == .spec.nodeName and
        ((.spec.schedulingGates // []) | length) == 0] | all' <<<"$pods"
check "the controller logged the ungating" "$(grep -c 'ungated for topology' "$TMP/ctrl.log")" \
    grep -q "Pod default/small-.*ungated for topology domain" "$TMP/ctrl.log"

# ---- a 2 x 3 GPU gang does not fit on any node: pending with numbers ----
gang big 3 | k apply -f - >/dev/null || fail "Job big" "create failed"
big_pending() { wl_json big | jq -e 'any(.status.conditions[]?; .type == "QuotaReserved" and
    .status == "False" and (.message | contains("largest free per node 2")))'; }
wait_for 60 "Job big (2 pods x 3 GPUs) stays pending: QuotaReserved False, largest free per node 2" \
    big_pending
msg=$(wl_json big | jq -r '.status.conditions[] | select(.type == "QuotaReserved") | .message')
echo "      pending message: $msg"
sleep 2
check "no pod of Job big is created" "$(k get pods -n default -l batch.kubernetes.io/job-name=big -o name)" \
    test -z "$(k get pods -n default -l batch.kubernetes.io/job-name=big -o name)"
check "Job big stays suspended" "" \
    test "$(k get job big -n default -o jsonpath='{.spec.suspend}')" = true
"$CUEUE" explain job/big >"$TMP/explain" 2>&1
check "cueue explain job/big says why, in numbers" "$(cat "$TMP/explain")" \
    grep -q "largest free per node 2" "$TMP/explain"

# ---- metrics ----
scrape || fail "scrape" "no /metrics"
m() { metric "$@"; }
OTHER=$(for n in $NODES; do case " $SMALL_NODES " in *" $n "*) ;; *) printf '%s ' "$n";; esac; done)
check "cueue_tas_quota_free{flavor=h100} is 28 GPUs" "$(m cueue_tas_quota_free flavor=\"h100\" resource=\"nvidia.com/gpu\")" \
    test "$(m cueue_tas_quota_free flavor=\"h100\" resource=\"nvidia.com/gpu\")" = 28
check "cueue_tas_largest_node_free is 2 GPUs" "$(m cueue_tas_largest_node_free flavor=\"h100\" resource=\"nvidia.com/gpu\")" \
    test "$(m cueue_tas_largest_node_free flavor=\"h100\" resource=\"nvidia.com/gpu\")" = 2
nf=""
for n in $NODES; do nf+="$n=$(m cueue_tas_node_free flavor=\"h100\" node=\"$n\" resource=\"nvidia.com/gpu\") "; done
want=""
for n in $NODES; do case " $SMALL_NODES " in *" $n "*) want+="$n=0 ";; *) want+="$n=2 ";; esac; done
check "cueue_tas_node_free: 0 on Job small's nodes, 2 on the others" "$nf" test "$nf" = "$want"
check "cueue_tas_placeable for the waiting 3-GPU shape is 0" \
    "$(m cueue_tas_placeable flavor=\"h100\" resource=\"nvidia.com/gpu\")" \
    test "$(m cueue_tas_placeable flavor=\"h100\" resource=\"nvidia.com/gpu\")" = 0

# ---- one filler pod gone on each node of the other rack: 3 GPUs free there ----
for n in $OTHER; do k delete pod -n default "fill-$n-1" --wait=false >/dev/null; done
wait_for 60 "Job big is admitted once two nodes of a rack free 3 GPUs each" admitted big
wait_for 60 "its 2 pods run" two_running big
BIG_NODES=$(job_nodes big)
check "on the nodes that were freed ($BIG_NODES)" "$BIG_NODES" test "$BIG_NODES " = "$OTHER"

e2e_finish
