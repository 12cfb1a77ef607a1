#!/usr/bin/env bash
# kueue-tasks.sh - end to end: the tasks of Kueue's documentation, done as
# its pages tell a user to do them (with kubectl and curl), against `cueue
# controller` on either cluster (CUEUE_E2E_CLUSTER=embedded or k8s). Each
# section is one page; the checks are the outcomes the page states. Our own
# manifests and steps, written after the pages, not copies of them.
#
# 1. Administer cluster quotas. One ClusterQueue cluster-queue (cpu 9,
#    memory 36Gi of ResourceFlavor default-flavor), LocalQueue user-queue:
#    the ClusterQueue becomes Active, `kubectl get queues` (the LocalQueue
#    alias) lists it. Several flavors: flavors zone-a and zone-b (node labels
#    topology.kubernetes.io/zone), cpu 9 in zone-a then 12 in zone-b, memory in
#    default-flavor: a Job that fills zone-a gets zone-a and its pods run on
#    zone-a nodes, the next one gets zone-b. A cohort team-ab: team-a-cq (cpu 9,
#    borrowingLimit 6) and team-b-cq (cpu 12): team-a's 15-cpu Job is admitted
#    by borrowing 6 (status flavorsReservation/flavorsUsage say so), one more
#    cpu for team-a is refused (borrowing limit) while team-b still admits the
#    6 cpu left; when the big Job goes, both waiting Jobs are admitted.
# 2. Run a Job. A Job of 3 pods (1 cpu, 200Mi each) created with
#    generateName in user-queue while a filler Job holds the whole quota: its
#    Workload exists, owned by the Job, with empty RESERVED IN and ADMITTED
#    columns, QuotaReserved False (reason WaitingForQuota, see below) and the
#    quota message in `kubectl describe`; the
#    Job is suspended and has no pods. When the filler ends: RESERVED IN
#    cluster-queue, ADMITTED True, the Admitted event "Admitted by
#    ClusterQueue cluster-queue", the Job unsuspended, its events
#    CreatedWorkload and Started; then Finished True "Job finished
#    successfully" and `kubectl describe job` shows 3 Succeeded.
# 3. Monitor pending workloads (in the queues' status). 10 Jobs of 3 x 1 cpu
#    into cluster-queue (9 cpu): `kubectl describe clusterqueue` shows
#    Pending Workloads and Admitted Workloads that add up to the Jobs not yet
#    finished, with pending > 0 and at most 3 admitted; the LocalQueue's
#    status and `kubectl get` columns agree; all drain to 0.
# 4. Prometheus metrics, scraped with curl from the controller's metrics
#    endpoint: the counters of admissions, quota reservations, finished
#    workloads and the wait-time histogram count equal what happened in
#    cluster-queue; pending gauges 0 at the end; the ClusterQueue is active,
#    its nominal quota is 9 cpu; build info; admission attempts; the
#    borrowing team-a-cq's usage.
# 5. Setup fair sharing. A second controller with a Configuration that turns
#    fair sharing on (preemptionStrategies). Cohort fs: fs-a (cpu 4, weight 2),
#    fs-b (cpu 4, weight 1, reclaimWithinCohort Any), fs-shared (cpu 12).
#    16 Jobs of fs-a run (borrow 12): weightedShare 12/20*1000/2 = 300 in the
#    status and in kueue_cluster_queue_weighted_share. 6 Jobs of fs-b: the
#    first 4 fit, the other 2 preempt fs-a Workloads (reason
#    InCohortFairSharing); then fs-a has 14 admitted (share 250) and fs-b 6
#    (share 100); kueue_preempted_workloads_total counts the preemptions.
#
# Known differences: Kueue's webhook suspends a Job on creation; Cueue has
# none (docs/controller.md), so the Jobs here are created suspended. A
# Workload short of quota gets reason Pending from Kueue v0.17, Cueue's
# finer WaitingForQuota (docs/kueue-differences.md).
# Pods run for the cueue.dev/simulated-runtime annotation (both clusters'
# simulated kubelets read it).
#
# Usage: e2e/kueue-tasks.sh PATH_TO_cueue
# Needs: kubectl, jq, curl, timeout.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq curl

