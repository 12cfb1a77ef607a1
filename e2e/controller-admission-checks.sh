#!/usr/bin/env bash
# controller-admission-checks.sh - Kueue's AdmissionChecks and two-phase
# admission, driven by a small external check controller written here in
# bash and kubectl (it writes Workload status.admissionChecks states with
# `kubectl patch --subresource=status`, as a real check controller would,
# and the Active condition of its AdmissionChecks).
# Covers: a ClusterQueue naming missing checks is inactive
# (AdmissionCheckNotFound), then AdmissionCheckInactive while the checks have
# no Active=True, then Active; a Job's Workload gets its quota reserved
# (QuotaReserved, status.admission) with the checks that apply Pending, is
# not Admitted and its Job stays suspended; the queues count it reserving,
# not admitted; when the check controller marks the check Ready the Workload
# is Admitted and the Job runs to completion, with the labels, annotations
# and tolerations of the check's podSetUpdates; onFlavors: a check listed for
# one flavor applies only to a Workload assigned that flavor; Retry: the
# Workload is evicted (reason AdmissionCheck), its quota released, its checks
# reset to Pending (retryCount counted) and its quota reserved again;
# Rejected: the Workload is deactivated (DeactivationTarget, spec.active
# false, Evicted reason DeactivatedDueToAdmissionCheck) and its quota
# released; a Retry with requeueAfterSeconds keeps the Workload out of the
# queue until then. Usage: PATH_TO_cueue
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq curl

dump() {
    show "$TMP/ctrl.log" "controller log"
    echo "---- queues"; k get admissionchecks,clusterqueues,localqueues -A -o yaml 2>&1 | sed 's/^/  | /' | tail -n 120
    echo "---- workloads"; k get workloads -A -o yaml 2>&1 | sed 's/^/  | /' | tail -n 150
    echo "---- jobs"; k get jobs -A 2>&1 | sed 's/^/  | /'
}

