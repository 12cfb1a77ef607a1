#!/usr/bin/env bash
# controller-jobs-run.sh - end to end: Jobs really run under `cueue
# controller`, on either cluster (CUEUE_E2E_CLUSTER=embedded: `cueue
# cluster`'s simulated Job controller, scheduler and kubelets; k8s: the
# real Job controller, kube-scheduler and KWOK nodes).
#
# Two flavors of e2e/k8s/nodes.yaml's GPU nodes: h100 (nodeLabels
# nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3) and spot (nodeLabels
# node.kubernetes.io/lifecycle: spot, with a toleration of the spot nodes'
# taint cloud.example.com/spot=true:NoSchedule). ClusterQueue cq-h100 has
# 8 GPUs of h100, cq-spot 8 GPUs of spot; LocalQueues lq-h100 and lq-spot.
# Jobs, created suspended with the queue-name label:
#   h-0..h-2  in lq-h100: 2 pods of 4 GPUs each (the whole quota);
#   s-0, s-1  in lq-spot: 1 pod of 8 GPUs;
#   big       in lq-h100: 4 pods of 4 GPUs (16 > 8: never admitted).
# So one Job of each queue runs at a time, in order. h-0 and s-0 run
# $RUNTIME (default 15s: the pending checks of the others are made
# meanwhile, on a loaded machine too), the others 5s.
#
# Then preemption: s-low (8 GPUs, 600s) runs in cq-spot (preemption
# withinClusterQueue LowerPriority), s-high (8 GPUs, WorkloadPriorityClass
# high, 10s) arrives: s-low is suspended, its pod deleted, its template
# restored (no flavor nodeSelector, no toleration), s-high runs and
# completes, then s-low is admitted and runs again.
#
# Checks: a pending Job is suspended and has no pods at all (the Job
# controller makes pods only once Cueue unsuspends it), sampled all along:
# no Job has a pod before its Workload holds quota; the over-quota Job big
# never has a pod and stays suspended; each admitted Job is unsuspended with
# the flavor's nodeSelector (and, for spot, its toleration); its pods are
# bound to nodes of that flavor (H100 nodes, spot nodes) and succeed after
# their cueue.dev/simulated-runtime; the Job completes, its Workload is
# Finished, the next one is admitted; the GPUs of the non-terminal pods
# (terminating ones included) per flavor and the quota admitted per
# ClusterQueue, sampled, never exceed 8.
#
# Usage: e2e/controller-jobs-run.sh PATH_TO_cueue
# Needs: kubectl, jq, timeout.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq

RUNTIME=${RUNTIME:-15s}

dump() {
    show "$TMP/ctrl.log" "controller log" 40
    echo "---- jobs"; k get jobs -o wide 2>&1 | sed 's/^/  | /'
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
kind: ResourceFlavor
metadata: {name: spot}
spec:
  nodeLabels: {node.kubernetes.io/lifecycle: spot}
  tolerations:
  - {key: cloud.example.com/spot, operator: Equal, value: "true", effect: NoSchedule}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-h100}
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
kind: ClusterQueue
metadata: {name: cq-spot}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: spot
      resources:
      - {name: cpu, nominalQuota: "64"}
      - {name: nvidia.com/gpu, nominalQuota: "8"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq-h100, namespace: default}
spec: {clusterQueue: cq-h100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq-spot, namespace: default}
spec: {clusterQueue: cq-spot}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
YAML
pass "flavors h100 and spot, ClusterQueues and LocalQueues applied"

# gpu_job NAME LQ PODS GPUS_PER_POD [RUNTIME [PRIORITY_CLASS]]: a suspended
# Job of PODS pods (all at once) of 1 cpu and GPUS_PER_POD GPUs (as a limit,
# the usual way for an extended resource), running RUNTIME (default 5s).
gpu_job() {
    cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: $2${6:+, kueue.x-k8s.io/priority-class: $6}}
spec:
  suspend: true
  parallelism: $3
  completions: $3
  template:
    metadata:
      annotations: {cueue.dev/simulated-runtime: "${5:-5s}"}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: registry.example.com/trainer:1
        resources:
          requests: {cpu: "1"}
          limits: {nvidia.com/gpu: "$4"}
YAML
}

start_controller ctrl -v 1
wait_for 60 "controller synced" grep -q "all informers synced" "$TMP/ctrl.log"

