#!/usr/bin/env bash
# controller-features.sh - end to end: the behaviours of `cueue controller`
# beyond plain admission, against `cueue cluster` and kubectl. Two
# controllers run one after the other on one cluster, each section in its
# own namespace and ClusterQueue:
#
# Controller A (no --config, text log):
#  3. queue status: with Jobs of cpu 1, 2 and 3 in a ClusterQueue of cpu 4,
#     the ClusterQueue and LocalQueue status show 2 admitted/reserving and 1
#     pending workload, flavorsReservation and flavorsUsage of cpu 3 and
#     Active=True; within STATUS_S (default 3) s of the first two Jobs
#     finishing 1 admitted, 0 pending; of the last finishing, all 0.
#  4. events: QuotaReserved and Admitted on a Workload, CreatedWorkload and
#     Started on its Job, a Warning Pending on the Workload over quota.
#  5. an unlabelled Job in a namespace with a LocalQueue "default" gets a
#     Workload in queue default and is admitted (Kueue's default LocalQueue).
#  6. a Job requesting example.com/ignored, which its ClusterQueue does not
#     cover, stays pending.
#  1. preemption: a low-priority Job (cpu 4 of 4) runs; a high-priority Job
#     arrives. The low Workload gets Evicted=True (Preempted) and
#     Preempted=True (InClusterQueue); its Job is suspended with the
#     template's nodeSelector and tolerations restored; its Workload loses
#     status.admission (QuotaReserved=False, Requeued=True); the high Job
#     runs; when it finishes, the low one is admitted again (Evicted=False,
#     "Previously: ..."). Then stopPolicy HoldAndDrain on its ClusterQueue
#     evicts it (Evicted=True, ClusterQueueStopped; Job suspended, quota
#     released) and None admits it again. A watch of the Workloads,
#     replayed, shows that the two never hold quota at the same time.
#  7. SIGTERM: exit 0, last log line with requests= and admissions=.
#
# Controller B (--config: waitForPodsReady {timeout 4s, backoff base 1 s,
# max 2 s, limit 1}, manageJobsWithoutQueueName, excludeResourcePrefixes
# [example.com/], a transformation; --log-format json):
#  2. waitForPodsReady: a Job whose pods can never be scheduled gets
#     PodsReady=False (WaitForStart), then Evicted=True (PodsReadyTimeout)
#     with requeueState.count 1, is admitted again after the backoff, and
#     after the second timeout is deactivated (spec.active=false, Evicted
#     reason Deactivated; Job suspended). A Job that runs gets PodsReady=True.
#  5. an unlabelled Job in a namespace with a LocalQueue "default" is
#     admitted in queue default; one in kube-system gets no Workload.
#  6. the pending Job of section 6 and a new one are admitted now.
#  8. resources.transformations (example.org/slice Replace -> 2
#     example.org/credits each): of three 1-slice Jobs against 5 credits,
#     two are admitted with resourceUsage in credits (no slice), the third
#     pends on example.org/credits, 1 more needed, with status.resourceRequests
#     in credits.
#  7. every log line is a JSON object with ts, level and msg; SIGTERM exits
#     0 with requests= and admissions= in the last line; a bad --config
#     (waitForPodsReady.timeout: abc) exits 2 naming the field.
#
# Transient states (an eviction, a release of quota) are checked on a
# record of every version of the Workloads and Jobs concerned (`kubectl get
# -w -o json`), not by sampling, so a fast controller cannot slip past.
#
# Usage: e2e/controller-features.sh PATH_TO_cueue
# Needs: kubectl, jq, timeout. E2E_KEEP=1 keeps the logs and watch records;
# QS_RT (default 8s) and HIGH_RT (6s) are the section 3 and high Jobs' run
# times, STATUS_S (3; 6 on k8s) the delay allowed for queue status to follow
# a Job. CUEUE_E2E_CLUSTER=k8s runs it on the real control plane.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq
BASE_PREFIX=${E2E_PREFIX:-}   # "[k8s] " on the real cluster