dump() {
    show "$TMP/ctrl.log" "controller log" 40
    show "$TMP/ctrl-fs.log" "fair-sharing controller log" 40
    echo "---- jobs"; k get jobs -A -o wide 2>&1 | sed 's/^/  | /' | tail -n 60
    echo "---- workloads"; k get workloads -A -o wide 2>&1 | sed 's/^/  | /' | tail -n 60
    echo "---- clusterqueues"; k get clusterqueues -o wide 2>&1 | sed 's/^/  | /'
}

# job NAME|generate:PREFIX NS LQ PODS CPU MEMORY RUNTIME: one suspended Job of
# PODS pods (parallelism = completions) of CPU cpu and MEMORY memory each
# (MEMORY - for none).
job() {
    local meta
    case $1 in
        generate:*) meta="generateName: ${1#generate:}" ;;
        *) meta="name: $1" ;;
    esac
    local req="cpu: \"$5\""
    [ "$6" = - ] || req="$req, memory: \"$6\""
    cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  $meta
  namespace: $2
  labels: {kueue.x-k8s.io/queue-name: $3}
spec:
  suspend: true
  parallelism: $4
  completions: $4
  template:
    metadata:
      annotations: {cueue.dev/simulated-runtime: "$7"}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: [sleep, "30"]
        resources: {requests: {$req}}
YAML
}

# wl_of NS JOB: the name of the Workload owned by Job NS/JOB.
wl_of() {
    k get workloads -n "$1" -o json | jq -r --arg j "$2" \
        '.items[] | select(any(.metadata.ownerReferences[]?; .kind == "Job" and .name == $j)) | .metadata.name' | head -n 1
}
# wl_cond NS WL TYPE: "STATUS REASON" of the condition (empty when absent).
wl_cond() {
    k get workload -n "$1" "$2" -o json | jq -r --arg t "$3" \
        '.status.conditions // [] | map(select(.type == $t)) | .[0] // empty | "\(.status) \(.reason)"'
}
wl_admitted() { [ "$(wl_cond "$1" "$2" Admitted | cut -d' ' -f1)" = True ]; }
wl_finished() { [ "$(wl_cond "$1" "$2" Finished | cut -d' ' -f1)" = True ]; }
job_unsuspended() { [ "$(k get job -n "$1" "$2" -o jsonpath='{.spec.suspend}')" = false ]; }
job_complete() {
    k get job -n "$1" "$2" -o json \
        | jq -e 'any(.status.conditions[]?; .type == "Complete" and .status == "True")' >/dev/null
}
# flavor_of NS WL RESOURCE: the flavor assigned to RESOURCE of the first pod set.
flavor_of() {
    k get workload -n "$1" "$2" -o json | jq -r --arg r "$3" '.status.admission.podSetAssignments[0].flavors[$r] // ""'
}
# cq_res CQ FIELD FLAVOR RESOURCE KEY: status.FIELD[flavor].resources[resource].KEY
cq_res() {
    k get clusterqueue "$1" -o json | jq -r --arg f "$2" --arg fl "$3" --arg r "$4" --arg key "$5" \
        '.status[$f] // [] | map(select(.name == $fl)) | .[0].resources // [] | map(select(.name == $r)) | .[0][$key] // ""'
}
# count_admitted CQ: Workloads of every namespace admitted by CQ and not finished.
count_admitted() {
    k get workloads -A -o json | jq --arg cq "$1" '[.items[] | select(.status.admission.clusterQueue == $cq)
        | select(any(.status.conditions[]?; .type == "Admitted" and .status == "True"))
        | select(all(.status.conditions[]?; .type != "Finished" or .status != "True"))] | length'
}

start_cluster
apply_crds
start_controller ctrl -v 1 --health-probe-bind-address 0 --metrics-bind-address 127.0.0.1:0
wait_for 30 "controller synced" grep -q "all informers synced" "$TMP/ctrl.log"
wait_for 15 "controller logs its metrics address" grep -q "metrics on [^ ]* (/metrics)" "$TMP/ctrl.log"
metrics_url "$TMP/ctrl.log"