# The over-quota Job first: it is ahead in the queue and must not block
# the others (BestEffortFIFO) nor ever get a pod.
wl_of() {   # the Workload owned by Job $1
    k get workloads -n default -o json | jq -r --arg j "$1" \
      '.items[] | select(.metadata.ownerReferences[]? | .kind == "Job" and .name == $j) | .metadata.name'
}
# A queue orders by the Workload's creationTimestamp (as Kueue), and the
# controller's creates of Workloads may complete in any order, so each
# batch waits for its Workloads before the next is made, a second later.
wls_exist() { local j; for j; do [ -n "$(wl_of "$j")" ] || return 1; done; }
gpu_job big lq-h100 4 4 | k apply -f - >/dev/null || fail "create Job big" "kubectl failed"
wait_for 60 "Workload of big created" wls_exist big
sleep 1.1   # later creationTimestamps: behind big in its queue
{ gpu_job h-0 lq-h100 2 4 "$RUNTIME"; echo ---; gpu_job s-0 lq-spot 1 8 "$RUNTIME"; } |
    k apply -f - >/dev/null || fail "create Jobs h-0 s-0" "kubectl failed"
wait_for 60 "Workloads of h-0 and s-0 created" wls_exist h-0 s-0
sleep 1.1   # later creationTimestamps: behind h-0 and s-0 in their queues
{ gpu_job h-1 lq-h100 2 4; echo ---; gpu_job s-1 lq-spot 1 8; } |
    k apply -f - >/dev/null || fail "create Jobs h-1 s-1" "kubectl failed"
wait_for 60 "Workloads of h-1 and s-1 created" wls_exist h-1 s-1
sleep 1.1
gpu_job h-2 lq-h100 2 4 | k apply -f - >/dev/null || fail "create Job h-2" "kubectl failed"
NJOBS=8   # with s-low and s-high, made later

# The sampler: pods first, then the Workloads (a Workload that held quota
# when its Job's live pod was seen still holds it, or has finished, when
# the Workloads are read a moment later; an evicted one may have released
# it meanwhile, once its pods were gone, so it is not checked: the GPU
# counts below cover it). Per sample it appends to $TMP/violations each
# Job with a live (not Succeeded or Failed) pod whose Workload holds no
# quota, has not finished and was never evicted (so never admitted),
# and to $TMP/samples "GPUS_OF_LIVE_PODS_ON_H100 ON_SPOT ADMITTED_H100
# ADMITTED_SPOT" (live: not Succeeded or Failed; by the node's flavor
# label, read once).
k get nodes -o json | jq -c '[.items[] | {key: .metadata.name, value:
    (if .metadata.labels["node.kubernetes.io/lifecycle"] == "spot" then "spot"
     elif .metadata.labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3" then "h100"
     else "other" end)}] | from_entries' >"$TMP/nodes.json"
