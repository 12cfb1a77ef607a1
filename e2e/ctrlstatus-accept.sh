#!/usr/bin/env bash
# ctrlstatus-accept.sh - the status bodies and Events that
# controller/cu_ctrlstatus.c builds are accepted by `cueue cluster` with the
# CRDs of crds/ (schema validation on) and show in kubectl: the merge
# patches of a ClusterQueue (active and inactive), a LocalQueue and a
# Cohort status; Events POSTed and PATCHed (count 2), on a Workload and on
# a cluster-scoped ClusterQueue, with a message cut to 1024 bytes.
# The bodies come from `controller_test_ctrlstatus --dump DIR WL_UID CQ_UID`.
#
# Usage: e2e/ctrlstatus-accept.sh PATH_TO_cueue PATH_TO_controller_test_ctrlstatus
# Needs: kubectl, jq, curl.
set -u -o pipefail
TESTBIN=${2:-}
. "$(dirname "$0")/lib.sh"
e2e_init "${1:-}" kubectl jq curl
if [ -z "$TESTBIN" ] || [ ! -x "$TESTBIN" ]; then
    echo "usage: $0 PATH_TO_cueue PATH_TO_controller_test_ctrlstatus" >&2
    exit 2
fi

dump() {
    show "$TMP/cluster.log" "cluster log"
    echo "---- last response"; sed 's/^/  | /' "$TMP/resp.json" 2>/dev/null | cut -c1-400
}

start_cluster
apply_crds
k apply -f - >/dev/null <<'EOF' || fail "create queues" "kubectl failed"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: on-demand}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohortName: org
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: on-demand
      resources:
      - {name: cpu, nominalQuota: 9}
      - {name: memory, nominalQuota: 36Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: wl-1, namespace: default}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
EOF

# the bodies, for the objects just created (kubectl describe finds Events
# by the involved object's uid)
mkdir -p "$TMP/bodies"
"$TESTBIN" --dump "$TMP/bodies" "$(k get workload wl-1 -n default -o jsonpath='{.metadata.uid}')" \
    "$(k get cq cq -o jsonpath='{.metadata.uid}')" || { fail "dump bodies" "the test binary failed"; e2e_finish; }

# send METHOD PATH CONTENT_TYPE BODY_FILE WANT_CODE DESC
send() {
    local code
    code=$(curl -s -o "$TMP/resp.json" -w '%{http_code}' -X "$1" -H "Content-Type: $3" \
        --data-binary "@$4" "$API$2")
    check "$6" "HTTP $code (want $5): $(head -c 300 "$TMP/resp.json")" [ "$code" = "$5" ]
}

KQ=/apis/kueue.x-k8s.io/v1beta2
MP=application/merge-patch+json
send PATCH "$KQ/clusterqueues/cq/status" $MP "$TMP/bodies/cq.json" 200 "ClusterQueue status (borrowing)"
# jq reads numbers as doubles: check the int64 maximum in the raw text
check "weightedShare kept as int64 max" "$(grep -o '"weightedShare":[0-9]*' "$TMP/resp.json")" \
    grep -q '"weightedShare":9223372036854775807' "$TMP/resp.json"
check "flavorsUsage stored" "$(jq -c .status.flavorsUsage "$TMP/resp.json")" \
    test "$(jq -r '.status.flavorsUsage[0].resources[1].total' "$TMP/resp.json")" = "40Gi"
send PATCH "$KQ/clusterqueues/cq/status" $MP "$TMP/bodies/cq-inactive.json" 200 "ClusterQueue status (inactive)"
check "Active=False stored, fairSharing removed" "$(jq -c .status "$TMP/resp.json" | head -c 300)" \
    test "$(jq -r '[.status.conditions[0].status, .status.conditions[0].reason, (.status.fairSharing == null)] | join(",")' "$TMP/resp.json")" = "False,FlavorNotFound,true"
send PATCH "$KQ/namespaces/default/localqueues/lq/status" $MP "$TMP/bodies/lq.json" 200 "LocalQueue status"
send PATCH "$KQ/cohorts/org/status" $MP "$TMP/bodies/cohort.json" 200 "Cohort status"
check "the API holds the counters" "$(k get cq cq -o jsonpath='{.status}' 2>&1 | head -c 300)" \
    test "$(k get cq cq -o jsonpath='{.status.pendingWorkloads},{.status.admittedWorkloads}')" = "2,3"

i=0
while read -r method path ct body; do
    i=$((i + 1))
    printf '%s' "$body" >"$TMP/ev$i.json"
    want=201; [ "$method" = PATCH ] && want=200
    send "$method" "$path" "$ct" "$TMP/ev$i.json" $want "event $i ($method)"
done <"$TMP/bodies/events.txt"

check "the PATCH made count 2" "$(jq -c '{count, lastTimestamp}' "$TMP/resp.json" 2>/dev/null)" \
    bash -c "kubectl --kubeconfig '$KC' get events -n default -o json | jq -e '[.items[] | select(.reason == \"QuotaReserved\" and .count == 2)] | length == 1' >/dev/null"
check "describe shows the deduplicated event" "$(k describe workload wl-1 -n default 2>&1 | tail -6)" \
    bash -c "kubectl --kubeconfig '$KC' describe workload wl-1 -n default | grep -E 'QuotaReserved +.*\(x2 over .*kueue-admission +Quota reserved in ClusterQueue cq, wait time since queued was 2s' >/dev/null"
check "the long message is cut to 1024 bytes" "" \
    bash -c "kubectl --kubeconfig '$KC' get events -n default -o json | jq -e '[.items[] | select(.reason == \"Pending\") | .message | utf8bytelength] == [1023]' >/dev/null"
check "the ClusterQueue event is in default" "$(k get events -n default 2>&1 | tail -3)" \
    bash -c "kubectl --kubeconfig '$KC' get events -n default -o json | jq -e '[.items[] | select(.involvedObject.kind == \"ClusterQueue\")] | length == 1' >/dev/null"

e2e_finish
