#!/usr/bin/env bash
# printer-columns.sh - end to end: the CRDs' additionalPrinterColumns as
# `kubectl get` shows them from `cueue cluster` after `cueue controller` has
# written statuses. Setup: cohort team (parent org), ClusterQueue main (cpu 4,
# cohort team), ClusterQueue held (stopPolicy Hold), LocalQueue lq -> main,
# LocalQueue orphan -> a ClusterQueue that does not exist. Jobs: short (cpu 2,
# finishes), long (cpu 2, keeps running), wait (cpu 3, pending behind long);
# Workloads written directly: big (priority 7, cpu 10, never fits) and paused
# (active: false).
#
# Checks the column headers (default and -o wide, i.e. priority-1 columns),
# and the cells against the objects: names, counts from .status, condition
# statuses and reasons through the filter JSONPaths
# (.status.conditions[?(@.type=='Admitted')].status), integer, boolean and
# date (age) cells.
#
# Usage: e2e/printer-columns.sh PATH_TO_cueue
# Needs: kubectl, jq, timeout.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq

dump() {
    show "$TMP/ctrl.log" "controller log"
    echo "---- kubectl get -o wide"
    k get clusterqueues,localqueues,workloads,cohorts -A -o wide 2>&1 | sed 's/^/  | /'
}

# cell FILE ROW COLUMN: the cell of column COLUMN (a header, e.g. "PENDING
# WORKLOADS") in the row whose first cell is ROW, from `kubectl get` output
# without -A (one resource kind). Columns start where the header has a name
# after two or more spaces (kubectl pads by 3; names have single spaces);
# a cell runs to the start of the next column and is trimmed. Fails when
# the column or the row is missing.
cell() {
    awk -v row="$2" -v col="$3" '
        NR == 1 {
            h = $0; n = 0; p = 1
            while (p <= length(h)) {
                rest = substr(h, p)
                if (match(rest, /[^ ]+( [^ ]+)*/) == 0) break
                n++; start[n] = p + RSTART - 1; name[n] = substr(rest, RSTART, RLENGTH)
                p = start[n] + RLENGTH
            }
            for (i = 1; i <= n; i++) if (name[i] == col) want = i
            if (!want) exit 3
            next
        }
        $1 == row {
            len = want < n ? start[want + 1] - start[want] : length($0)
            v = substr($0, start[want], len)
            gsub(/^ +| +$/, "", v)
            print v; found = 1; exit
        }
        END { if (!found) exit 4 }' "$1"
}

# expect FILE ROW COLUMN WANT DESC: PASS when the cell is WANT.
expect() {
    local got
    got=$(cell "$1" "$2" "$3") || { fail "$5: $2 $3" "no such row or column"; return; }
    if [ "$got" = "$4" ]; then pass "$5: $2 $3 = '$4'"
    else fail "$5: $2 $3" "got '$got', want '$4'"; fi
}

# header FILE: the first line with runs of spaces squeezed to "|".
header() { head -n 1 "$1" | sed -E 's/ {2,}/|/g; s/ +$//'; }

expect_header() {
    local got
    got=$(header "$1")
    if [ "$got" = "$3" ]; then pass "$2 header: $3"
    else fail "$2 header" "got '$got', want '$3'"; fi
}

start_cluster
apply_crds

cat >"$TMP/setup.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: general}
spec:
  nodeLabels: {node.example.com/pool: general}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: team}
spec: {parentName: org}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: main}
spec:
  cohortName: team
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: general
      resources:
      - {name: cpu, nominalQuota: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: held}
spec:
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  stopPolicy: Hold
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: general
      resources:
      - {name: cpu, nominalQuota: "1"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: main}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: orphan, namespace: default}
spec: {clusterQueue: nope}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
YAML
workload_yaml() {   # NAME CPU EXTRA_SPEC_LINE
    cat <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: $1, namespace: default}
spec:
  queueName: lq
  $3
  podSets:
  - name: main
    count: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: busybox
          resources: {requests: {cpu: "$2"}}