sample() {
    local pods wls
    while :; do
        pods=$(k get pods -n default -o json 2>/dev/null) || { sleep 0.2; continue; }
        wls=$(k get workloads -n default -o json 2>/dev/null) || { sleep 0.2; continue; }
        jq -rn --argjson p "$pods" --argjson w "$wls" --slurpfile nodes "$TMP/nodes.json" '
          def gpus: [.spec.containers[].resources | (.requests // {})["nvidia.com/gpu"] //
                     (.limits // {})["nvidia.com/gpu"] // "0" | tonumber] | add // 0;
          def held: any(.status.conditions[]?; (.type == "QuotaReserved" or .type == "Finished")
                                                and .status == "True") or
                    any(.status.conditions[]?; .type == "Evicted");
          ([$w.items[] | select(held) | .metadata.ownerReferences[]? | select(.kind == "Job") | .name]) as $ok
          | ([$w.items[] | select(any(.status.conditions[]?; .type == "QuotaReserved" and .status == "True"))
              | select(all(.status.conditions[]?; .type != "Finished" or .status != "True"))]) as $adm
          | def admitted($cq): [$adm[] | select(.status.admission.clusterQueue == $cq)
              | .status.admission.podSetAssignments[].resourceUsage["nvidia.com/gpu"] // "0" | tonumber] | add // 0;
            def live($f): [$p.items[] | select(.status.phase != "Succeeded" and .status.phase != "Failed")
              | select(.spec.nodeName != null and $nodes[0][.spec.nodeName] == $f) | gpus] | add // 0;
          ([$p.items[] | select(.status.phase != "Succeeded" and .status.phase != "Failed")
             | .metadata.labels["batch.kubernetes.io/job-name"] // .metadata.labels["job-name"]
             | select(. as $j | $ok | any(. == $j) | not)] | unique
           | map("VIOLATION pod of Job \(.) without a Workload holding quota")[]),
          "\(live("h100")) \(live("spot")) \(admitted("cq-h100")) \(admitted("cq-spot"))"
        ' 2>/dev/null | while IFS= read -r l; do
            case "$l" in VIOLATION*) echo "${l#VIOLATION }" >>"$TMP/violations" ;;
                         *) echo "$l" >>"$TMP/samples" ;; esac
        done
        sleep 0.2
    done
}
: >"$TMP/violations"
sample &
SAMPLER=$!

npods() { k get pods -n default -l "batch.kubernetes.io/job-name=$1" -o json | jq '.items | length'; }
no_pods() { [ "$(npods "$1")" = 0 ]; }
suspended() { k get job "$1" -n default -o jsonpath='{.spec.suspend}' | grep -qx true; }
wl_cond() {   # Job $1's Workload has condition $2 with status $3
    local w; w=$(wl_of "$1") && [ -n "$w" ] &&
    k get workload "$w" -n default -o json |
        jq -e --arg t "$2" --arg s "$3" 'any(.status.conditions[]?; .type == $t and .status == $s)' >/dev/null
}
job_complete() {
    k get job "$1" -n default -o json | jq -e 'any(.status.conditions[]?; .type == "Complete" and .status == "True")' >/dev/null
}

# unsuspended_with JOB FLAVOR: the Job runs with the flavor's nodeSelector
# (and, for spot, its toleration) in its pod template
unsuspended_with() {
    k get job "$1" -n default -o json | jq -e --arg f "$2" '.spec.suspend == false and
        (.spec.template.spec.nodeSelector // {}) as $s |
        if $f == "h100" then $s["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
        else $s["node.kubernetes.io/lifecycle"] == "spot" and
             any(.spec.template.spec.tolerations[]?; .key == "cloud.example.com/spot" and
                 .value == "true" and .effect == "NoSchedule")
        end' >/dev/null
}
# pods_on JOB PREFIX N: N pods of the Job, each bound to a node named PREFIX*
pods_on() {
    k get pods -n default -l "batch.kubernetes.io/job-name=$1" -o json |
        jq -e --arg p "$2" --argjson n "$3" '(.items | length) == $n and
            all(.items[]; (.spec.nodeName // "") | startswith($p))' >/dev/null
}
# pods_succeeded JOB N
pods_succeeded() {
    k get pods -n default -l "batch.kubernetes.io/job-name=$1" -o json |
        jq -e --argjson n "$2" '[.items[] | select(.status.phase == "Succeeded")] | length == $n' >/dev/null
}

# ---- the first of each queue: admitted and running; the others pending, suspended, without pods
wait_for 60 "h-0 admitted" wl_cond h-0 Admitted True
wait_for 60 "s-0 admitted" wl_cond s-0 Admitted True
pend() { wl_cond "$1" QuotaReserved False && suspended "$1" && no_pods "$1"; }
# (the next in line first: they are pending only while h-0 and s-0 run)
for j in s-1 h-1 h-2 big; do
    wait_for 60 "$j pending: QuotaReserved False, suspended, no pods" pend "$j"
done
big_msg() {
    local w; w=$(wl_of big) && [ -n "$w" ] && k get workload "$w" -n default -o json |
        jq -e 'any(.status.conditions[]?; .type == "QuotaReserved" and .status == "False" and
                   (.message | test("nvidia.com/gpu")))' >/dev/null
}
wait_for 60 "big pending for want of nvidia.com/gpu" big_msg

# ---- each Job in turn: unsuspended with its flavor, pods on its nodes, done
run_one() {   # JOB FLAVOR NODE_PREFIX PODS
    local what="nodeSelector"
    [ "$2" = spot ] && what="nodeSelector and toleration"
    wait_for 120 "$1 unsuspended with flavor $2's $what" unsuspended_with "$1" "$2"
    wait_for 120 "$1: $4 pod(s) bound to $3* nodes" pods_on "$1" "$3" "$4"
    wait_for 120 "$1: pods Succeeded after their runtime" pods_succeeded "$1" "$4"
    wait_for 120 "Job $1 Complete" job_complete "$1"
    wait_for 60 "$1's Workload Finished" wl_cond "$1" Finished True
}
# the two queues run side by side; their checks are made in turn (each
# wait is long enough for the other queue's Job to finish meanwhile)
run_one h-0 h100 gpu-h100- 2
run_one s-0 spot spot-a100- 1
run_one h-1 h100 gpu-h100- 2
run_one s-1 spot spot-a100- 1
run_one h-2 h100 gpu-h100- 2

# ---- preemption of a running Job
pod_running_on() {   # JOB PREFIX: a Running pod of the Job on a node PREFIX*
    k get pods -n default -l "batch.kubernetes.io/job-name=$1" -o json |
        jq -e --arg p "$2" 'any(.items[]; .status.phase == "Running" and
            .metadata.deletionTimestamp == null and ((.spec.nodeName // "") | startswith($p)))' >/dev/null
}
gpu_job s-low lq-spot 1 8 600s | k apply -f - >/dev/null || fail "create Job s-low" "kubectl failed"
wait_for 120 "s-low runs on a spot node" pod_running_on s-low spot-a100-
gpu_job s-high lq-spot 1 8 10s high | k apply -f - >/dev/null || fail "create Job s-high" "kubectl failed"
low_stopped() {
    suspended s-low && no_pods s-low && k get job s-low -n default -o json | jq -e '
        (.spec.template.spec.nodeSelector // {} | has("node.kubernetes.io/lifecycle") | not) and
        ((.spec.template.spec.tolerations // []) | length == 0)' >/dev/null
}
wait_for 120 "s-low preempted: suspended, its pod gone, its template restored (no flavor nodeSelector or toleration)" \
    low_stopped
wait_for 60 "s-low's Workload requeued (Evicted, no quota)" wl_cond s-low QuotaReserved False
run_one s-high spot spot-a100- 1
low_again() { unsuspended_with s-low spot && pod_running_on s-low spot-a100-; }
wait_for 120 "s-low admitted again: unsuspended with the spot flavor, running on a spot node" low_again

# runtime honoured: a pod's container ran at least its simulated runtime
ran_long() {
    k get pods -n default -l "batch.kubernetes.io/job-name=h-0" -o json | jq -e --arg rt "$RUNTIME" '
        def ts: sub("\\.[0-9]+"; "") | fromdateiso8601;
        ($rt | rtrimstr("s") | tonumber) as $want |
        all(.items[]; .status.containerStatuses[0].state.terminated as $t |
            $t != null and (($t.finishedAt | ts) - ($t.startedAt | ts)) >= $want - 1)' >/dev/null
}
check "h-0's pods ran their simulated runtime ($RUNTIME)" "$(k get pods -l batch.kubernetes.io/job-name=h-0 \
    -o jsonpath='{range .items[*]}{.status.containerStatuses[0].state.terminated}{"\n"}{end}' 2>&1)" ran_long

big_untouched() { suspended big && no_pods big && wl_cond big QuotaReserved False; }
check "big is still suspended, without pods, not admitted" "$(npods big) pods" big_untouched

stop_pid "$SAMPLER"
N=$(wc -l <"$TMP/samples")
MAX=$(awk '{ for (i = 1; i <= 4; i++) if ($i > m[i]) m[i] = $i }
           END { printf "h100 pods %d, spot pods %d, cq-h100 %d, cq-spot %d", m[1], m[2], m[3], m[4] }' \
           "$TMP/samples")
if [ "$N" -gt 10 ] && awk '$1 > 8 || $2 > 8 || $3 > 8 || $4 > 8 { bad = 1 } END { exit bad }' "$TMP/samples"; then
    pass "GPUs never over quota: running pods and admitted quota ($N samples, max $MAX of 8)"
else
    fail "GPUs never over quota" "$N samples, max $MAX"
fi
awk '$1 > 0 { h = 1 } $2 > 0 { s = 1 } END { exit !(h && s) }' "$TMP/samples" 2>/dev/null \
    && pass "the sampler saw pods running on both flavors" \
    || fail "the sampler saw running pods" "none on one flavor ($MAX)"
if [ ! -s "$TMP/violations" ]; then
    pass "no Job had a pod before its Workload held quota ($N samples)"
else
    fail "no pod before admission" "$(sort -u "$TMP/violations" | head -n 5 | tr '\n' ';')"
fi
read -r c f t < <(njobs_done)
counts_ok() { [ "$c" = 6 ] && [ "$f" = 0 ] && [ "$t" = "$NJOBS" ]; }
check "6 Jobs Complete (s-low still runs), none failed, $NJOBS Jobs in all" \
    "complete $c failed $f total $t" counts_ok

kill -TERM "$CT_PID"; wait "$CT_PID"; rc=$?; CT_PID=""
[ "$rc" -eq 0 ] && pass "controller exits 0 on SIGTERM" || fail "controller exits 0 on SIGTERM" "exit $rc"
# every write was accepted (the real API server refused the queue status
# writes once: 400 on a YAML escape the embedded cluster accepts)
STOPPED=$(grep -o 'stopped: .*' "$TMP/ctrl.log" | tail -n 1)
[[ "$STOPPED" == *" write_errors=0 "* ]] && pass "no write refused by the API server (write_errors=0)" \
    || fail "no write refused" "${STOPPED:-no stop line}; $(grep -m 3 ' failed: HTTP' "$TMP/ctrl.log" | tr '\n' ';')"

e2e_finish