# queue status must follow a finished Job within this (the real Job
# controller and API server add their own delays)
if [ "$E2E_CLUSTER" = k8s ]; then STATUS_S=${STATUS_S:-6}; else STATUS_S=${STATUS_S:-3}; fi
NOPORTS=(--health-probe-bind-address 0 --metrics-bind-address 0)

dump() {
    show "$TMP/ctrl-a.log" "controller A log" 40
    show "$TMP/ctrl-b.log" "controller B log" 40
    show "$TMP/cluster.log" "cluster log" 15
    echo "---- workloads"
    k get workloads -A -o json 2>&1 | jq -c '.items[]? | {ns: .metadata.namespace,
        name: .metadata.name, active: .spec.active, adm: .status.admission.clusterQueue,
        rq: .status.requeueState, conds: [.status.conditions[]? | "\(.type)=\(.status)/\(.reason)"]}' \
        2>&1 | sed 's/^/  | /' | tail -n 30
}

# fjob NAME NS LABELS REQUESTS RUNTIME [PODSPEC]: one suspended Job (one pod)
# with metadata.labels LABELS and container requests REQUESTS (YAML flow
# maps; limits $LIMITS when set), a simulated runtime, and PODSPEC lines
# (indented 6) added to the pod spec.
fjob() {
    cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: $2
  labels: $3
spec:
  suspend: true
  parallelism: 1
  completions: 1
  template:
    metadata:
      annotations: {cueue.dev/simulated-runtime: "$5"}
    spec:
      restartPolicy: Never
${6:-}
      containers:
      - name: main
        image: busybox
        resources: {requests: $4${LIMITS:+, limits: $LIMITS}}
YAML
}
mkjob() { fjob "$@" | k apply -f - >/dev/null || fail "create Job $2/$1" "kubectl failed"; }
Q() { echo "kueue.x-k8s.io/queue-name: $1"; }

# the Workload (name) owned by Job $2 of namespace $1, and its JSON
wl_of() {
    k get workloads -n "$1" -o json | jq -r --arg j "$2" '.items[] | select(.metadata.ownerReferences[]? |
        .kind == "Job" and .name == $j and .controller == true) | .metadata.name'
}
wl_json() { local n; n=$(wl_of "$1" "$2") && [ -n "$n" ] && k get workload "$n" -n "$1" -o json; }
job_json() { k get job "$2" -n "$1" -o json; }
# wl_is NS JOB JQ: the Workload of the Job satisfies JQ
wl_is() { wl_json "$1" "$2" | jq -e "$JQDEFS $3" >/dev/null; }
job_is() { job_json "$1" "$2" | jq -e "$JQDEFS $3" >/dev/null; }
has_wl() { [ -n "$(wl_of "$1" "$2")" ]; }

# jq definitions shared by the checks
JQDEFS='
def cond($t): first(.status.conditions[]? | select(.type == $t)) // null;
def is($t; $s): (cond($t) | .status) == $s;
def holds: .status.admission != null and is("QuotaReserved"; "True") and (is("Finished"; "True") | not);
def q: if type == "number" then . elif test("m$") then (.[:-1] | tonumber) / 1000 else tonumber end;
def total($f; $r): [.status[$f][]?.resources[]? | select(.name == $r) | .total | q] | add // 0;
def done: any(.status.conditions[]?; .type == "Complete" and .status == "True");
'

# record NAME RESOURCE NS: every version of the RESOURCE objects of NS as a
# watch delivers them (kubectl prints one JSON document per change) into
# $TMP/NAME.watch, in resourceVersion order. Stopped on exit.
record() {
    kubectl --kubeconfig "$KC" get "$2" -n "$3" -w -o json >"$TMP/$1.watch" 2>"$TMP/$1.watch.err" &
}
# hist NAME OBJ JQ: JQ applied to the array of recorded versions of object
# OBJ (its metadata.name) of record NAME.
hist() {
    jq -n -e --arg o "$2" "$JQDEFS [inputs | select(.metadata.name == \$o)] | $3" \
        "$TMP/$1.watch" >/dev/null 2>&1
}