####################### 1. Administer cluster quotas #######################
BASE_PREFIX=${E2E_PREFIX:-}
E2E_PREFIX="${BASE_PREFIX}quotas: "
k apply -f - >/dev/null <<'YAML' || { fail "single ClusterQueue setup" "kubectl apply failed"; e2e_finish; }
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 9}
      - {name: memory, nominalQuota: 36Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: default}
spec: {clusterQueue: cluster-queue}
YAML
cq_active() {
    k get clusterqueue "$1" -o json | jq -e 'any(.status.conditions[]?; .type == "Active" and .status == "True")' >/dev/null
}
wait_for 20 "cluster-queue is Active" cq_active cluster-queue
q_listed() { k -n default get queues 2>/dev/null | grep -Eq '^user-queue +cluster-queue +0 '; }
wait_for 20 "kubectl get queues lists user-queue -> cluster-queue, 0 pending" q_listed

# several flavors: cpu from zone-a first, then zone-b; memory from default-flavor
k apply -f - >/dev/null <<'YAML' || fail "flavors setup" "kubectl apply failed"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: zone-a}
spec: {nodeLabels: {topology.kubernetes.io/zone: zone-a}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: zone-b}
spec: {nodeLabels: {topology.kubernetes.io/zone: zone-b}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: zones-cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: zone-a
      resources: [{name: cpu, nominalQuota: 9}]
    - name: zone-b
      resources: [{name: cpu, nominalQuota: 12}]
  - coveredResources: [memory]
    flavors:
    - name: default-flavor
      resources: [{name: memory, nominalQuota: 84Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: zones-queue, namespace: default}
spec: {clusterQueue: zones-cq}
YAML
wait_for 20 "zones-cq is Active" cq_active zones-cq
# zone-2 is created once zone-1 is admitted: two Jobs applied together get
# Workloads whose creates may complete in either order (in the same second,
# which is all creationTimestamp tells apart), and which one takes zone-a
# is then a tie, as in Kueue
job zone-1 default zones-queue 3 3 1Gi 600s | k apply -f - >/dev/null || fail "create zone-1" "kubectl failed"
poll 30 job_unsuspended default zone-1
job zone-2 default zones-queue 2 3 1Gi 600s | k apply -f - >/dev/null || fail "create zone-2" "kubectl failed"
wait_for 30 "zone-1 (9 cpu) and zone-2 (6 cpu) both admitted" job_unsuspended default zone-2
W1=$(wl_of default zone-1) W2=$(wl_of default zone-2)
f="$(flavor_of default "$W1" cpu)/$(flavor_of default "$W1" memory) $(flavor_of default "$W2" cpu)/$(flavor_of default "$W2" memory)"
check "cpu from zone-a then zone-b, memory from default-flavor" "got $f" \
    [ "$f" = "zone-a/default-flavor zone-b/default-flavor" ]
pods_in_zone() {    # pods_in_zone JOB ZONE N: N pods of JOB, all bound to nodes of ZONE
    local nodes n z
    nodes=$(k get pods -n default -l job-name="$1" -o json | jq -r '.items[] | .spec.nodeName // ""')
    [ "$(echo "$nodes" | grep -c .)" -eq "$3" ] || return 1
    for n in $nodes; do
        z=$(k get node "$n" -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}')
        [ "$z" = "$2" ] || return 1
    done
}
wait_for 60 "zone-1's 3 pods run on zone-a nodes" pods_in_zone zone-1 zone-a 3
wait_for 60 "zone-2's 2 pods run on zone-b nodes" pods_in_zone zone-2 zone-b 2
k delete job zone-1 zone-2 -n default --wait=false >/dev/null

# a cohort: team-a-cq may borrow up to 6 cpu
k create namespace team-a >/dev/null && k create namespace team-b >/dev/null
k apply -f - >/dev/null <<'YAML' || fail "cohort setup" "kubectl apply failed"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a-cq}
spec:
  namespaceSelector: {}
  cohortName: team-ab
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 9, borrowingLimit: 6}
      - {name: memory, nominalQuota: 36Gi, borrowingLimit: 24Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-b-cq}
