#!/usr/bin/env bash
# controller-invalid.sh - ClusterQueues that Kueue's webhooks and CRD rules
# would refuse, applied to `cueue cluster` (which has no webhook): the
# controller marks each Active=False with a message naming the field and
# the problem, admits nothing through them, lends none of their quota to
# the cohort, logs each problem once, and `cueue explain` shows it; a good
# queue beside them keeps admitting. A quota too large to hold (1e400) is
# such a problem too; 1Ei of memory is held (bytes, as Kueue counts it). Usage: PATH_TO_cueue
set -u
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq
start_cluster
apply_crds

cq() {   # cq NAME COHORT RESOURCE_GROUPS_YAML (one line, flow style)
    cat <<YAML
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $1}
spec:
  namespaceSelector: {}
  cohortName: $2
  resourceGroups: $3
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq-$1, namespace: default}
spec: {clusterQueue: $1}
YAML
}
{
    echo "apiVersion: kueue.x-k8s.io/v1beta2"
    echo "kind: ResourceFlavor"
    echo "metadata: {name: general}"
    echo "---"
    echo "apiVersion: kueue.x-k8s.io/v1beta2"
    echo "kind: ResourceFlavor"
    echo "metadata: {name: spare}"
    cq good co '[{coveredResources: [cpu], flavors: [{name: general, resources: [{name: cpu, nominalQuota: "2"}]}]}]'
    # nominalQuota -5: the probe saw "borrowed 5, total 0" and Ready
    cq neg co '[{coveredResources: [cpu], flavors: [{name: general, resources: [{name: cpu, nominalQuota: "-5"}]}]}]'
    # one flavor in two resource groups
    cq twogroups co '[{coveredResources: [cpu], flavors: [{name: spare, resources: [{name: cpu, nominalQuota: "8"}]}]}, {coveredResources: [memory], flavors: [{name: spare, resources: [{name: memory, nominalQuota: "8Gi"}]}]}]'
    # the same resource covered by two groups
    cq overlap co '[{coveredResources: [cpu], flavors: [{name: spare, resources: [{name: cpu, nominalQuota: "8"}]}]}, {coveredResources: [cpu], flavors: [{name: general, resources: [{name: cpu, nominalQuota: "8"}]}]}]'
    # lendingLimit above nominalQuota: 8 cpu the cohort must not get
    cq lender co '[{coveredResources: [cpu], flavors: [{name: general, resources: [{name: cpu, nominalQuota: "8", lendingLimit: "9"}]}]}]'
    # a quantity the CRD pattern accepts but too large to hold: the queue
    # must not vanish (its workloads were told it does not exist)
    cq huge big '[{coveredResources: [cpu], flavors: [{name: general, resources: [{name: cpu, nominalQuota: "1e400"}]}]}]'
    # memory is held in bytes, as Kueue: 1Ei is Active
    cq maxmem big '[{coveredResources: [memory], flavors: [{name: spare, resources: [{name: memory, nominalQuota: "1Ei"}]}]}]'
} | k apply -f - >/dev/null || { fail "apply the queues" "kubectl apply failed"; e2e_finish; }
# a 1 MB label value (a label value may have 63 characters): refused by an
# API server that validates labels, else applied and marked by the controller
big=$(head -c 1048576 /dev/zero | tr '\0' x)
printf '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"biglabel","labels":{"team":"%s"}},"spec":{"namespaceSelector":{},"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"general","resources":[{"name":"cpu","nominalQuota":"8"}]}]}]}}' "$big" >"$TMP/biglabel.json"
BIGLABEL=0
k apply -f "$TMP/biglabel.json" >/dev/null 2>"$TMP/biglabel.err" && BIGLABEL=1
unset big

start_controller ctrl -v 1

active() {   # active CQ STATUS REASON MESSAGE-SUBSTRING
    local j
    j=$(k get clusterqueue "$1" -o json 2>/dev/null) || return 1
    jq -e --arg s "$2" --arg r "$3" --arg m "$4" \
        '.status.conditions[] | select(.type == "Active") |
         .status == $s and .reason == $r and (.message | contains($m))' <<<"$j" >/dev/null
}
wait_for 20 "neg: Active=False, Invalid, nominalQuota named" active neg False Invalid \
    'spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "-5": must be greater than or equal to 0'
wait_for 10 "twogroups: Active=False, the flavor listed twice named" active twogroups False Invalid \
    'spec.resourceGroups[1].flavors[0].name: Duplicate value: "spare": already listed in spec.resourceGroups[0]'
