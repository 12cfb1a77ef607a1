#!/usr/bin/env bash
# controller-pods.sh - end to end: plain Pods and pod groups (Kueue's pod
# integration) under `cueue controller`, on either cluster.
#
# Pods are created as Kueue's pod webhook leaves them (so the suite needs
# no webhook): the queue-name label, kueue.x-k8s.io/managed=true, the
# kueue.x-k8s.io/admission scheduling gate and the kueue.x-k8s.io/managed
# finalizer; a group adds kueue.x-k8s.io/pod-group-name and the
# pod-group-total-count annotation. One flavor h100 (the H100 nodes'
# label), ClusterQueue cq of 8 GPUs, LocalQueue lq; the Configuration's
# integrations.frameworks enables "pod".
#
#   g1: 4 pods of 1 GPU (15s): one Workload "g1" (is-group-workload, one
#       pod set of 4, an ownerReference per pod), admitted whole; every pod
#       ungated with the flavor's nodeSelector, bound to an H100 node,
#       Succeeded; the Workload Finished "Pods succeeded: 4/4."; the pods'
#       finalizers removed; with waitForPodsReady, PodsReady True once its
#       pods are Ready.
#   g2: 6 pods of 1 GPU, created while g1 runs (4 + 6 > 8): no Workload
#       before the sixth pod exists; then pending, every pod gated and
#       unbound, sampled all along: no g2 pod is ungated or bound while g2's
#       Workload holds no quota (never some of its pods running while
#       others wait); admitted once g1 finished, all 6 run.
#   single: one pod: Workload pod-single-<hash>, runs, Finished Succeeded.
#   failing: a running single pod whose status is set Failed: Workload
#       Finished with reason Failed and the pod's message; finalizer gone.
#   g4 (2 pods): one pod set Failed: the group waits (not Finished, the
#       pod keeps its finalizer); a replacement pod is ungated at once and
#       owned by the Workload, the failed pod's finalizer removed; Finished
#       "Pods succeeded: 2/2.".
#   g5: 3 pods for a total count of 2: a Workload of 2, the excess deleted.
#   g3 (2 pods, 600s): runs; its Workload deactivated (evicted): both pods
#       deleted, the quota released (the Workload, owned only by the pods,
#       is then garbage-collected).
#   lone: a running single pod; its Workload deleted: the pod is stopped
#       (deleted, its finalizer removed).
#
# Usage: e2e/controller-pods.sh PATH_TO_cueue
# Needs: kubectl, jq, timeout.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq

dump() {
    show "$TMP/ctrl.log" "controller log" 60
    echo "---- pods"; k get pods -o wide 2>&1 | sed 's/^/  | /' | tail -n 40
    echo "---- workloads"; k get workloads -o wide 2>&1 | sed 's/^/  | /'
    show "$TMP/violations" "violations" 20
}

