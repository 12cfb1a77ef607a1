#!/usr/bin/env bash
# controller-jobset.sh - end to end: JobSets (Kueue's jobset.x-k8s.io/jobset
# integration) under `cueue controller` with integrations.frameworks
# [batch/job, jobset.x-k8s.io/jobset].
#
# One ClusterQueue cq (cpu and nvidia.com/gpu in one resource group) with two
# flavors in order: general (nodeLabels node.example.com/pool: general; no
# GPUs) and h100 (nodeLabels nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3;
# 8 GPUs). A JobSet of 2 replicated Jobs: driver (1 pod of 1 cpu: flavor
# general) and workers (2 Jobs of 2 pods of 2 GPUs: 8 GPUs, flavor h100).
#
# Checks: the Workload Kueue would create (its name, a pod set per
# replicated Job with replicas x parallelism pods, the owner reference);
# train-a is admitted and unsuspended with each replicated Job's own
# flavor node selector; train-b, the same, waits over quota, suspended, with
# Kueue's pending message; train-a finishing (Completed) finishes its
# Workload with the JobSet's message and train-b is admitted; a JobSet of 19
# replicated Jobs (a Workload has at most 18 pod sets) is reported on itself
# (a Warning Event) and gets no Workload.
#
# On the real control plane (CUEUE_E2E_CLUSTER=k8s) the JobSet controller
# runs (the jobset addon, e2e/k8s/addon-jobset.sh): the pods of train-a are
# bound to nodes of their flavor and train-a completes by itself. The
# embedded cluster has no JobSet controller: JobSet's CRD is applied (from
# its Go module when it is downloaded, else a schemaless one of the same
# names) and train-a's Completed condition is written here.
#
# Usage: e2e/controller-jobset.sh PATH_TO_cueue
# Needs: kubectl, jq, timeout.
set -u -o pipefail
E2E_ADDONS=jobset
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq

dump() {
    show "$TMP/ctrl.log" "controller log" 60
    echo "---- jobsets"; k get jobsets -o json 2>&1 | jq -c '.items[] | {n: .metadata.name,
        suspend: .spec.suspend, c: [.status.conditions[]? | {type, status}]}' | sed 's/^/  | /'
    echo "---- workloads"; k get workloads -o wide 2>&1 | sed 's/^/  | /'
    echo "---- pods"; k get pods -o wide 2>&1 | sed 's/^/  | /' | tail -n 20
    [ -e "$TMP/k8s/jobset.log" ] && show "$TMP/k8s/jobset.log" "JobSet manager log" 20
}

start_cluster
apply_crds
if [ "$E2E_CLUSTER" = embedded ]; then
    src=$( (cd "$ROOT/e2e/k8s/mod/jobset" && GOFLAGS=-mod=readonly go list -m -f '{{.Dir}}' \
        sigs.k8s.io/jobset) 2>/dev/null)
    crd=$src/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml
    if [ -n "$src" ] && [ -r "$crd" ]; then
        k create -f "$crd" >/dev/null 2>"$TMP/crd.err" # too big for apply's annotation
    else
        k apply -f - >/dev/null 2>"$TMP/crd.err" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: jobsets.jobset.x-k8s.io}
spec:
  group: jobset.x-k8s.io
  names: {kind: JobSet, listKind: JobSetList, plural: jobsets, singular: jobset}
  scope: Namespaced
  versions:
  - name: v1alpha2
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
YAML
    fi
    check "JobSet's CRD applied" "$(cat "$TMP/crd.err")" k get crd jobsets.jobset.x-k8s.io -o name
fi

k apply -f - >/dev/null <<'YAML' || { fail "apply quota setup" "kubectl failed"; e2e_finish; }
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: general}
spec:
  nodeLabels: {node.example.com/pool: general}