wait_for 10 "overlap: Active=False, the resource covered twice named" active overlap False Invalid \
    'spec.resourceGroups[1].coveredResources[0]: Duplicate value: "cpu": already covered by spec.resourceGroups[0]'
wait_for 10 "lender: Active=False, lendingLimit named" active lender False Invalid \
    'spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: "9": must be less than or equal to the nominalQuota'
if [ "$BIGLABEL" = 1 ]; then
    wait_for 10 "biglabel: Active=False, the label named" active biglabel False Invalid \
        'metadata.labels[team]: Invalid value: "xxxx'
else
    pass "biglabel: refused by the API server ($(head -c 120 "$TMP/biglabel.err"))"
fi
wait_for 10 "huge: Active=False, nominalQuota 1e400 named" active huge False Invalid \
    'spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "1e400": too large: Cueue holds an amount of cpu up to 9223372036854775807m, as Kueue (int64 milli-units)'
wait_for 10 "maxmem: 1Ei of memory held, Active=True" active maxmem True Ready ""
wait_for 10 "good: Active=True" active good True Ready ""
# neg shows no quota at all (the probe saw "borrowed 5, total 0")
no_quota() { [ "$(k get clusterqueue "$1" -o json | jq '[.status.flavorsReservation[]?.resources[]?] | length')" = 0 ]; }
check "neg: no quota shown" "$(k get clusterqueue neg -o json | jq -c .status.flavorsReservation)" no_quota neg

# workloads: one into an invalid queue, one that would fit only by borrowing
# the invalid lender's quota, and one that fits the good queue
job_yaml into-neg 1 30s lq-neg | k apply -f - >/dev/null
job_yaml borrower 4 30s lq-good | k apply -f - >/dev/null
job_yaml fits 1 30s lq-good | k apply -f - >/dev/null
job_yaml into-huge 1 30s lq-huge | k apply -f - >/dev/null
wlof() { k get workloads -o json | jq -r --arg j "$1" '.items[] | select(.metadata.ownerReferences[0].name == $j) | .metadata.name'; }
pending_msg() {   # pending_msg JOB MESSAGE
    local w; w=$(wlof "$1"); [ -n "$w" ] || return 1
    k get workload "$w" -o json | jq -e --arg m "$2" \
        '.status.conditions[] | select(.type == "QuotaReserved") | .status == "False" and (.message | contains($m))' >/dev/null
}
admitted() { local w; w=$(wlof "$1"); [ -n "$w" ] && k get workload "$w" -o json | jq -e '.status.admission' >/dev/null; }
wait_for 20 "fits: admitted by the good queue beside the invalid ones" admitted fits
wait_for 10 "into-neg: pending, ClusterQueue neg is inactive" pending_msg into-neg "ClusterQueue neg is inactive"
wait_for 10 "into-huge: pending, ClusterQueue huge is inactive (not \"doesn't exist\")" pending_msg into-huge "ClusterQueue huge is inactive"
wait_for 10 "borrower: pending (the invalid lender's quota is not in the cohort)" pending_msg borrower "couldn't assign flavors"
sleep 2
not_admitted() { ! admitted "$1"; }
check "into-neg: never admitted" "it holds an admission" not_admitted into-neg
check "borrower: never admitted" "it holds an admission" not_admitted borrower

# cueue explain names the problem
"$CUEUE" explain --kubeconfig "$KC" "default/$(wlof into-neg)" >"$TMP/explain.out" 2>&1
check "explain: the field and the problem" "$(head -c 600 "$TMP/explain.out")" \
    grep -q 'ClusterQueue neg: inactive, spec.resourceGroups\[0\].flavors\[0\].resources\[0\].nominalQuota: Invalid value: "-5"' "$TMP/explain.out"

# the log: each problem once (not on every status write or resync)
sleep 2
n=$(grep -c 'invalid ClusterQueue neg: spec.resourceGroups\[0\].flavors\[0\].resources\[0\].nominalQuota' "$TMP/ctrl.log")
check "log: the problem of neg logged once" "logged $n times" [ "$n" = 1 ]

# fixing the queue makes it active again
k patch clusterqueue neg --type merge -p '{"spec":{"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"general","resources":[{"name":"cpu","nominalQuota":"5"}]}]}]}}' >/dev/null
wait_for 20 "neg fixed: Active=True" active neg True Ready ""
wait_for 20 "into-neg: admitted once neg is fixed" admitted into-neg

dump() {
    show "$TMP/ctrl.log" "controller log" 60
    k get clusterqueues -o yaml 2>&1 | grep -E "name:|message|reason|status:" | head -60
}
e2e_finish