spec:
  namespaceSelector: {}
  cohortName: team-ab
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 12}
      - {name: memory, nominalQuota: 48Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-a-queue, namespace: team-a}
spec: {clusterQueue: team-a-cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-b-queue, namespace: team-b}
spec: {clusterQueue: team-b-cq}
YAML
wait_for 20 "team-a-cq and team-b-cq Active" eval 'cq_active team-a-cq && cq_active team-b-cq'
job a-big team-a team-a-queue 5 3 1Gi 600s | k apply -f - >/dev/null
wait_for 30 "team-a's 15-cpu Job admitted (9 own + 6 borrowed)" job_unsuspended team-a a-big
wait_for 15 "team-a-cq reserves 15 cpu, 6 borrowed" eval \
    '[ "$(cq_res team-a-cq flavorsReservation default-flavor cpu total)/$(cq_res team-a-cq flavorsReservation default-flavor cpu borrowed)" = 15/6 ]'
wait_for 15 "team-a-cq flavorsUsage: 15 cpu, 6 borrowed" eval \
    '[ "$(cq_res team-a-cq flavorsUsage default-flavor cpu total)/$(cq_res team-a-cq flavorsUsage default-flavor cpu borrowed)" = 15/6 ]'
job a-more team-a team-a-queue 1 1 1Gi 5s | k apply -f - >/dev/null
job b-six team-b team-b-queue 2 3 1Gi 600s | k apply -f - >/dev/null
wait_for 30 "team-b's 6 cpu admitted (the unused part of its quota)" job_unsuspended team-b b-six
job b-more team-b team-b-queue 1 1 1Gi 5s | k apply -f - >/dev/null
WA=$(wl_of team-a a-more) WB=$(wl_of team-b b-more)
poll 15 eval '[ -n "$(wl_cond team-a "$(wl_of team-a a-more)" QuotaReserved)" ] && [ -n "$(wl_cond team-b "$(wl_of team-b b-more)" QuotaReserved)" ]'
WA=$(wl_of team-a a-more) WB=$(wl_of team-b b-more)
sleep 2
check "one more cpu for team-a waits (borrowing limit 6 reached)" "$(wl_cond team-a "$WA" QuotaReserved)" \
    eval '[ "$(wl_cond team-a "$WA" QuotaReserved)" = "False WaitingForQuota" ] && ! job_unsuspended team-a a-more'
check "one more cpu for team-b waits (the cohort's 21 cpu are in use)" "$(wl_cond team-b "$WB" QuotaReserved)" \
    eval '[ "$(wl_cond team-b "$WB" QuotaReserved)" = "False WaitingForQuota" ] && ! job_unsuspended team-b b-more'
k delete job a-big -n team-a --wait=false >/dev/null
wait_for 60 "with a-big gone, team-a's and team-b's waiting Jobs complete" \
    eval 'job_complete team-a a-more && job_complete team-b b-more'
k delete job b-six -n team-b --wait=false >/dev/null

############################# 2. Run a Job ##################################
E2E_PREFIX="${BASE_PREFIX}run-a-job: "
job filler default user-queue 3 3 1Gi 8s | k create -f - >/dev/null
wait_for 30 "the filler Job (9 cpu) runs" job_unsuspended default filler
SJ=$(job generate:sample-job- default user-queue 3 1 200Mi 3s | k create -f - -o jsonpath='{.metadata.name}')
check "the Job is created with a generated name" "got '$SJ'" eval '[[ "$SJ" == sample-job-* ]]'
wait_for 15 "a Workload owned by the Job exists" eval '[ -n "$(wl_of default "$SJ")" ]'
SW=$(wl_of default "$SJ")
check "its name is made from the Job's (job-$SJ-...)" "got $SW" eval '[[ "$SW" == job-"$SJ"-* ]]'
poll 15 eval '[ -n "$(wl_cond default "$SW" QuotaReserved)" ]'
# NAME QUEUE RESERVED-IN ADMITTED FINISHED AGE: no reservation yet
cols=$(k -n default get workloads.kueue.x-k8s.io "$SW" --no-headers | awk '{print $2, NF}')
check "kubectl get workloads: QUEUE user-queue, RESERVED IN and ADMITTED empty" "got '$cols'" \
    [ "$cols" = "user-queue 3" ]