start_cluster
apply_crds
for ns in pre qs dflt excl wfpr mjw xform; do
    k create namespace "$ns" >/dev/null || fail "create namespace $ns" "kubectl failed"
done
# kube-apiserver refuses pods in a namespace until its default
# ServiceAccount exists (the Job controller would back off)
has_sa() { k get serviceaccount default -n "$1" >/dev/null 2>&1; }
if [ "$E2E_CLUSTER" = k8s ]; then
    for ns in pre qs dflt excl wfpr mjw xform; do
        poll 60 has_sa "$ns" || fail "namespace $ns has its default ServiceAccount" "not within 60s"
    done
fi

# the queues of every section (controller B meets A's too: harmless)
k apply -f - >/dev/null <<'YAML' || { fail "apply queues" "kubectl failed"; e2e_finish; }
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: pool}
spec:
  nodeLabels: {node.example.com/pool: general}
  tolerations: [{key: example.com/reserved, operator: Exists, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: plain}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-pre}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: pool
      resources: [{name: cpu, nominalQuota: "4"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: pre}
spec: {clusterQueue: cq-pre}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-qs}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: plain
      resources: [{name: cpu, nominalQuota: "4"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: qs}
spec: {clusterQueue: cq-qs}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-misc}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: plain
      resources: [{name: cpu, nominalQuota: "20"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: default, namespace: dflt}
spec: {clusterQueue: cq-misc}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: default, namespace: mjw}
spec: {clusterQueue: cq-misc}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: excl}
spec: {clusterQueue: cq-misc}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-wfpr}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: plain
      resources: [{name: cpu, nominalQuota: "4"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: wfpr}
spec: {clusterQueue: cq-wfpr}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: credits}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-xform}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: plain
      resources: [{name: cpu, nominalQuota: "10"}]
  - coveredResources: [example.org/credits]
    flavors:
    - name: credits
      resources: [{name: example.org/credits, nominalQuota: "5"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: xform}
spec: {clusterQueue: cq-xform}
YAML
pass "queues applied"

###################### controller A: no configuration ######################
E2E_PREFIX="${BASE_PREFIX}A: "
start_controller ctrl-a -v 1 "${NOPORTS[@]}"
A_PID=$CT_PID
wait_for 20 "controller A synced" grep -q "all informers synced" "$TMP/ctrl-a.log"
record pre-wl workloads pre
record pre-job jobs pre

QS_RT=${QS_RT:-15s}   # a, b run this long: long enough to be seen holding quota on a loaded machine
mkjob a qs "{$(Q lq)}" '{cpu: "1"}' "$QS_RT"
mkjob b qs "{$(Q lq)}" '{cpu: "2"}' "$QS_RT"
sleep 1   # c is the newest: it is the one left pending
mkjob c qs "{$(Q lq)}" '{cpu: "3"}' "$QS_RT"
mkjob unlabelled dflt '{}' '{cpu: "1"}' 600s
# kube-apiserver wants a limit for an extended resource (not overcommitted)
XLIM='{example.com/ignored: "1"}'
LIMITS=$XLIM mkjob excl-1 excl "{$(Q lq)}" '{cpu: "1", example.com/ignored: "1"}' 600s
PRE_SPEC='      nodeSelector: {kubernetes.io/os: linux}
      tolerations: [{key: example.com/orig, operator: Exists, effect: NoSchedule}]'
mkjob low pre "{$(Q lq), kueue.x-k8s.io/priority-class: low}" '{cpu: "4"}' 600s "$PRE_SPEC"

# ---- 3. queue status
echo "-- 3. ClusterQueue and LocalQueue status"
cq_is() { k get clusterqueue "$1" -o json | jq -e "$JQDEFS $2" >/dev/null; }
lq_is() { k get localqueue "$2" -n "$1" -o json | jq -e "$JQDEFS $3" >/dev/null; }
st_is() {   # st_is ADMITTED PENDING CPU: both queues of section 3 show these
    local f=".status.admittedWorkloads == $1 and .status.reservingWorkloads == $1 and
        (.status.pendingWorkloads // 0) == $2 and total(\"flavorsReservation\"; \"cpu\") == $3 and
        total(\"flavorsUsage\"; \"cpu\") == $3 and is(\"Active\"; \"True\")"
    cq_is cq-qs "$f" && lq_is qs lq "$f"
}
ab_adm_c_pend() {
    wl_is qs a holds && wl_is qs b holds &&
        wl_is qs c '.status.admission == null and is("QuotaReserved"; "False")'
}
wait_for 30 "a and b admitted, c pending" ab_adm_c_pend
wait_for 15 "status: 2 admitted, 2 reserving, 1 pending, cpu 3 reserved and used, Active (CQ and LQ)" st_is 2 1 3
if cq_is cq-qs '[.status.flavorsUsage[] | .name] == ["plain"]'; then pass "flavorsUsage names flavor plain"
else fail "flavorsUsage names flavor plain" "$(k get clusterqueue cq-qs -o json | jq -c .status.flavorsUsage)"; fi
# the statuses are written by merge patches of the status, one field manager
mf_is() {   # mf_is KIND [-n NS] NAME: its status is written by cueue-queue-status
    k get "$@" -o json --show-managed-fields | jq -e '[.metadata.managedFields[]
        | select(.manager == "cueue-queue-status")] | length == 1 and .[0].operation == "Update"
        and .[0].subresource == "status" and (.[0].fieldsV1["f:status"] | has("f:flavorsUsage") and has("f:conditions"))' >/dev/null
}
if mf_is clusterqueue cq-qs && mf_is localqueue -n qs lq; then
    pass "queue statuses written by merge patches (field manager cueue-queue-status, subresource status)"
else fail "queue status field manager" "$(k get clusterqueue cq-qs -o json --show-managed-fields | jq -c '[.metadata.managedFields[] | {manager, operation, subresource}]')"; fi
# matches reality: the Workloads holding quota in cq-qs
real_cpu=$(k get workloads -n qs -o json | jq "$JQDEFS [.items[] | select(holds) |
    .status.admission.podSetAssignments[].resourceUsage.cpu | q] | add")
[ "$real_cpu" = 3 ] && pass "admitted Workloads' resourceUsage sums to the status' cpu 3" \
    || fail "resourceUsage sum" "got $real_cpu"

both_done() { job_is qs a done && job_is qs b done; }
if poll 40 both_done; then
    t0=$SECONDS
    if poll $((STATUS_S + 10)) st_is 1 0 3; then
        dt=$((SECONDS - t0))
        [ "$dt" -le "$STATUS_S" ] && pass "after a and b finished: 1 admitted, 0 pending, cpu 3 (${dt}s)" \
            || fail "status after a and b finished" "took ${dt}s (more than ${STATUS_S}s)"
    else
        fail "status after a and b finished" "not 1 admitted/0 pending/cpu 3 within $((STATUS_S + 10))s: $(k get clusterqueue cq-qs -o json | jq -c .status)"
    fi
else
    fail "Jobs a and b finish" "not within 40s"
fi
if poll 40 job_is qs c done; then
    t0=$SECONDS
    if poll $((STATUS_S + 10)) st_is 0 0 0; then
        dt=$((SECONDS - t0))
        [ "$dt" -le "$STATUS_S" ] && pass "after c finished: 0 admitted, 0 pending, cpu 0 (${dt}s)" \
            || fail "status after c finished" "took ${dt}s (more than ${STATUS_S}s)"
    else
        fail "status after c finished" "not all 0 within $((STATUS_S + 10))s: $(k get clusterqueue cq-qs -o json | jq -c .status)"
    fi
else
    fail "Job c finishes" "not within 40s"
fi

# ---- 4. events
echo "-- 4. Events"
k get events -n qs -o json >"$TMP/events-qs.json" || fail "kubectl get events" "failed"
WLA=$(wl_of qs a) WLC=$(wl_of qs c)
ev_has() {   # ev_has KIND NAME TYPE REASON
    jq -e --arg k "$1" --arg n "$2" --arg t "$3" --arg r "$4" 'any(.items[];
        .involvedObject.kind == $k and .involvedObject.name == $n and .type == $t and .reason == $r)' \
        "$TMP/events-qs.json" >/dev/null
}
for e in "Workload $WLA Normal QuotaReserved" "Workload $WLA Normal Admitted" \
         "Job a Normal CreatedWorkload" "Job a Normal Started" "Workload $WLC Warning Pending"; do
    set -- $e
    check "event $4 ($3) on $1 $2" "$(jq -c '[.items[] | [.involvedObject.kind, .involvedObject.name, .type, .reason]]' "$TMP/events-qs.json")" \
        ev_has "$@"
done

# ---- 5. LocalQueue "default" without manageJobsWithoutQueueName
echo "-- 5. an unlabelled Job and the namespace's LocalQueue default"
wait_for 20 "unlabelled Job in dflt: Workload in queue default, admitted" \
    wl_is dflt unlabelled '.spec.queueName == "default" and holds and .status.admission.clusterQueue == "cq-misc"'
wait_for 20 "unlabelled Job in dflt unsuspended" job_is dflt unlabelled '.spec.suspend == false'

# ---- 6. a resource the ClusterQueue does not cover, not excluded
echo "-- 6. a resource the ClusterQueue does not cover (no exclusion)"
wait_for 20 "Job with example.com/ignored pending (QuotaReserved=False, no admission)" \
    wl_is excl excl-1 '.status.admission == null and is("QuotaReserved"; "False")'
wl_json excl excl-1 | jq -r "$JQDEFS cond(\"QuotaReserved\") | \"   (message: \(.message))\""
job_is excl excl-1 '.spec.suspend == true' && pass "its Job stays suspended" \
    || fail "its Job stays suspended" "unsuspended"

# ---- 1. preemption
echo "-- 1. preemption within the ClusterQueue"
LOWSEL='{"kubernetes.io/os": "linux"}'
LOWTOL='[{"key": "example.com/orig", "operator": "Exists", "effect": "NoSchedule"}]'
low_started() {
    wl_is pre low holds && job_is pre low '.spec.suspend == false and
        .spec.template.spec.nodeSelector == {"kubernetes.io/os": "linux", "node.example.com/pool": "general"} and
        (.spec.template.spec.tolerations | length == 2 and
            any(.[]; .key == "example.com/reserved") and any(.[]; .key == "example.com/orig"))'
}
wait_for 30 "low admitted, Job started with the flavor's nodeLabels and tolerations added" low_started
WLLOW=$(wl_of pre low)
mkjob high pre "{$(Q lq), kueue.x-k8s.io/priority-class: high}" '{cpu: "4"}' "${HIGH_RT:-6s}"
wait_for 30 "low Workload: Evicted=True (Preempted) and Preempted=True (InClusterQueue)" \
    hist pre-wl "$WLLOW" 'any(.[]; is("Evicted"; "True") and (cond("Evicted") | .reason) == "Preempted" and
        is("Preempted"; "True") and (cond("Preempted") | .reason) == "InClusterQueue")'
