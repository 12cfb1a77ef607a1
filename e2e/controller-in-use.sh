#!/usr/bin/env bash
# controller-in-use.sh - Kueue's finalizer kueue.x-k8s.io/resource-in-use.
# The controller puts it on every ClusterQueue and ResourceFlavor (none on a
# LocalQueue, as Kueue). A ClusterQueue deleted while a Workload holds quota
# in it stays, Terminating: Active=False reason Terminating, admits nothing
# new, and its admitted Workload's usage keeps counting in the cohort (a
# ClusterQueue borrowing from it cannot take that quota); when the Workload
# finishes, the finalizer comes off and the ClusterQueue is gone. A
# ResourceFlavor deleted while a ClusterQueue names it stays until none does.
# A deleted LocalQueue goes at once; its admitted Workload keeps its quota.
# Workloads without Jobs, finished by a status patch, so that the test
# decides when quota is released. Usage: PATH_TO_cueue
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq

FIN=kueue.x-k8s.io/resource-in-use
dump() {
    show "$TMP/ctrl.log" "controller log"
    echo "---- queues"; k get clusterqueues,resourceflavors,localqueues -A -o yaml 2>&1 | sed 's/^/  | /' | tail -n 120
    echo "---- workloads"; k get workloads -A -o yaml 2>&1 | sed 's/^/  | /' | tail -n 80
}

start_cluster
apply_crds
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: general}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohortName: co
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: general, resources: [{name: cpu, nominalQuota: "4"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: borrower}
spec:
  cohortName: co
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: general, resources: [{name: cpu, nominalQuota: "0"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: blq, namespace: default}
spec: {clusterQueue: borrower}
YAML
pass "queues applied"
wl() {  # NAME LQ CPU
cat <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: $1, namespace: default}
spec:
  queueName: $2
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers: [{name: c, image: x, resources: {requests: {cpu: "$3"}}}]
YAML
}
has_fin() { k get "$1" -o json | jq -e --arg f "$FIN" '.metadata.finalizers // [] | index($f) != null' >/dev/null; }
admitted() { k get workload "$1" -o json | jq -e '.status.admission != null' >/dev/null; }
gone() { ! k get "$1" >/dev/null 2>&1; }

start_controller ctrl -v 1
wait_for 60 "controller synced" grep -q "all informers synced" "$TMP/ctrl.log"
wait_for 30 "finalizer $FIN added to ClusterQueue cq" has_fin clusterqueue/cq
wait_for 30 "finalizer added to ResourceFlavor general" has_fin resourceflavor/general
check "no finalizer on a LocalQueue (as Kueue)" "$(k get localqueue lq -o jsonpath='{.metadata.finalizers}')" \
    test -z "$(k get localqueue lq -o jsonpath='{.metadata.finalizers}')"

wl a lq 3 | k apply -f - >/dev/null
wait_for 60 "Workload a admitted to cq (3 of 4 cpu)" admitted a

# deleted while a holds quota: Terminating, not gone
k delete clusterqueue cq --wait=false >/dev/null
wait_for 30 "deleted ClusterQueue cq shows Active=False reason Terminating" bash -c \
    "kubectl --kubeconfig $KC get clusterqueue cq -o json | jq -e '.metadata.deletionTimestamp != null and (.status.conditions[] | select(.type == \"Active\") | .status == \"False\" and .reason == \"Terminating\" and .message == \"Can'\''t admit new workloads; clusterQueue is terminating\")'"
k delete resourceflavor general --wait=false >/dev/null
wl b lq 1 | k apply -f - >/dev/null
wait_for 30 "a new Workload of the Terminating ClusterQueue waits: ClusterQueue cq is inactive" bash -c \
    "kubectl --kubeconfig $KC get workload b -o json | jq -e '.status.admission == null and (.status.conditions[] | select(.type == \"QuotaReserved\") | .message == \"ClusterQueue cq is inactive\")'"
# borrower may borrow cq's free 1 cpu, not the 3 that a holds
wl c blq 2 | k apply -f - >/dev/null
wl d blq 1 | k apply -f - >/dev/null
wait_for 30 "borrower borrows the 1 cpu left (d admitted)" admitted d
check "the usage of the Terminating ClusterQueue still counts (c, 2 cpu, not admitted)" \
    "$(k get workload c -o json | jq -c .status.conditions)" bash -c "! kubectl --kubeconfig $KC get workload c -o json | jq -e '.status.admission != null' >/dev/null"
check "ClusterQueue cq still there while a holds quota" "gone" has_fin clusterqueue/cq
check "ResourceFlavor general still there while ClusterQueues name it" "gone" has_fin resourceflavor/general

# a finishes: the finalizer comes off, cq is gone
NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
k patch workload a --subresource=status --type=json -p "[{\"op\":\"add\",\"path\":\"/status/conditions/-\",\"value\":{\"type\":\"Finished\",\"status\":\"True\",\"reason\":\"Succeeded\",\"message\":\"done\",\"lastTransitionTime\":\"$NOW\"}}]" >/dev/null \
    || fail "finish Workload a" "kubectl patch failed"
wait_for 30 "Workload a finished: ClusterQueue cq is gone" gone clusterqueue/cq
check "ResourceFlavor general stays while borrower names it" "gone" has_fin resourceflavor/general
# a LocalQueue has no finalizer (as Kueue): gone at once; its admitted d
# keeps its quota (held by the ClusterQueue), its pending c waits
k delete localqueue blq --wait=false >/dev/null
wait_for 30 "LocalQueue blq deleted at once" gone localqueue/blq
wait_for 30 "its pending c waits: LocalQueue blq doesn't exist" bash -c \
    "kubectl --kubeconfig $KC get workload c -o json | jq -e '.status.conditions[] | select(.type == \"QuotaReserved\") | .message == \"LocalQueue blq doesn'\''t exist\"'"
check "its admitted d keeps its quota" "$(k get workload d -o json | jq -c .status.admission)" admitted d
k delete clusterqueue borrower --wait=false >/dev/null
wait_for 30 "borrower (d holds quota) stays Terminating" bash -c \
    "kubectl --kubeconfig $KC get clusterqueue borrower -o json | jq -e '.metadata.deletionTimestamp != null'"
k delete workload d --wait=false >/dev/null
wait_for 30 "d deleted: ClusterQueue borrower is gone" gone clusterqueue/borrower
wait_for 30 "no ClusterQueue names it: ResourceFlavor general is gone" gone resourceflavor/general
e2e_finish