YAML
}
k apply -f "$TMP/setup.yaml" >/dev/null || { fail "apply setup" "kubectl failed"; e2e_finish; }
{ workload_yaml big 10 "priority: 7"; echo ---; workload_yaml paused 1 "active: false"; } |
    k apply -f - >/dev/null || fail "create Workloads big and paused" "kubectl failed"

# Before the controller runs: no statuses, so the status columns are empty.
k get clusterqueues >"$TMP/cq0" 2>&1
expect "$TMP/cq0" main "PENDING WORKLOADS" "" "no status yet"
expect "$TMP/cq0" main ACTIVE "" "no status yet"

start_controller ctrl
wait_for 15 "controller synced" grep -q "all informers synced" "$TMP/ctrl.log"
job_yaml short 2 1s lq | k apply -f - >/dev/null || fail "create Job short" "kubectl failed"
job_yaml long 2 600s lq | k apply -f - >/dev/null || fail "create Job long" "kubectl failed"

wl_of() {   # the Workload owned by Job $1
    k get workloads -n default -o json | jq -r --arg j "$1" \
      '.items[] | select(.metadata.ownerReferences[]? | .kind == "Job" and .name == $j) | .metadata.name'
}
cond() {    # Workload $1 has condition $2 with status $3
    k get workload "$1" -n default -o json |
        jq -e --arg t "$2" --arg s "$3" 'any(.status.conditions[]?; .type == $t and .status == $s)' >/dev/null
}
short_done() { local w; w=$(wl_of short) && [ -n "$w" ] && cond "$w" Finished True; }
long_admitted() { local w; w=$(wl_of long) && [ -n "$w" ] && cond "$w" Admitted True; }
wait_for 30 "Job short's Workload Finished" short_done
wait_for 15 "Job long's Workload Admitted" long_admitted
job_yaml wait 3 1s lq | k apply -f - >/dev/null || fail "create Job wait" "kubectl failed"
wait_pending() {
    local w; w=$(wl_of wait) && [ -n "$w" ] && cond "$w" QuotaReserved False
}
wait_for 15 "Job wait's Workload pending (QuotaReserved False)" wait_pending
big_pending() { cond big QuotaReserved False; }
wait_for 15 "Workload big pending" big_pending
# queue statuses with the final numbers: pending 2 (wait, big; paused is not
# active so not pending), admitted 1 (long)
cq_settled() {
    k get clusterqueue main -o json |
        jq -e '.status.pendingWorkloads == 2 and .status.admittedWorkloads == 1' >/dev/null
}
wait_for 20 "ClusterQueue main status settled (pending 2, admitted 1)" cq_settled
lq_settled() {
    k get localqueue lq -n default -o json |
        jq -e '.status.pendingWorkloads == 2 and .status.admittedWorkloads == 1' >/dev/null
}
wait_for 20 "LocalQueue lq status settled" lq_settled
held_inactive() { k get clusterqueue held -o json | jq -e '.status.conditions[]? | select(.type == "Active") | .status == "False"' >/dev/null; }
wait_for 15 "ClusterQueue held inactive" held_inactive
orphan_inactive() { k get localqueue orphan -n default -o json | jq -e '.status.conditions[]? | select(.type == "Active") | .status == "False"' >/dev/null; }
wait_for 15 "LocalQueue orphan inactive" orphan_inactive

W_SHORT=$(wl_of short) W_LONG=$(wl_of long) W_WAIT=$(wl_of wait)

# ---- ClusterQueue
k get clusterqueues >"$TMP/cq" 2>&1
k get clusterqueues -o wide >"$TMP/cqw" 2>&1
expect_header "$TMP/cq" "ClusterQueue" "NAME|COHORT|PENDING WORKLOADS|ACTIVE|AGE"
expect_header "$TMP/cqw" "ClusterQueue -o wide" \
    "NAME|COHORT|STRATEGY|PENDING WORKLOADS|RESERVING WORKLOADS|ADMITTED WORKLOADS|ACTIVE|REASON|AGE"