# polled, not read once: the watch file may end in a half-written object, which
# jq refuses; the first Evicted=True version stays the first, so a retry
# cannot hide an empty message
wait_for 5 "Evicted has a message" \
    hist pre-wl "$WLLOW" 'first(.[] | select(is("Evicted"; "True"))) | cond("Evicted") | .message | length > 0'
grep -q "evicting Workload pre/$WLLOW" "$TMP/ctrl-a.log" && pass "log line 'evicting Workload pre/$WLLOW'" \
    || fail "eviction log line" "no 'evicting Workload pre/$WLLOW' in the log"
restored() {   # after it ran: suspended with the original nodeSelector and tolerations
    hist pre-job low "(map(.spec.suspend == false) | index(true)) as \$i | \$i != null and
        any(.[\$i:][]; .spec.suspend == true and .spec.template.spec.nodeSelector == $LOWSEL and
            .spec.template.spec.tolerations == $LOWTOL)"
}
wait_for 30 "Job low suspended, nodeSelector and tolerations restored to the original" restored
released() {
    hist pre-wl "$WLLOW" '(map(is("Evicted"; "True")) | index(true)) as $i | $i != null and
        any(.[$i:][]; .status.admission == null and is("QuotaReserved"; "False") and
            is("Requeued"; "True") and is("Evicted"; "True"))'
}
wait_for 30 "low Workload: status.admission removed, QuotaReserved=False, Requeued=True" released
wait_for 30 "high admitted" wl_is pre high 'holds and .status.admission.clusterQueue == "cq-pre"'
wait_for 30 "Job high started" job_is pre high '.spec.suspend == false'
wait_for 40 "Job high completes" job_is pre high done
readmitted() {
    wl_is pre low 'holds and is("Evicted"; "False") and (cond("Evicted") | .message | startswith("Previously:"))'
}
wait_for 30 "low admitted again: Evicted=False, message 'Previously: ...'" readmitted
wait_for 30 "Job low started again" job_is pre low '.spec.suspend == false'
wl_is pre low 'is("Preempted"; "False")' && pass "Preempted=False after re-admission" \
    || fail "Preempted=False after re-admission" "$(wl_json pre low | jq -c "$JQDEFS cond(\"Preempted\")")"