DOUT=$(k -n default describe workload "$SW")
check "kubectl describe workload: QuotaReserved False, reason WaitingForQuota, quota message" "$(echo "$DOUT" | grep -A6 'Conditions:' | tr -s ' ' | tr '\n' ' ')" \
    eval 'grep -q "insufficient unused quota for cpu in flavor default-flavor, 3 more needed" <<<"$DOUT" && [ "$(wl_cond default "$SW" QuotaReserved)" = "False WaitingForQuota" ]'
check "the waiting Job is suspended and has no pods" "" \
    eval '! job_unsuspended default "$SJ" && [ -z "$(k get pods -n default -l job-name="$SJ" -o name)" ]'
wait_for 60 "once the filler ends, the Workload is admitted" wl_admitted default "$SW"
cols=$(k -n default get workloads.kueue.x-k8s.io "$SW" --no-headers | awk '{print $2, $3, $4}')
check "kubectl get workloads: user-queue cluster-queue True" "got '$cols'" [ "$cols" = "user-queue cluster-queue True" ]
DOUT=$(k -n default describe workload "$SW")
check "kubectl describe workload: event Admitted by ClusterQueue cluster-queue" "$(echo "$DOUT" | sed -n '/^Events:/,$p')" \
    eval 'grep -Eq "Normal +Admitted .*Admitted by ClusterQueue cluster-queue" <<<"$DOUT"'
wait_for 15 "the Job is unsuspended" job_unsuspended default "$SJ"
wait_for 60 "the Workload is Finished: Job finished successfully" eval \
    'wl_finished default "$SW" && k get workload -n default "$SW" -o json | jq -e "any(.status.conditions[]; .type == \"Finished\" and .message == \"Job finished successfully\")" >/dev/null'
DOUT=$(k -n default describe job "$SJ")
check "kubectl describe job: 0 Active, 3 Succeeded, 0 Failed" "$(echo "$DOUT" | grep 'Pods Statuses')" \
    eval 'grep -Eq "Pods Statuses: +0 Active (\(0 Ready\) )?/ 3 Succeeded / 0 Failed" <<<"$DOUT"'
check "kubectl describe job: events CreatedWorkload and Started" "$(echo "$DOUT" | sed -n '/^Events:/,$p')" \
    eval 'grep -Eq "CreatedWorkload .*Created Workload: default/$SW" <<<"$DOUT" && grep -Eq "Started .*Admitted by clusterQueue cluster-queue" <<<"$DOUT"'

###################### 3. Monitor pending workloads #######################
E2E_PREFIX="${BASE_PREFIX}pending: "
for i in $(seq 1 10); do job "pend-$i" default user-queue 3 1 200Mi 4s; echo ---; done | k create -f - >/dev/null
poll 20 eval '[ "$(k get workloads -n default -o json | jq "[.items[] | select(.metadata.name | test(\"pend-\"))] | length")" -eq 10 ]'
sleep 2
n_finished() {
    k get workloads -n default -o json | jq '[.items[] | select(.metadata.name | test("pend-"))
        | select(any(.status.conditions[]?; .type == "Finished" and .status == "True"))] | length'
}
# describe's counts against the Jobs not finished (counted before and after:
# a Job may finish meanwhile; the status may lag a moment behind)
pending_consistent() {
    local f0 f1
    f0=$(n_finished)
    DOUT=$(k describe clusterqueue cluster-queue)
    f1=$(n_finished)
    P=$(sed -n 's/^ *Pending Workloads: *\([0-9]*\)$/\1/p' <<<"$DOUT")
    A=$(sed -n 's/^ *Admitted Workloads: *\([0-9]*\)$/\1/p' <<<"$DOUT")
    [ -n "$P" ] && [ -n "$A" ] && [ "$P" -gt 0 ] && [ "$A" -ge 1 ] && [ "$A" -le 3 ] &&
        [ $((10 - P - A)) -ge "$f0" ] && [ $((10 - P - A)) -le "$f1" ]
}
P="" A=""
wait_for 20 "kubectl describe clusterqueue: Pending Workloads > 0, Admitted Workloads 1..3, together the Jobs not finished" \
    pending_consistent