start_cluster
apply_crds
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: general}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: special}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  admissionChecksStrategy:
    admissionChecks:
    - {name: check-a}
    - {name: check-s, onFlavors: [special]}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: general, resources: [{name: cpu, nominalQuota: "2"}]}
    - {name: special, resources: [{name: cpu, nominalQuota: "4"}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
YAML
pass "queues applied"
start_controller ctrl -v 1 --metrics-bind-address 127.0.0.1:0
wait_for 15 "controller logs its metrics address" grep -q "metrics on [^ ]* (/metrics)" "$TMP/ctrl.log"
metrics_url "$TMP/ctrl.log"
# checks_wait_count CQ: observations of kueue_admission_checks_wait_time_seconds for CQ
checks_wait_count() {
    curl -sf --max-time 5 "$METRICS" |
        awk -v q="cluster_queue=\"$1\"" 'index($0, "kueue_admission_checks_wait_time_seconds_count{") == 1 && index($0, q) { s += $NF } END { print s + 0 }'
}

# ---- the external check controller ----
CTL=example.com/bash-check
# set_active CHECK: the AdmissionCheck's Active=True, as its controller reports it
set_active() {
    k patch admissioncheck "$1" --subresource=status --type=merge -p "{\"status\":{\"conditions\":[
        {\"type\":\"Active\",\"status\":\"True\",\"reason\":\"Ready\",\"message\":\"ok\",
         \"lastTransitionTime\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}]}}" >/dev/null
}
# set_state WORKLOAD CHECK STATE [MESSAGE]: the check's state on the Workload
# (the whole list written back with the one entry changed, and the
# resourceVersion as precondition)
# [UPDATES: the entry's podSetUpdates, JSON]
set_state() {
    local wl=$1 ck=$2 st=$3 msg=${4:-set by the bash check controller} ups=${5:-null} now body
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    body=$(k get workload "$wl" -o json | jq -c --arg ck "$ck" --arg st "$st" --arg msg "$msg" \
        --arg now "$now" --argjson ups "$ups" '{metadata: {resourceVersion: .metadata.resourceVersion},
        status: {admissionChecks: [.status.admissionChecks[] |
            if .name == $ck then .state = $st | .message = $msg | .lastTransitionTime = $now |
                (if $ups != null then .podSetUpdates = $ups else . end)
            else . end]}}') || return 1
    k patch workload "$wl" --subresource=status --type=merge -p "$body" >/dev/null
}
# what check-a asks for the pods when Ready (applied to the Job at its start)
UPDATES='[{"name":"main","labels":{"checked-by":"check-a"},"annotations":{"example.com/note":"ok"},
  "tolerations":[{"key":"example.com/checked","operator":"Exists","effect":"NoSchedule"}]}]'
# the controller loop: while $TMP/approve-a exists, check-a goes Ready on every
# Workload where it is Pending
check_controller() {
    local wl
    while :; do
        if [ -e "$TMP/approve-a" ]; then
            for wl in $(k get workloads -o json 2>/dev/null | jq -r '.items[] |
                    select(any(.status.admissionChecks[]?; .name == "check-a" and .state == "Pending"))
                    | .metadata.name'); do
                set_state "$wl" check-a Ready "capacity found" "$UPDATES" 2>/dev/null
            done
        fi
        sleep 0.3
    done
}

cq_active() {  # REASON [MESSAGE]
    k get clusterqueue cq -o json | jq -e --arg r "$1" --arg m "${2:-}" '.status.conditions[]? |
        select(.type == "Active") | .reason == $r and ($m == "" or .message == $m)' >/dev/null
}
wl_of() {  # JOB: its Workload's name
    k get workloads -o json | jq -r --arg j "$1" '.items[] |
        select(any(.metadata.ownerReferences[]?; .name == $j)) | .metadata.name' | head -n 1
}
wlj() { k get workload "$1" -o json; }
cond() {  # WL TYPE STATUS [REASON]
    wlj "$1" | jq -e --arg t "$2" --arg s "$3" --arg r "${4:-}" '.status.conditions[]? |
        select(.type == $t) | .status == $s and ($r == "" or .reason == $r)' >/dev/null
}
checks_are() {  # WL "name=state ..." (all of them, in name order)
    local got
    got=$(wlj "$1" | jq -r '[.status.admissionChecks[]? | "\(.name)=\(.state)"] | join(" ")')
    [ "$got" = "$2" ]
}
suspended() { [ "$(k get job "$1" -o jsonpath='{.spec.suspend}')" = true ]; }
running() { [ "$(k get job "$1" -o jsonpath='{.spec.suspend}')" = false ]; }
not_admitted() { ! cond "$1" Admitted True; }
jqw() { wlj "$1" | jq -e "$2" >/dev/null; }  # WL FILTER
counts() {  # KIND NAME RESERVING ADMITTED
    k get "$1" "$2" -o json | jq -e --argjson r "$3" --argjson a "$4" \
        '.status.reservingWorkloads == $r and .status.admittedWorkloads == $a' >/dev/null
}
retried() {  # WL: evicted for a Retry, readmitted with its checks reset
    jqw "$1" '(.status.conditions[] | select(.type == "Evicted") | .status == "False" and
        .message == "Previously: At least one admission check is false") and
    .status.admission != null and
    ([.status.admissionChecks[] | .state] == ["Pending", "Pending"]) and
    (.status.admissionChecks[] | select(.name == "check-s") | .retryCount == 1 and
        .message == "Reset to Pending after eviction. Previously: Retry")'
}
reserved_in() {  # WL FLAVOR
    wlj "$1" | jq -e --arg f "$2" '.status.admission.podSetAssignments[0].flavors.cpu == $f' >/dev/null
}

# ---- 1. the ClusterQueue without its checks, then with inactive ones ----
wait_for 15 "missing checks: cq inactive, AdmissionCheckNotFound" cq_active AdmissionCheckNotFound \
    "Can't admit new workloads: references missing AdmissionCheck(s): check-a,check-s."
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: check-a}
spec: {controllerName: $CTL}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: check-s}
spec: {controllerName: $CTL}
YAML
wait_for 15 "checks without Active=True: AdmissionCheckInactive" cq_active AdmissionCheckInactive \
    "Can't admit new workloads: references inactive AdmissionCheck(s): check-a,check-s."
job_yaml j1 1 8s | k apply -f - >/dev/null
sleep 2
check "no reservation while the ClusterQueue is inactive" "j1 holds quota" \
    test "$(wlj "$(wl_of j1)" | jq -r '.status.admission // "none"')" = none
set_active check-a
set_active check-s
wait_for 15 "checks Active: cq Active (Ready)" cq_active Ready