# ---- 1b. stopPolicy HoldAndDrain evicts an admitted Workload (Kueue's
# reason ClusterQueueStopped); None lets it in again
k patch clusterqueue cq-pre --type merge -p '{"spec":{"stopPolicy":"HoldAndDrain"}}' >/dev/null \
    || fail "stopPolicy HoldAndDrain" "kubectl patch failed"
drained() {
    hist pre-wl "$WLLOW" 'any(.[]; is("Evicted"; "True") and (cond("Evicted") | .reason) == "ClusterQueueStopped"
        and (cond("Evicted") | .message) == "The ClusterQueue is stopped")'
}
wait_for 30 "HoldAndDrain: low Workload Evicted=True (ClusterQueueStopped)" drained
wait_for 30 "HoldAndDrain: Job low suspended, quota released" \
    eval 'job_is pre low ".spec.suspend == true" && wl_is pre low ".status.admission == null"'
k patch clusterqueue cq-pre --type merge -p '{"spec":{"stopPolicy":"None"}}' >/dev/null \
    || fail "stopPolicy None" "kubectl patch failed"
wait_for 30 "stopPolicy None: low admitted again" wl_is pre low holds
# replay of the watch: how many Workloads held quota at once
MAXH=$(jq -n "$JQDEFS [foreach inputs as \$o ({}; .[\$o.metadata.name] = (\$o | holds);
    [.[] | select(.)] | length)] | max" "$TMP/pre-wl.watch")
