#!/usr/bin/env bash
# controller-basic.sh - end to end: `cueue cluster` + `cueue controller` +
# kubectl. One flavor (the general CPU pool), a ClusterQueue with cpu 4, a
# LocalQueue, and two suspended Jobs of cpu 3 each; the first runs $RUNTIME
# (default 12s), the second 3s. The first
# is admitted (Workload status.admission, Job unsuspended with the flavor's
# nodeSelector, pods run and finish, Workload Finished); the second waits
# with Kueue's pending message until the first finishes, then is admitted.
# While it runs, the admitted cpu of the ClusterQueue is sampled and must
# never exceed 4.
#
# Usage: e2e/controller-basic.sh PATH_TO_cueue
# Needs: kubectl, jq, timeout.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq

dump() {
    show "$TMP/ctrl.log" "controller log"
    echo "---- workloads"; k get workloads -o yaml 2>&1 | sed 's/^/  | /' | tail -n 80
}

start_cluster
apply_crds
quota_setup --labels '{node.example.com/pool: general}' cq:lq:4

start_controller ctrl -v 1
wait_for 60 "controller synced" grep -q "all informers synced" "$TMP/ctrl.log"

# The first pod's simulated run time: long enough for the checks made while
# it runs, even on a loaded machine (5 s was not: the second Job was
# admitted before a poll saw it pending).
RUNTIME=${RUNTIME:-12s}
job_yaml first 3 "$RUNTIME" lq | k apply -f - >/dev/null || fail "create Job first" "kubectl failed"

# Samples the admitted cpu of cq (sum of resourceUsage of Workloads holding
# quota and not finished) into $TMP/samples until killed.
sample() {
    while :; do
        k get workloads -n default -o json 2>/dev/null | jq -r '
          [.items[] | select(.status.admission.clusterQueue == "cq")
           | select(any(.status.conditions[]?; .type == "QuotaReserved" and .status == "True"))
           | select(all(.status.conditions[]?; .type != "Finished" or .status != "True"))
           | .status.admission.podSetAssignments[].resourceUsage.cpu // "0"
           | tonumber] | add // 0' >>"$TMP/samples"
        sleep 0.2
    done
}
sample &
SAMPLER=$!

uid_of() { k get job "$1" -n default -o jsonpath='{.metadata.uid}'; }
wl_of() {   # the Workload owned by Job $1
    k get workloads -n default -o json | jq -r --arg j "$1" \
      '.items[] | select(.metadata.ownerReferences[]? | .kind == "Job" and .name == $j and .controller == true) | .metadata.name'
}
wl_json() { local n; n=$(wl_of "$1") && [ -n "$n" ] && k get workload "$n" -n default -o json; }
has_wl() { [ -n "$(wl_of "$1")" ]; }

wait_for 60 "Workload created for Job first" has_wl first
# The second Job only once the first has its Workload: queue order is the
# order the Workloads were created in, and on a loaded real API server the
# first write to a custom resource can take seconds (a CI run saw the
# second Job's Workload created 0.8 s before the first's, a second after
# its Job).
job_yaml second 3 3s lq | k apply -f - >/dev/null || fail "create Job second" "kubectl failed"
wait_for 60 "Workload created for Job second" has_wl second
WL1=$(wl_of first)
case "$WL1" in job-first-?????) pass "Workload named as Kueue names it ($WL1)";;
               *) fail "Workload name" "got '$WL1'";; esac

adm_first() { wl_json first | jq -e '.status.admission.clusterQueue == "cq" and
    (.status.admission.podSetAssignments[0].flavors.cpu == "general") and
    any(.status.conditions[]; .type == "QuotaReserved" and .status == "True" and .message == "Quota reserved in ClusterQueue cq") and
    any(.status.conditions[]; .type == "Admitted" and .status == "True")'; }
wait_for 60 "first admitted (status.admission, QuotaReserved, Admitted)" adm_first
unsusp() { k get job "$1" -n default -o json | jq -e '.spec.suspend == false and
    .spec.template.spec.nodeSelector["node.example.com/pool"] == "general"'; }
wait_for 60 "Job first unsuspended with the flavor's nodeSelector" unsusp first

# pending with Kueue's message while its Job is still suspended (checked
# at the same moment: once the first Job finishes, it is admitted)
pending_second() { wl_json second | jq -e '(.status.admission == null) and
    any(.status.conditions[]; .type == "QuotaReserved" and .status == "False" and
        (.message | test("insufficient unused quota for cpu in flavor general")))' &&
    k get job second -n default -o jsonpath='{.spec.suspend}' | grep -qx true; }
wait_for 60 "second pending with Kueue's message, Job second suspended" pending_second

done_first() { k get job first -n default -o json | jq -e 'any(.status.conditions[]?; .type == "Complete" and .status == "True")'; }
wait_for 90 "Job first completes (pods ran)" done_first
fin_first() { wl_json first | jq -e 'any(.status.conditions[]; .type == "Finished" and .status == "True" and .reason == "Succeeded")'; }
wait_for 60 "Workload first Finished" fin_first

adm_second() { wl_json second | jq -e '.status.admission.clusterQueue == "cq" and any(.status.conditions[]; .type == "Admitted" and .status == "True")'; }
wait_for 60 "second admitted after first finished" adm_second
wait_for 60 "Job second unsuspended" unsusp second
done_second() { k get job second -n default -o json | jq -e 'any(.status.conditions[]?; .type == "Complete" and .status == "True")'; }
wait_for 90 "Job second completes" done_second

stop_pid "$SAMPLER"
N=$(wc -l <"$TMP/samples")
MAX=$(sort -g "$TMP/samples" | tail -n 1)
if [ "$N" -gt 5 ] && awk '$1 > 4 { bad = 1 } END { exit bad }' "$TMP/samples"; then
    pass "quota never exceeded ($N samples, max admitted cpu $MAX of 4)"
else
    fail "quota never exceeded" "$N samples, max $MAX"
fi

k delete job first -n default --wait=false >/dev/null
gone() { local n; n=$(wl_of first) && [ -z "$n" ]; }
wait_for 60 "Workload deleted with its Job" gone

grep -c "admitted Workload" "$TMP/ctrl.log" | grep -qx 2 && pass "one log line per admission" \
    || fail "one log line per admission" "$(grep -c 'admitted Workload' "$TMP/ctrl.log") lines"

kill -TERM "$CT_PID"; wait "$CT_PID"; rc=$?; CT_PID=""
[ "$rc" -eq 0 ] && pass "controller exits 0 on SIGTERM" || fail "controller exits 0 on SIGTERM" "exit $rc"
# every write was accepted (the real API server refused the queue status
# writes once: 400 on a YAML escape the embedded cluster accepts)
STOPPED=$(grep -o 'stopped: .*' "$TMP/ctrl.log" | tail -n 1)
[[ "$STOPPED" == *" write_errors=0 "* ]] && pass "no write refused by the API server (write_errors=0)" \
    || fail "no write refused" "${STOPPED:-no stop line}; $(grep -m 3 ' failed: HTTP' "$TMP/ctrl.log" | tr '\n' ';')"

e2e_finish