start_cluster
apply_crds
k apply -f - >/dev/null <<'YAML' || { fail "apply quota setup" "kubectl failed"; e2e_finish; }
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: "64"}
      - {name: nvidia.com/gpu, nominalQuota: "8"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
YAML
pass "flavor h100, ClusterQueue cq (8 GPUs), LocalQueue lq applied"

# pod NAME [GROUP TOTAL] [RUNTIME]: a managed pod of 1 cpu and 1 GPU as the
# pod webhook leaves it; RUNTIME "" runs until deleted
pod() {
    local name=$1 group=${2:-} total=${3:-} rt=${4-5s} gl="" tl="" rl=""
    [ -n "$group" ] && gl="    kueue.x-k8s.io/pod-group-name: $group"
    [ -n "$total" ] && tl="    kueue.x-k8s.io/pod-group-total-count: \"$total\""
    [ -n "$rt" ] && rl="    cueue.dev/simulated-runtime: \"$rt\""
    cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $name
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: lq
    kueue.x-k8s.io/managed: "true"
$gl
  annotations:
$tl
$rl
    cueue.dev/test: pods
  finalizers: [kueue.x-k8s.io/managed]
spec:
  restartPolicy: Never
  schedulingGates: [{name: kueue.x-k8s.io/admission}]
  containers:
  - name: main
    image: registry.example.com/trainer:1
    resources:
      requests: {cpu: "1", nvidia.com/gpu: "1"}
      limits: {nvidia.com/gpu: "1"}
YAML
}
group() {   # NAME COUNT RUNTIME: the pods NAME-0..COUNT-1 of group NAME
    local i
    for i in $(seq 0 $(($2 - 1))); do pod "$1-$i" "$1" "$2" "$3"; echo ---; done
}

# the pod integration is not among Kueue's default frameworks;
# waitForPodsReady reads the pods' Ready conditions
cat >"$TMP/config.yaml" <<'YAML'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [batch/job, pod]
waitForPodsReady: {timeout: 10m}
YAML
start_controller ctrl -v 2 --config "$TMP/config.yaml" --webhook-bind-address 0 \
    --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 0
wait_for 60 "controller synced" grep -q "all informers synced" "$TMP/ctrl.log"
use_controller "$TMP/ctrl.log"

wl_json() { k get workload "$1" -n default -o json 2>/dev/null; }
wl_cond() {   # WORKLOAD TYPE STATUS
    wl_json "$1" | jq -e --arg t "$2" --arg s "$3" \
        'any(.status.conditions[]?; .type == $t and .status == $s)' >/dev/null
}
gpods() { k get pods -n default -l "kueue.x-k8s.io/pod-group-name=$1" -o json; }
# all_run GROUP N: N pods, each ungated, with the h100 nodeSelector, bound to an H100 node
all_run() {
    gpods "$1" | jq -e --argjson n "$2" '(.items | length) == $n and all(.items[];
        ([.spec.schedulingGates[]?.name] | index("kueue.x-k8s.io/admission") | not) and
        .spec.nodeSelector["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3" and
        ((.spec.nodeName // "") | startswith("gpu-h100-")))' >/dev/null
}
all_succeeded() {
    gpods "$1" | jq -e --argjson n "$2" '[.items[] | select(.status.phase == "Succeeded")] | length == $n' >/dev/null
}
no_fins() {   # GROUP: none of its pods keeps the managed finalizer
    gpods "$1" | jq -e 'all(.items[]; (.metadata.finalizers // []) | index("kueue.x-k8s.io/managed") | not)' >/dev/null
}

# ---- the sampler: no pod of g2 ungated or bound while g2's Workload holds no quota
: >"$TMP/violations"
sample() {
    local pods wl
    while :; do
        pods=$(k get pods -n default -l kueue.x-k8s.io/pod-group-name=g2 -o json 2>/dev/null) || { sleep 0.2; continue; }
        wl=$(k get workload g2 -n default -o json 2>/dev/null || echo '{}')
        jq -rn --argjson p "$pods" --argjson w "$wl" '
          ($w | any(.status.conditions[]?; (.type == "QuotaReserved" or .type == "Finished")
                                           and .status == "True")) as $held
          | if $held then empty else
              $p.items[] | select(([.spec.schedulingGates[]?.name] | index("kueue.x-k8s.io/admission") | not)
                                  or .spec.nodeName != null)
              | "pod \(.metadata.name) ungated or bound while Workload g2 holds no quota"
            end' 2>/dev/null >>"$TMP/violations"
        sleep 0.2
    done
}
sample &
SAMPLER=$!

# ---- g1: admitted whole, runs, finishes
group g1 4 15s | k apply -f - >/dev/null || fail "create group g1" "kubectl failed"
g1_shape() {
    wl_json g1 | jq -e '.metadata.annotations["kueue.x-k8s.io/is-group-workload"] == "true" and
        (.spec.podSets | length) == 1 and .spec.podSets[0].count == 4 and .spec.queueName == "lq" and
        ([.metadata.ownerReferences[] | select(.kind == "Pod")] | length) == 4' >/dev/null
}
wait_for 60 "Workload g1: a group Workload of one pod set of 4, owned by its 4 pods" g1_shape
wait_for 60 "g1 admitted" wl_cond g1 Admitted True
wait_for 90 "g1: its 4 pods ungated with the h100 nodeSelector and bound to H100 nodes" all_run g1 4
wait_for 60 "g1: PodsReady True once its pods are Ready (waitForPodsReady)" wl_cond g1 PodsReady True

# ---- g2 (6 pods): no Workload until complete; then pending, gated, whole
for i in 0 1 2 3 4; do pod "g2-$i" g2 6 5s; echo ---; done | k apply -f - >/dev/null ||
    fail "create 5 pods of g2" "kubectl failed"
sleep 3
check "g2 incomplete (5 of 6 pods): no Workload" "$(k get workload g2 -n default 2>&1)" \
    bash -c "! kubectl --kubeconfig '$KC' get workload g2 -n default >/dev/null 2>&1"
pod g2-5 g2 6 5s | k apply -f - >/dev/null || fail "create pod g2-5" "kubectl failed"
wait_for 60 "g2 complete: Workload g2 created" wl_json g2
wait_for 60 "g2 pending (QuotaReserved False): 4 + 6 GPUs > 8" wl_cond g2 QuotaReserved False
g2_gated() {
    gpods g2 | jq -e '(.items | length) == 6 and all(.items[];
        ([.spec.schedulingGates[]?.name] | index("kueue.x-k8s.io/admission")) and .spec.nodeName == null)' >/dev/null
}
check "g2 pending: all 6 pods gated, none bound" "$(gpods g2 | jq -c '[.items[] | .spec.nodeName]')" g2_gated
# what a user asks about the waiting group: explain by a pod, the pending
# list with its owner, the pending metric
"$CUEUE" explain pod/g2-3 >"$TMP/out" 2>"$TMP/err"; rc=$?
check "cueue explain pod/g2-3 explains the group's Workload g2 (pending for GPUs)" \
    "rc $rc: $(head -c 600 "$TMP/out") $(cat "$TMP/err")" \
    eval "[ $rc -eq 0 ] && grep -qx '(Pod default/g2-3: its Workload default/g2)' '$TMP/out' &&
          grep -q '^Workload default/g2: pending' '$TMP/out' && grep -q 'nvidia.com/gpu' '$TMP/out'"
"$CUEUE" queue pending -o wide >"$TMP/out" 2>&1
check "cueue queue pending -o wide lists g2 with a pod of its group as owner" "$(cat "$TMP/out")" \
    grep -Eq "^0 +default/g2 .* Pod/g2-[0-5] " "$TMP/out"
g2_metric() {
    scrape || return 1
    local a i
    a=$(metric kueue_pending_workloads 'cluster_queue="cq"' 'status="active"')
    i=$(metric kueue_pending_workloads 'cluster_queue="cq"' 'status="inadmissible"')
    [ $((${a:-0} + ${i:-0})) = 1 ]
}
wait_for 30 "kueue_pending_workloads of cq (active + inadmissible) counts g2" g2_metric

wait_for 90 "g1: its 4 pods Succeeded" all_succeeded g1 4
g1_done() {
    wl_json g1 | jq -e 'any(.status.conditions[]?; .type == "Finished" and .status == "True" and
        .reason == "Succeeded" and .message == "Pods succeeded: 4/4.")' >/dev/null
}
wait_for 60 "g1 Finished: Succeeded, \"Pods succeeded: 4/4.\"" g1_done
wait_for 60 "g1: the managed finalizer removed from its pods" no_fins g1

wait_for 60 "g2 admitted after g1 finished" wl_cond g2 Admitted True
wait_for 90 "g2: all 6 pods ungated and bound to H100 nodes" all_run g2 6
wait_for 90 "g2: its 6 pods Succeeded" all_succeeded g2 6
wait_for 60 "g2 Finished" wl_cond g2 Finished True
stop_pid "$SAMPLER"
check "no pod of g2 was ever ungated or bound before its Workload held quota" \
    "$(head -n 5 "$TMP/violations")" test ! -s "$TMP/violations"

# ---- a single pod
pod single | k apply -f - >/dev/null || fail "create pod single" "kubectl failed"
wl_of_pod() {   # the Workload a pod controls
    k get workloads -n default -o json | jq -r --arg p "$1" '.items[] |
        select(any(.metadata.ownerReferences[]?; .kind == "Pod" and .name == $p and .controller == true))
        | .metadata.name'
}
single_wl() { wl_of_pod single | grep -q '^pod-single-[0-9a-f]\{5\}$'; }
wait_for 60 "single: Workload pod-single-<hash>, controlled by the pod" single_wl
W=$(wl_of_pod single)
single_pset() {
    wl_json "$W" | jq -e '(.spec.podSets | length) == 1 and .spec.podSets[0].name == "main" and
        .spec.podSets[0].count == 1' >/dev/null
}
check "single: one pod set main of 1" "$(wl_json "$W" | jq -c .spec.podSets 2>&1 | head -c 300)" single_pset
single_ok() {
    k get pod single -n default -o json | jq -e '.status.phase == "Succeeded"' >/dev/null &&
        wl_cond "$W" Finished True
}
wait_for 90 "single: ran, Succeeded, its Workload Finished" single_ok

# ---- a failing pod
pod failing "" "" "" | k apply -f - >/dev/null || fail "create pod failing" "kubectl failed"
running() { k get pod "$1" -n default -o json | jq -e '.status.phase == "Running"' >/dev/null; }
wait_for 90 "failing: runs" running failing
k patch pod failing -n default --subresource=status --type=merge \
    -p '{"status":{"phase":"Failed","message":"exit 3"}}' >/dev/null ||
    fail "set pod failing Failed" "kubectl failed"
W=$(wl_of_pod failing)
failed_done() {
    wl_json "$W" | jq -e 'any(.status.conditions[]?; .type == "Finished" and .status == "True" and
        .reason == "Failed" and .message == "exit 3")' >/dev/null
}
wait_for 60 "failing: its Workload Finished, reason Failed, the pod's message" failed_done
fin_gone() {
    k get pod "$1" -n default -o json 2>/dev/null |
        jq -e '(.metadata.finalizers // []) | index("kueue.x-k8s.io/managed") | not' >/dev/null
}
wait_for 60 "failing: the managed finalizer removed" fin_gone failing

# ---- a failed pod of a group, and its replacement
group g4 2 20s | k apply -f - >/dev/null || fail "create group g4" "kubectl failed"
wait_for 90 "g4: both pods run" all_run g4 2
k patch pod g4-0 -n default --subresource=status --type=merge \
    -p '{"status":{"phase":"Failed","message":"exit 1"}}' >/dev/null ||
    fail "set pod g4-0 Failed" "kubectl failed"
sleep 2
check "g4: one pod Failed, the group not finished (it waits for a replacement)" \
    "$(wl_json g4 | jq -c '.status.conditions' 2>&1 | head -c 300)" \
    bash -c "! kubectl --kubeconfig '$KC' get workload g4 -n default -o json |
        jq -e 'any(.status.conditions[]?; .type == \"Finished\" and .status == \"True\")' >/dev/null"
check "g4: the failed pod keeps its finalizer until it is replaced" "" bash -c \
    "kubectl --kubeconfig '$KC' get pod g4-0 -n default -o json | jq -e '.metadata.finalizers | index(\"kueue.x-k8s.io/managed\")' >/dev/null"
pod g4-r g4 2 5s | k apply -f - >/dev/null || fail "create pod g4-r" "kubectl failed"
repl_runs() {
    k get pod g4-r -n default -o json | jq -e '([.spec.schedulingGates[]?.name] |
        index("kueue.x-k8s.io/admission") | not) and ((.spec.nodeName // "") | startswith("gpu-h100-"))' >/dev/null
}
wait_for 60 "g4: the replacement g4-r ungated at once (the Workload is admitted) and bound" repl_runs
wait_for 60 "g4: the replaced pod's finalizer removed" fin_gone g4-0
repl_owned() {
    wl_json g4 | jq -e 'any(.metadata.ownerReferences[]; .kind == "Pod" and .name == "g4-r")' >/dev/null
}
wait_for 60 "g4: the replacement added to the Workload's ownerReferences" repl_owned
g4_done() {
    wl_json g4 | jq -e 'any(.status.conditions[]?; .type == "Finished" and .status == "True" and
        .message == "Pods succeeded: 2/2.")' >/dev/null
}
wait_for 90 "g4 Finished once its 2 live pods succeeded: \"Pods succeeded: 2/2.\"" g4_done

# ---- excess pods: 3 pods in a group of 2
group g5 3 5s | sed 's/pod-group-total-count: "3"/pod-group-total-count: "2"/' |
    k apply -f - >/dev/null || fail "create group g5" "kubectl failed"
g5_two() {
    [ "$(gpods g5 | jq '[.items[] | select(.metadata.deletionTimestamp == null)] | length')" = 2 ] &&
        wl_json g5 | jq -e '.spec.podSets[0].count == 2' >/dev/null
}
wait_for 60 "g5: 3 pods for a total of 2: Workload of 2, the excess pod deleted" g5_two
wait_for 90 "g5 Finished" wl_cond g5 Finished True

# ---- eviction: g3 deactivated while running
group g3 2 600s | k apply -f - >/dev/null || fail "create group g3" "kubectl failed"
wait_for 90 "g3: both pods run" all_run g3 2
k patch workload g3 -n default --type=merge -p '{"spec":{"active":false}}' >/dev/null ||
    fail "deactivate g3" "kubectl failed"
g3_gone() { [ "$(gpods g3 | jq '.items | length')" = 0 ]; }
wait_for 90 "g3 evicted: its pods deleted (finalizers removed)" g3_gone
# its Workload, owned by nothing but the pods, goes with them (garbage
# collection), or is left released
g3_released() { ! wl_json g3 >/dev/null || wl_cond g3 QuotaReserved False; }
wait_for 60 "g3: quota released (its Workload released, or collected with its pods)" g3_released

# ---- deletion: a running pod's Workload deleted
pod lone "" "" "" | k apply -f - >/dev/null || fail "create pod lone" "kubectl failed"
wait_for 90 "lone: runs" running lone
W=$(wl_of_pod lone)
k delete workload "$W" -n default --wait=false >/dev/null || fail "delete lone's Workload" "kubectl failed"
lone_gone() { ! k get pod lone -n default >/dev/null 2>&1; }
wait_for 90 "lone: its Workload deleted, the pod stopped (deleted, finalizer removed)" lone_gone

e2e_finish