echo "      (pending $P, admitted $A)"
lq=$(k get localqueue user-queue -n default -o json | jq -r '"\(.status.pendingWorkloads) \(.status.admittedWorkloads)"')
check "the LocalQueue's status counts pending and admitted too" "got $lq" \
    eval 'read -r lp la <<<"$lq"; [ "$lp" -gt 0 ] && [ "$la" -le 3 ]'
scrape
mp=$(metric kueue_pending_workloads 'cluster_queue="cluster-queue"' 'status="active"')
mi=$(metric kueue_pending_workloads 'cluster_queue="cluster-queue"' 'status="inadmissible"')
check "kueue_pending_workloads (active + inadmissible) > 0 while Jobs wait" "active '$mp' inadmissible '$mi'" \
    eval '[ -n "$mp" ] && [ -n "$mi" ] && [ $((mp + mi)) -gt 0 ]'
all_pend_complete() {
    local i
    for i in $(seq 1 10); do job_complete default "pend-$i" || return 1; done
}
wait_for 120 "all 10 Jobs complete" all_pend_complete
cols=$(k get clusterqueue cluster-queue)
check "kubectl get clusterqueue: no cohort, 0 pending, Active" "got '$cols'" \
    grep -Eq '^cluster-queue +0 +True ' <<<"$cols"
wait_for 15 "the LocalQueue's pending and admitted are 0" eval \
    '[ "$(k get localqueue user-queue -n default -o jsonpath="{.status.pendingWorkloads}/{.status.admittedWorkloads}")" = 0/0 ]'

######################## 4. Prometheus metrics ############################
E2E_PREFIX="${BASE_PREFIX}metrics: "
# cluster-queue admitted: filler, the sample Job, 10 pend-*
N=12
scrape
for m in kueue_admitted_workloads_total kueue_quota_reserved_workloads_total \
         kueue_finished_workloads_total kueue_admission_wait_time_seconds_count; do
    v=$(metric "$m" 'cluster_queue="cluster-queue"')
    check "$m = $N" "got '$v'" [ "$v" = "$N" ]
done
v="$(metric kueue_pending_workloads 'cluster_queue="cluster-queue"' 'status="active"') $(metric kueue_pending_workloads 'cluster_queue="cluster-queue"' 'status="inadmissible"')"
check "kueue_pending_workloads of cluster-queue is 0 at the end" "got '$v'" [ "$v" = "0 0" ]
v=$(metric kueue_cluster_queue_status 'cluster_queue="cluster-queue"' 'status="active"')
check "kueue_cluster_queue_status active = 1" "got '$v'" [ "$v" = 1 ]
v=$(metric kueue_cluster_queue_nominal_quota 'cohort=""' 'cluster_queue="cluster-queue"' 'flavor="default-flavor"' 'resource="cpu"')
check "kueue_cluster_queue_nominal_quota cpu = 9" "got '$v'" [ "$v" = 9 ]
v=$(metric kueue_cluster_queue_borrowing_limit 'cohort="team-ab"' 'cluster_queue="team-a-cq"' 'flavor="default-flavor"' 'resource="cpu"')
check "kueue_cluster_queue_borrowing_limit of team-a-cq cpu = 6" "got '$v'" [ "$v" = 6 ]
v=$(metric kueue_admission_attempts_total 'result="success"')
check "kueue_admission_attempts_total{result=success} >= 1" "got '$v'" eval '[ -n "$v" ] && [ "${v%%.*}" -ge 1 ]'
check "kueue_build_info is 1" "$(grep '^kueue_build_info' "$TMP/metrics")" grep -Eq '^kueue_build_info\{.*\} 1$' "$TMP/metrics"