---
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
    - name: general
      resources:
      - {name: cpu, nominalQuota: "8"}
      - {name: nvidia.com/gpu, nominalQuota: "0"}
    - name: h100
      resources:
      - {name: cpu, nominalQuota: "16"}
      - {name: nvidia.com/gpu, nominalQuota: "8"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
YAML
pass "flavors general and h100, ClusterQueue cq and LocalQueue lq applied"

cat >"$TMP/config.yaml" <<'YAML'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [batch/job, jobset.x-k8s.io/jobset]
YAML
start_controller ctrl --config "$TMP/config.yaml" -v 1 --metrics-bind-address 127.0.0.1:0 \
    --health-probe-bind-address 0
wait_for 15 "controller serves metrics" grep -q "metrics on [^ ]* (/metrics)" "$TMP/ctrl.log"
use_controller "$TMP/ctrl.log"
# explain REF [-o json]: cueue explain with stdout in $TMP/out, $RC
explain() { "$CUEUE" explain "$@" >"$TMP/out" 2>"$TMP/err"; RC=$?; }

# jobset NAME RUNTIME [NJOBS]: a suspended JobSet in lq: driver (1 pod of 1
# cpu) and workers (2 Jobs of 2 pods of 1 cpu and 2 GPUs); NJOBS > 2 adds
# replicated Jobs extra-2.. (one pod of 1 cpu each)
jobset() {
    local i
    cat <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: $1
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  suspend: true
  replicatedJobs:
  - name: driver
    template:
      spec:
        parallelism: 1
        completions: 1
        template:
          metadata:
            annotations: {cueue.dev/simulated-runtime: "$2"}
          spec:
            restartPolicy: Never
            containers:
            - {name: main, image: registry.example.com/driver:1, resources: {requests: {cpu: "1"}}}
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          metadata:
            annotations: {cueue.dev/simulated-runtime: "$2"}
          spec:
            restartPolicy: Never
            containers:
            - name: main
              image: registry.example.com/trainer:1
              resources: {requests: {cpu: "1"}, limits: {nvidia.com/gpu: "2"}}
YAML
    for ((i = 2; i < ${3:-2}; i++)); do
        cat <<YAML
  - name: extra-$i
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - {name: main, image: registry.example.com/x:1, resources: {requests: {cpu: "1"}}}
YAML
    done
}

# wl_of JOBSET: the name of the Workload that JobSet JOBSET owns
wl_of() {
    k get workloads -o json | jq -r --arg n "$1" '.items[] | select(.metadata.ownerReferences[]? |
        .kind == "JobSet" and .name == $n and .controller) | .metadata.name' | head -n 1
}
# cond WL TYPE: "STATUS REASON MESSAGE" of condition TYPE of Workload WL
cond() {
    k get workload "$1" -o json 2>/dev/null | jq -r --arg t "$2" \
        '.status.conditions[]? | select(.type == $t) | "\(.status) \(.reason) \(.message)"'
}
suspended() { [ "$(k get jobset "$1" -o jsonpath='{.spec.suspend}')" = "$2" ]; }
has_wl() { [ -n "$(wl_of "$1")" ]; }

# train-a runs ~15 s on the real cluster (its pods' simulated runtime), so
# that train-b's pending state is seen meanwhile
jobset train-a 15s | k apply -f - >/dev/null
wait_for 30 "train-a has its Workload" has_wl train-a
WA=$(wl_of train-a)
uid=$(k get jobset train-a -o jsonpath='{.metadata.uid}')
wl=$(k get workload "$WA" -o json)
check "its name is Kueue's (jobset-train-a-HASH) and it is owned by the JobSet" "$wl" \
    jq -e --arg uid "$uid" '(.metadata.name | test("^jobset-train-a-[0-9a-f]{5}$")) and
        .metadata.ownerReferences[0].apiVersion == "jobset.x-k8s.io/v1alpha2" and
        .metadata.ownerReferences[0].uid == $uid and .spec.queueName == "lq"' <<<"$wl"
check "one pod set per replicated Job: driver 1, workers 2 x 2 = 4" "$(jq -c .spec.podSets <<<"$wl")" \
    jq -e '[.spec.podSets[] | {name, count}] == [{"name":"driver","count":1},{"name":"workers","count":4}]' <<<"$wl"
wait_for 30 "train-a admitted and unsuspended" suspended train-a false
wl=$(k get workload "$WA" -o json)
check "its pod sets got flavors general and h100" "$(jq -c .status.admission <<<"$wl")" \
    jq -e '[.status.admission.podSetAssignments[] | .flavors | to_entries | map(.value) | unique[]]
        == ["general", "h100"]' <<<"$wl"
js=$(k get jobset train-a -o json)
check "each replicated Job's pod template has its own flavor's node selector" \
    "$(jq -c '[.spec.replicatedJobs[].template.spec.template.spec.nodeSelector]' <<<"$js")" \
    jq -e '[.spec.replicatedJobs[].template.spec.template.spec.nodeSelector] ==
        [{"node.example.com/pool":"general"},{"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3"}]' <<<"$js"