NV=$(jq -n '[inputs] | length' "$TMP/pre-wl.watch")
if [ "$MAXH" = 1 ] && [ "$NV" -gt 5 ]; then pass "never both holding quota ($NV Workload versions replayed)"
else fail "never both holding quota" "at most $MAXH at once over $NV versions"; fi

# ---- 7. SIGTERM
k delete jobs --all -n pre --wait=false >/dev/null   # nothing left running for controller B
kill -TERM "$A_PID"; wait "$A_PID"; rc=$?; CT_PID=""
[ "$rc" -eq 0 ] && pass "controller A exits 0 on SIGTERM" || fail "controller A exits 0 on SIGTERM" "exit $rc"
last=$(tail -n 1 "$TMP/ctrl-a.log")
case "$last" in *requests=*admissions=*|*admissions=*requests=*) pass "last log line has admissions= and requests=";;
    *) fail "last log line has admissions= and requests=" "got: $last";; esac

###################### controller B: a configuration ######################
E2E_PREFIX="${BASE_PREFIX}B: "
cat >"$TMP/config.yaml" <<'YAML'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
manageJobsWithoutQueueName: true
waitForPodsReady:
  timeout: 4s
  requeuingStrategy:
    backoffBaseSeconds: 1
    backoffMaxSeconds: 2
    backoffLimitCount: 1