######################### 5. Setup fair sharing ###########################
E2E_PREFIX="${BASE_PREFIX}fair-sharing: "
stop_pid "$CT_PID"
cat >"$TMP/fs-config.yaml" <<'YAML'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing:
  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
YAML
start_controller ctrl-fs -v 1 --config "$TMP/fs-config.yaml" --health-probe-bind-address 0 --metrics-bind-address 127.0.0.1:0
wait_for 30 "controller with fair sharing synced" grep -q "all informers synced" "$TMP/ctrl-fs.log"
wait_for 15 "it logs its metrics address" grep -q "metrics on [^ ]* (/metrics)" "$TMP/ctrl-fs.log"
metrics_url "$TMP/ctrl-fs.log"
k create namespace fs >/dev/null
k apply -f - >/dev/null <<'YAML' || fail "fair-sharing queues" "kubectl apply failed"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: fs-a}
spec:
  namespaceSelector: {}
  cohortName: fs
  fairSharing: {weight: "2"}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: fs-b}
spec:
  namespaceSelector: {}
  cohortName: fs
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: fs-shared}
spec:
  namespaceSelector: {}
  cohortName: fs
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 12}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: fs-a-queue, namespace: fs}
spec: {clusterQueue: fs-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: fs-b-queue, namespace: fs}
spec: {clusterQueue: fs-b}
YAML
wait_for 20 "fs-a, fs-b, fs-shared Active" eval 'cq_active fs-a && cq_active fs-b && cq_active fs-shared'
for i in $(seq 1 16); do job "a-$i" fs fs-a-queue 1 1 - 600s; echo ---; done | k create -f - >/dev/null
wait_for 60 "fs-a admits 16 cpu (4 own, 12 borrowed)" eval '[ "$(count_admitted fs-a)" -eq 16 ]'
share() { k get clusterqueue "$1" -o jsonpath='{.status.fairSharing.weightedShare}'; }
wait_for 15 "fs-a's weightedShare is 12/20*1000/2 = 300" eval '[ "$(share fs-a)" = 300 ]'
scrape
v=$(metric kueue_cluster_queue_weighted_share 'cluster_queue="fs-a"' 'cohort="fs"')
check "kueue_cluster_queue_weighted_share of fs-a = 300" "got '$v'" [ "$v" = 300 ]
for i in $(seq 1 6); do job "b-$i" fs fs-b-queue 1 1 - 600s; echo ---; done | k create -f - >/dev/null
wait_for 90 "fs-b admits its 6 Jobs (2 of them by fair-sharing preemption)" eval '[ "$(count_admitted fs-b)" -eq 6 ]'
wait_for 30 "fs-a keeps 14 admitted" eval '[ "$(count_admitted fs-a)" -eq 14 ]'
wait_for 15 "weightedShare: fs-a 10/20*1000/2 = 250, fs-b 2/20*1000 = 100" \
    eval '[ "$(share fs-a)/$(share fs-b)" = 250/100 ]'
npre=$(k get workloads -n fs -o json | jq '[.items[] | select(any(.status.conditions[]?; .type == "Preempted" and .reason == "InCohortFairSharing"))] | length')
check "2 fs-a Workloads preempted with reason InCohortFairSharing" "got $npre" [ "$npre" = 2 ]
scrape
v=$(metric kueue_preempted_workloads_total 'preempting_cluster_queue="fs-b"' 'reason="InCohortFairSharing"')
check "kueue_preempted_workloads_total{fs-b, InCohortFairSharing} = 2" "got '$v'" [ "$v" = 2 ]
sleep 3
check "stable: no further preemption, still 14 + 6 admitted" "fs-a $(count_admitted fs-a) fs-b $(count_admitted fs-b)" \
    eval '[ "$(count_admitted fs-a)/$(count_admitted fs-b)" = 14/6 ]'
k delete jobs --all -n fs --wait=false >/dev/null

E2E_PREFIX=$BASE_PREFIX
e2e_finish