if [ "$E2E_CLUSTER" = k8s ]; then
    # placed_right: train-a's 5 pods are bound, each to a node of its flavor
    placed_right() {
        local pods nodes
        pods=$(k get pods -l jobset.sigs.k8s.io/jobset-name=train-a -o json) || return 1
        nodes=$(k get nodes -o json) || return 1
        jq -e -n --argjson p "$pods" --argjson n "$nodes" '
            ($n.items | map({key: .metadata.name, value: .metadata.labels}) | from_entries) as $l |
            ($p.items | length) == 5 and all($p.items[]; .spec.nodeName != null and
              (if .metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] == "driver"
               then $l[.spec.nodeName]["node.example.com/pool"] == "general"
               else $l[.spec.nodeName]["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3" end))' \
            >/dev/null
    }
    wait_for 60 "train-a's pods are bound to nodes of their flavors (kube-scheduler)" placed_right
fi

jobset train-b 2s | k apply -f - >/dev/null
wait_for 30 "train-b has its Workload" has_wl train-b
WB=$(wl_of train-b)
PENDING="False WaitingForQuota couldn't assign flavors to pod set workers: insufficient quota for nvidia.com/gpu in flavor general, request > maximum capacity (8 > 0), insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed"
pending_b() { [ "$(cond "$WB" QuotaReserved)" = "$PENDING" ]; }
poll 30 pending_b
check "train-b waits with Kueue's pending message" "$(cond "$WB" QuotaReserved)" pending_b
check "train-b stays suspended" "suspend is $(k get jobset train-b -o jsonpath='{.spec.suspend}')" \
    suspended train-b true
explain jobset/train-b
check "cueue explain jobset/train-b explains its Workload (pending for GPUs)" \
    "rc $RC: $(head -c 600 "$TMP/out") $(cat "$TMP/err")" \
    eval "[ $RC -eq 0 ] && grep -qx '(JobSet default/train-b: its Workload default/$WB)' '$TMP/out' &&
          grep -q '^Workload default/$WB: pending' '$TMP/out' && grep -q 'nvidia.com/gpu' '$TMP/out'"
explain default/jobsets.jobset.x-k8s.io/train-b -o json
check "... as NAMESPACE/KIND/NAME, in JSON" "rc $RC: $(head -c 300 "$TMP/out")" \
    eval "[ $RC -eq 0 ] && jq -e '.status == \"pending\"' '$TMP/out' >/dev/null"
"$CUEUE" queue pending -o wide >"$TMP/out" 2>"$TMP/err"
check "cueue queue pending -o wide names train-b's owner (JobSet/train-b)" "$(cat "$TMP/out" "$TMP/err")" \
    grep -Eq "^0 +default/$WB .* JobSet/train-b +couldn't assign" "$TMP/out"
explain jobset/none
check "cueue explain of a JobSet that does not exist says so (exit 1)" "rc $RC: $(cat "$TMP/err")" \
    eval "[ $RC -eq 1 ] && grep -q 'no JobSet default/none' '$TMP/err'"

if [ "$E2E_CLUSTER" = embedded ]; then
    # no JobSet controller here: the JobSet says it completed
    k patch jobset train-a --subresource=status --type merge -p '{"status":{"conditions":[
        {"type":"Completed","status":"True","reason":"AllJobsCompleted",
         "message":"jobset completed successfully","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}' \
        >/dev/null 2>"$TMP/patch.err" || fail "train-a marked Completed" "$(cat "$TMP/patch.err")"
fi
wait_for 90 "train-a finishing finishes its Workload with the JobSet's message (Succeeded)" \
    eval "cond $WA Finished | grep -q '^True Succeeded jobset completed successfully'"
wait_for 30 "the quota is released: train-b admitted and unsuspended" suspended train-b false
check "train-b holds the quota now" "$(cond "$WB" QuotaReserved)" \
    eval "cond $WB QuotaReserved | grep -q '^True QuotaReserved'"

# a JobSet whose Workload the API server would refuse: 19 pod sets
jobset bad 1s 19 | k apply -f - >/dev/null
bad_event() {
    k get events --field-selector involvedObject.kind=JobSet,involvedObject.name=bad -o json |
        jq -e '.items[] | select(.type == "Warning" and .reason == "FailedCreateWorkload" and
            (.message | test("spec.podSets: Too many: 19: must have at most 18 items")))' >/dev/null
}
wait_for 30 "a JobSet of 19 replicated Jobs is reported on itself (Warning FailedCreateWorkload)" bad_event
check "... gets no Workload and stays suspended" "workload $(wl_of bad)" \
    eval "! has_wl bad && suspended bad true"

e2e_finish