expect "$TMP/cq" main COHORT team "cq"
expect "$TMP/cq" held COHORT "" "cq"
expect "$TMP/cq" main "PENDING WORKLOADS" "$(k get cq main -o jsonpath='{.status.pendingWorkloads}')" "cq (= status)"
expect "$TMP/cq" main "PENDING WORKLOADS" 2 "cq"
expect "$TMP/cq" main ACTIVE True "cq"
expect "$TMP/cq" held ACTIVE False "cq"
expect "$TMP/cqw" main STRATEGY BestEffortFIFO "cq wide (default applied)"
expect "$TMP/cqw" held STRATEGY StrictFIFO "cq wide"
expect "$TMP/cqw" main "RESERVING WORKLOADS" 1 "cq wide"
expect "$TMP/cqw" main "ADMITTED WORKLOADS" 1 "cq wide"
expect "$TMP/cqw" held "ADMITTED WORKLOADS" 0 "cq wide"
expect "$TMP/cqw" main REASON Ready "cq wide"
expect "$TMP/cqw" held REASON Stopped "cq wide"
age=$(cell "$TMP/cq" main AGE)
[[ "$age" =~ ^[0-9]+(s|m[0-9]*s?)$ ]] && pass "cq: main AGE is an age ('$age')" \
    || fail "cq: main AGE" "got '$age'"

# ---- LocalQueue
k get localqueues -n default >"$TMP/lq" 2>&1
k get localqueues -n default -o wide >"$TMP/lqw" 2>&1
expect_header "$TMP/lq" "LocalQueue" "NAME|CLUSTERQUEUE|PENDING WORKLOADS|ADMITTED WORKLOADS|ACTIVE|AGE"
expect_header "$TMP/lqw" "LocalQueue -o wide" \
    "NAME|CLUSTERQUEUE|PENDING WORKLOADS|RESERVING WORKLOADS|ADMITTED WORKLOADS|ACTIVE|REASON|AGE"
expect "$TMP/lq" lq CLUSTERQUEUE main "lq"
expect "$TMP/lq" lq "PENDING WORKLOADS" 2 "lq"
expect "$TMP/lq" lq "ADMITTED WORKLOADS" 1 "lq"
expect "$TMP/lq" lq ACTIVE True "lq"
expect "$TMP/lq" orphan CLUSTERQUEUE nope "lq"
expect "$TMP/lq" orphan "PENDING WORKLOADS" 0 "lq"
expect "$TMP/lq" orphan ACTIVE False "lq"
expect "$TMP/lqw" lq "RESERVING WORKLOADS" 1 "lq wide"
expect "$TMP/lqw" orphan REASON ClusterQueueDoesNotExist "lq wide"

# ---- Workload
k get workloads -n default >"$TMP/wl" 2>&1
k get workloads -n default -o wide >"$TMP/wlw" 2>&1
expect_header "$TMP/wl" "Workload" "NAME|QUEUE|RESERVED IN|ADMITTED|FINISHED|AGE"
expect_header "$TMP/wlw" "Workload -o wide" \
    "NAME|QUEUE|RESERVED IN|ADMITTED|FINISHED|AGE|PRIORITY|ACTIVE|MESSAGE"
expect "$TMP/wl" "$W_SHORT" QUEUE lq "wl short"
expect "$TMP/wl" "$W_SHORT" "RESERVED IN" main "wl short"
expect "$TMP/wl" "$W_SHORT" ADMITTED True "wl short"
expect "$TMP/wl" "$W_SHORT" FINISHED True "wl short"
expect "$TMP/wl" "$W_LONG" "RESERVED IN" main "wl long"
expect "$TMP/wl" "$W_LONG" ADMITTED True "wl long"
expect "$TMP/wl" "$W_LONG" FINISHED "" "wl long"
expect "$TMP/wl" "$W_WAIT" QUEUE lq "wl wait"
expect "$TMP/wl" "$W_WAIT" "RESERVED IN" "" "wl wait"
expect "$TMP/wl" "$W_WAIT" ADMITTED "" "wl wait"
expect "$TMP/wlw" big PRIORITY 7 "wl wide"
expect "$TMP/wlw" big ACTIVE true "wl wide"
expect "$TMP/wlw" paused ACTIVE false "wl wide"
expect "$TMP/wlw" "$W_LONG" MESSAGE "Quota reserved in ClusterQueue main" "wl wide"
msg=$(cell "$TMP/wlw" "$W_WAIT" MESSAGE)
want=$(k get workload "$W_WAIT" -n default -o json |
    jq -r '.status.conditions[] | select(.type == "QuotaReserved") | .message')