resources:
  excludeResourcePrefixes: [example.com/]
  transformations:
  - input: example.org/slice
    strategy: Replace
    outputs: {example.org/credits: "2"}
YAML
start_controller ctrl-b -v 1 --log-format json --config "$TMP/config.yaml" "${NOPORTS[@]}"
B_PID=$CT_PID
wait_for 20 "controller B synced" grep -q "all informers synced" "$TMP/ctrl-b.log"
record wfpr-wl workloads wfpr
record xform-wl workloads xform
mkjob ks kube-system '{}' '{cpu: "1"}' 600s
mkjob ok wfpr "{$(Q lq)}" '{cpu: "1"}' 600s
mkjob never wfpr "{$(Q lq)}" '{cpu: "1"}' 600s '      nodeSelector: {example.com/no-such-node: "true"}'
mkjob unlabelled mjw '{}' '{cpu: "1"}' 600s
LIMITS=$XLIM mkjob excl-2 excl "{$(Q lq)}" '{cpu: "1", example.com/ignored: "1"}' 600s
SLIM='{example.org/slice: "1"}'
for j in s-1 s-2 s-3; do
    LIMITS=$SLIM mkjob "$j" xform "{$(Q lq)}" '{cpu: "100m", example.org/slice: "1"}' 600s
    sleep 0.3   # creation order is queue order
done

# ---- 6. excludeResourcePrefixes
echo "-- 6. excludeResourcePrefixes"
wait_for 30 "the pending Job with example.com/ignored is admitted now" wl_is excl excl-1 holds
wait_for 30 "a new Job with example.com/ignored is admitted" wl_is excl excl-2 holds
k delete jobs --all -n excl --wait=false >/dev/null   # their pods cannot be scheduled

# ---- 8. resources.transformations (checked on the watch record: their
# pods cannot be scheduled, so waitForPodsReady evicts them after 4 s)
echo "-- 8. resources.transformations"
# xhist JOB JQ: the history of the Job's Workload satisfies JQ
xhist() { local n; n=$(wl_of xform "$1") && [ -n "$n" ] && hist xform-wl "$n" "$2"; }
wait_for 30 "s-1 and s-2 (2 credits each) admitted" eval 'xhist s-1 "any(.[]; holds)" && xhist s-2 "any(.[]; holds)"'
wait_for 10 "resourceUsage in transformed terms (example.org/credits 2, no example.org/slice)" \
    xhist s-1 'any(.[]; holds and (.status.admission.podSetAssignments[0] |
        .resourceUsage == {"cpu": "100m", "example.org/credits": "2"} and
        .flavors["example.org/credits"] == "credits"))'
wait_for 30 "s-3 pends on example.org/credits, 1 more needed" \
    xhist s-3 'any(.[]; .status.admission == null and ((cond("QuotaReserved") | .message) // "" |
        test("insufficient unused quota for example.org/credits in flavor credits, 1 more needed")))'
wait_for 10 "s-3: status.resourceRequests in transformed terms, as Kueue writes it with the pending reason" \
    xhist s-3 'any(.[]; .status.admission == null and
        .status.resourceRequests == [{"name": "main", "resources": {"cpu": "100m", "example.org/credits": "2"}}])'
k delete jobs --all -n xform --wait=false >/dev/null   # their pods cannot be scheduled

# ---- 2. waitForPodsReady
echo "-- 2. waitForPodsReady"
wait_for 30 "a running Job's Workload gets PodsReady=True" wl_is wfpr ok 'holds and is("PodsReady"; "True")'
wait_for 30 "Workload never: admitted" has_wl wfpr never
WLN=$(wl_of wfpr never)
wait_for 30 "never: PodsReady=False (WaitForStart) while admitted" \
    hist wfpr-wl "$WLN" 'any(.[]; holds and is("PodsReady"; "False") and (cond("PodsReady") | .reason) == "WaitForStart")'