# ---- 2. reserved, Pending, then Ready -> Admitted, the Job runs ----
check_controller &
W1=$(wl_of j1)
wait_for 15 "j1: quota reserved in general" reserved_in "$W1" general
wait_for 10 "j1: check-a Pending (check-s is for special only)" checks_are "$W1" "check-a=Pending"
check "j1: QuotaReserved=True" "no" cond "$W1" QuotaReserved True QuotaReserved
check "j1: not Admitted" "Admitted=True" not_admitted "$W1"
check "j1: Job still suspended" "it runs" suspended j1
wait_for 10 "cq: 1 reserving, 0 admitted" counts clusterqueue cq 1 0
wait_for 10 "lq: 1 reserving, 0 admitted" counts localqueue lq 1 0
touch "$TMP/approve-a"
wait_for 15 "j1: check-a Ready -> Admitted" cond "$W1" Admitted True Admitted
wait_for 15 "j1: Job started" running j1
check "j1: started with check-a's podSetUpdates" "labels, annotations or tolerations missing" \
    jq -e '.spec.template | .metadata.labels["checked-by"] == "check-a" and
        .metadata.annotations["example.com/note"] == "ok" and
        any(.spec.tolerations[]?; .key == "example.com/checked")' \
    <<<"$(k get job j1 -o json)" >/dev/null
wait_for 10 "cq: 1 reserving, 1 admitted" counts clusterqueue cq 1 1
check "kueue_admission_checks_wait_time_seconds observed j1's wait for its check" \
    "count $(checks_wait_count cq)" [ "$(checks_wait_count cq)" = 1 ]
wait_for 30 "j1: Job complete" all_jobs_complete 1

# ---- 3. onFlavors, Retry ----
rm -f "$TMP/approve-a"
# 3 cpu: more than general's 2, so it goes to special, where both checks apply
job_yaml j2 3 600s | k apply -f - >/dev/null
poll 10 test -n "$(wl_of j2)"
W2=$(wl_of j2)
wait_for 15 "j2: quota reserved in special" reserved_in "$W2" special
wait_for 10 "j2: both checks Pending (onFlavors special)" checks_are "$W2" "check-a=Pending check-s=Pending"
set_state "$W2" check-a Ready ok
sleep 1
check "j2: one check Ready, not Admitted" "Admitted=True" not_admitted "$W2"
check "j2: Job still suspended" "it runs" suspended j2
set_state "$W2" check-s Retry "no capacity yet"
wait_for 15 "j2: Retry -> evicted (AdmissionCheck), checks reset, quota reserved again" retried "$W2"
check "j2: the controller evicted it for the check" "no log line" \
    grep -q "evicting Workload default/$W2: At least one admission check is false" "$TMP/ctrl.log"
check "j2: Job still suspended" "it runs" suspended j2

# ---- 4. Rejected -> deactivated ----
set_state "$W2" check-s Rejected "never fits"
wait_for 15 "j2: Rejected -> spec.active=false" jqw "$W2" '.spec.active == false'
wait_for 15 "j2: evicted DeactivatedDueToAdmissionCheck, quota released" jqw "$W2" '
    .status.admission == null and
    (.status.conditions[] | select(.type == "Evicted") | .status == "True" and
        .reason == "DeactivatedDueToAdmissionCheck" and
        .message == "The workload is deactivated due to Admission check(s): check-s, were rejected") and
    ([.status.conditions[] | select(.type == "DeactivationTarget")] | length == 0)'
wait_for 10 "cq: nothing reserved" counts clusterqueue cq 0 0
check "j2: Job suspended" "it runs" suspended j2

# ---- 5. Retry with requeueAfterSeconds: out of the queue until then ----
job_yaml j3 1 600s | k apply -f - >/dev/null
poll 10 test -n "$(wl_of j3)"
W3=$(wl_of j3)
wait_for 15 "j3: quota reserved, check-a Pending" checks_are "$W3" "check-a=Pending"
body=$(wlj "$W3" | jq -c --arg now "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '{metadata:
    {resourceVersion: .metadata.resourceVersion}, status: {admissionChecks: [{name: "check-a",
    state: "Retry", message: "later", lastTransitionTime: $now, requeueAfterSeconds: 6}]}}')
k patch workload "$W3" --subresource=status --type=merge -p "$body" >/dev/null
wait_for 10 "j3: Retry with requeueAfterSeconds -> quota released, requeueAt set" jqw "$W3" '
    .status.admission == null and .status.requeueState.requeueAt != null'
sleep 2
check "j3: still not reserved while requeueAt is ahead" "reserved again too early" \
    jqw "$W3" '.status.admission == null'
wait_for 15 "j3: reserved again after requeueAt" jqw "$W3" '.status.admission != null'
e2e_finish