if [ -n "$msg" ] && [ "$msg" = "$want" ] && [[ "$msg" == *"insufficient"* ]]; then
    pass "wl wide: $W_WAIT MESSAGE is the QuotaReserved message ('$msg')"
else fail "wl wide: $W_WAIT MESSAGE" "got '$msg', want '$want' (with 'insufficient')"; fi
age=$(cell "$TMP/wl" big AGE)
[[ "$age" =~ ^[0-9]+(s|m[0-9]*s?)$ ]] && pass "wl: big AGE is an age ('$age')" \
    || fail "wl: big AGE" "got '$age'"

# ---- Cohort and WorkloadPriorityClass
k get cohorts >"$TMP/co" 2>&1
expect_header "$TMP/co" "Cohort" "NAME|PARENT|AGE"
expect "$TMP/co" team PARENT org "cohort"
expect "$TMP/co" org PARENT "" "cohort"
k get workloadpriorityclasses >"$TMP/wpc" 2>&1
expect_header "$TMP/wpc" "WorkloadPriorityClass" "NAME|VALUE|AGE"
expect "$TMP/wpc" high VALUE 1000 "wpc"

# ---- the three kinds at once, as issue 6 asks
if k get clusterqueues,localqueues,workloads -A >"$TMP/all" 2>&1 &&
   grep -Eq '^NAME +COHORT +PENDING WORKLOADS +ACTIVE +AGE *$' "$TMP/all" &&
   grep -Eq '^NAMESPACE +NAME +CLUSTERQUEUE +PENDING WORKLOADS +ADMITTED WORKLOADS +ACTIVE +AGE *$' "$TMP/all" &&
   grep -Eq '^NAMESPACE +NAME +QUEUE +RESERVED IN +ADMITTED +FINISHED +AGE *$' "$TMP/all" &&
   grep -Eq "^default +workload.kueue.x-k8s.io/$W_LONG +lq +main +True +[0-9]" "$TMP/all"; then
    pass "kubectl get clusterqueues,localqueues,workloads -A"
else fail "kubectl get clusterqueues,localqueues,workloads -A" "$(cat "$TMP/all")"; fi

# ---- short names and categories exactly as Kueue v0.17.0's CRDs declare them
# (config/components/crd/bases): each short name lists what the plural lists;
# Cohort and WorkloadPriorityClass have none and no CRD has a category.
for pair in cq:clusterqueues queue:localqueues queues:localqueues lq:localqueues \
    flavor:resourceflavors flavors:resourceflavors rf:resourceflavors \
    kwl:workloads kueueworkload:workloads kueueworkloads:workloads; do
    short=${pair%%:*} plural=${pair#*:}
    if k get "$short" -A -o name >"$TMP/sn" 2>&1 && k get "$plural" -A -o name >"$TMP/pl" 2>&1 &&
       [ -s "$TMP/pl" ] && cmp -s "$TMP/sn" "$TMP/pl"; then
        pass "kubectl get $short lists the $plural"
    else fail "kubectl get $short" "$(cat "$TMP/sn")"; fi
done
for none in co wpc kueue; do
    if k get "$none" >"$TMP/none" 2>&1; then
        fail "kubectl get $none" "served, but Kueue declares no such short name or category"
    elif grep -q "doesn't have a resource type \"$none\"" "$TMP/none"; then
        pass "kubectl get $none: no such resource type, as with Kueue's CRDs"
    else fail "kubectl get $none" "$(cat "$TMP/none")"; fi
done

e2e_finish