wait_for 40 "never: Evicted=True (PodsReadyTimeout), requeueState.count 1" \
    hist wfpr-wl "$WLN" 'any(.[]; is("Evicted"; "True") and (cond("Evicted") | .reason) == "PodsReadyTimeout" and
        .status.requeueState.count == 1)'
# re-admitted after the eviction, not before requeueAt (second precision)
readm() {
    hist wfpr-wl "$WLN" 'def sec: sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601;
        (map(is("Evicted"; "True") and (cond("Evicted") | .reason) == "PodsReadyTimeout") | index(true)) as $i |
        $i != null and (.[$i:] | (map(.status.admission == null) | index(true)) as $j | $j != null and
        (.[$j:] | any(.[]; holds and .status.requeueState.count == 1 and
            (cond("QuotaReserved") | .lastTransitionTime | sec) >= (.status.requeueState.requeueAt | sec))))'
}
wait_for 40 "never: quota released, then admitted again after the backoff (requeueAt)" readm
deact() {
    wl_is wfpr never '.spec.active == false and is("Evicted"; "True") and (cond("Evicted") | .reason) == "Deactivated"'
}
wait_for 30 "never: deactivated after the second timeout (spec.active=false, Evicted Deactivated)" deact
wait_for 15 "Job never suspended" job_is wfpr never '.spec.suspend == true'

# ---- 5. manageJobsWithoutQueueName
echo "-- 5. manageJobsWithoutQueueName"
wait_for 30 "unlabelled Job in mjw: Workload in queue default, admitted" \
    wl_is mjw unlabelled '.spec.queueName == "default" and holds'
sleep 1
if [ -z "$(wl_of kube-system ks)" ] && job_is kube-system ks '.spec.suspend == true'; then
    pass "unlabelled Job in kube-system left alone (no Workload, still suspended)"
else
    fail "unlabelled Job in kube-system left alone" "Workload '$(wl_of kube-system ks)', suspend $(job_json kube-system ks | jq .spec.suspend)"
fi

# ---- 7. operational
echo "-- 7. JSON log, SIGTERM, bad configuration"
kill -TERM "$B_PID"; wait "$B_PID"; rc=$?; CT_PID=""
[ "$rc" -eq 0 ] && pass "controller B exits 0 on SIGTERM" || fail "controller B exits 0 on SIGTERM" "exit $rc"
NL=$(wc -l <"$TMP/ctrl-b.log")
NOBJ=$(jq -n '[inputs | select(type == "object" and (.ts | type) == "string" and
    (.level | type) == "string" and (.msg | type) == "string")] | length' "$TMP/ctrl-b.log" 2>/dev/null)
[ "$NL" -gt 5 ] && [ "${NOBJ:-0}" = "$NL" ] && pass "all $NL log lines are JSON objects with ts, level, msg" \
    || fail "JSON log lines" "$NL lines, ${NOBJ:-parse error} objects with ts/level/msg"
tail -n 1 "$TMP/ctrl-b.log" | jq -e '.msg | test("requests=") and test("admissions=")' >/dev/null \
    && pass "last JSON log line has admissions= and requests=" \
    || fail "last JSON log line" "$(tail -n 1 "$TMP/ctrl-b.log")"
grep -q '"msg":"admitted Workload' "$TMP/ctrl-b.log" && pass "admissions logged as JSON" \
    || fail "admissions logged as JSON" "no admitted Workload line"

sed 's/timeout: 4s/timeout: abc/' "$TMP/config.yaml" >"$TMP/bad.yaml"
timeout 30 "$CUEUE" controller --kubeconfig "$KC" --config "$TMP/bad.yaml" "${NOPORTS[@]}" \
    >"$TMP/bad.out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "waitForPodsReady.timeout" "$TMP/bad.out"; then
    pass "bad --config exits 2 naming waitForPodsReady.timeout"
else
    fail "bad --config" "exit $rc: $(head -c 300 "$TMP/bad.out")"
fi
echo "   ($(head -n 1 "$TMP/bad.out"))"

E2E_PREFIX=$BASE_PREFIX
e2e_finish
