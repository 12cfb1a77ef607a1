#!/usr/bin/env bash
# visibility.sh - end to end: Kueue's documented task "Pending workloads on
# demand" against `cueue controller --visibility-bind-address`, registered
# in the cluster as Kueue registers its visibility server: the APIService
# of config/visibility/00-apiservice.yaml naming a Service (here an
# ExternalName Service for localhost, as the controller runs outside the
# cluster: docs/cluster.md, "Aggregated APIs").
#
# Setup: ClusterQueue cluster-queue (cpu 1) with LocalQueues user-queue and
# second-queue in default; a Job of cpu 1 is admitted, then 4 more wait
# (3 in user-queue, 1 in second-queue).
#
# Checks: the APIService becomes Available (the aggregator's discovery
# probe) and `kubectl get apiservice` says so; one naming a missing Service
# is not (ServiceNotFound); `kubectl api-versions` lists the group; kubectl get --raw on the
# ClusterQueue and LocalQueue endpoints gives Kueue's
# PendingWorkloadsSummary in the order `cueue queue pending` shows, with
# positions in the ClusterQueue and the LocalQueue; limit and offset; an
# unknown queue is a NotFound naming it; the controller itself refuses a
# request without credentials (401), identity headers without the front
# proxy's certificate (401) and a user without the right (403 Status);
# on the real control plane, a ServiceAccount is refused through the
# aggregator until a RoleBinding of Kueue's
# pending-workloads-lq-viewer-role (config/visibility/30-viewer-roles.yaml)
# grants it, and its ClusterQueue request stays refused.
#
# Usage: e2e/visibility.sh PATH_TO_cueue
# Needs: kubectl, jq, curl, timeout (SKIP without one).
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq curl

G=/apis/visibility.kueue.x-k8s.io/v1beta2
jqt() { jq -e "$@" >/dev/null; } # a jq test
CQP=$G/clusterqueues/cluster-queue/pendingworkloads
LQP=$G/namespaces/default/localqueues/user-queue/pendingworkloads

dump() {
    show "$TMP/ctrl.log" "controller log"
    show "$TMP/cluster.log" "cluster log" 20
    k get apiservice -o yaml 2>&1 | sed 's/^/  | /' | tail -n 30
}

BOB=bob-$RANDOM$RANDOM
if [ "$E2E_CLUSTER" = embedded ]; then
    printf '%s\n%s,bob,uid-bob\n' "admin-$RANDOM$RANDOM" "$BOB" >"$TMP/tokens.csv"
    start_cluster --tls --token-file "$TMP/tokens.csv"
else
    start_cluster
fi
apply_crds
quota_yaml cluster-queue:user-queue:1 | k apply -f - >/dev/null || fail "quota" "apply failed"
printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: second-queue, namespace: default}\nspec: {clusterQueue: cluster-queue}\n' |
    k apply -f - >/dev/null || fail "second LocalQueue" "apply failed"

start_controller ctrl --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 0 \
    --visibility-bind-address 127.0.0.1:0
ctrl_port() { sed -n "s/.*$1 on 127.0.0.1:\([0-9]*\).*/\1/p" "$TMP/ctrl.log" | head -n 1; }
poll 15 test -n "$(ctrl_port 'visibility API')"
poll 15 bash -c "grep -q 'visibility API on' '$TMP/ctrl.log'"
VP=$(ctrl_port "visibility API") MP=$(ctrl_port metrics)
check "the controller serves the visibility API" "no port in its log" test -n "$VP"
VIS=https://127.0.0.1:$VP

# the Service and the APIService (config/'s, aimed at this Service)
cat <<YAML | k apply -f - >/dev/null || fail "Service" "apply failed"
apiVersion: v1
kind: Service
metadata: {name: visibility-server, namespace: default}
spec:
  type: ExternalName
  externalName: localhost
  ports: [{name: https, port: $VP}]
YAML
sed -e 's/namespace: cueue-system/namespace: default/' -e "s/port: 443/port: $VP/" \
    "$ROOT/config/visibility/00-apiservice.yaml" | k apply -f - >/dev/null \
    || fail "APIService" "apply of config/visibility/00-apiservice.yaml failed"
available() {
    [ "$(k get apiservice v1beta2.visibility.kueue.x-k8s.io \
        -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = True ]
}
wait_for 60 "APIService v1beta2.visibility.kueue.x-k8s.io is Available" available
got=$(k get apiservice v1beta2.visibility.kueue.x-k8s.io --no-headers)
[[ "$got" =~ ^v1beta2.visibility.kueue.x-k8s.io\ +default/visibility-server\ +True\  ]] \
    && pass "kubectl get apiservice: $got" || fail "kubectl get apiservice" "$got"
# an APIService whose Service does not exist: not Available, and why
printf 'apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1.broken.example.com}\nspec: {group: broken.example.com, version: v1, groupPriorityMinimum: 100, versionPriority: 100, insecureSkipTLSVerify: true, service: {namespace: default, name: nothing, port: 443}}\n' |
    k apply -f - >/dev/null || fail "broken APIService" "apply failed"
broken() {
    [ "$(k get apiservice v1.broken.example.com \
        -o jsonpath='{.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].reason}')" = "False ServiceNotFound" ]
}
wait_for 60 "an APIService without its Service: Available=False, ServiceNotFound" broken
k delete apiservice v1.broken.example.com >/dev/null
wait_for 30 "kubectl api-versions lists visibility.kueue.x-k8s.io/v1beta2" \
    bash -c "kubectl --kubeconfig '$KC' api-versions | grep -qx visibility.kueue.x-k8s.io/v1beta2"
got=$(k get --raw "$G" | jq -r '[.resources[].name] | join(",")')
[ "$got" = "clusterqueues,clusterqueues/pendingworkloads,localqueues,localqueues/pendingworkloads" ] \
    && pass "discovery: $got" || fail "discovery" "resources $got"

# one Job admitted, then four waiting
job_yaml big 1 600s user-queue | k apply -f - >/dev/null
wait_for 30 "the first Job is admitted" bash -c \
    "kubectl --kubeconfig '$KC' get workloads -o json | jq -e '[.items[] | select(.status.admission)] | length == 1'"
for j in p1:user-queue p2:second-queue p3:user-queue p4:user-queue; do
    job_yaml "${j%%:*}" 1 10s "${j#*:}" | k apply -f - >/dev/null
    sleep 1.1 # distinct creation times: a stable order
done
pending_count() { [ "$(k get --raw "$CQP" | jq '.items | length')" = "$1" ]; }
wait_for 30 "4 pending workloads in cluster-queue" pending_count 4

cq=$(k get --raw "$CQP")
check "PendingWorkloadsSummary" "$(echo "$cq" | head -c 300)" \
    jqt '.kind == "PendingWorkloadsSummary" and .apiVersion == "visibility.kueue.x-k8s.io/v1beta2"' <<<"$cq"
order=$(jq -r '[.items[] | "\(.metadata.name|sub("-[^-]*$";"")):\(.localQueueName):\(.positionInClusterQueue):\(.positionInLocalQueue)"] | join(" ")' <<<"$cq")
want="job-p1:user-queue:0:0 job-p2:second-queue:1:0 job-p3:user-queue:2:1 job-p4:user-queue:3:2"
[ "$order" = "$want" ] && pass "cluster-queue's pending workloads and positions: $order" \
    || fail "cluster-queue's positions" "got $order, want $want"
check "each item has Kueue's fields and its Job as owner" "$(jq -c '.items[0]' <<<"$cq")" \
    jqt 'all(.items[]; (keys == ["localQueueName","metadata","positionInClusterQueue","positionInLocalQueue","priority"])
        and .metadata.namespace == "default" and (.metadata.creationTimestamp | length > 0)
        and .metadata.ownerReferences[0].kind == "Job")' <<<"$cq"
# the same order as `cueue queue pending` (the controller's /debug/pending)
qp=$("$CUEUE" queue pending cluster-queue --controller "http://127.0.0.1:$MP" --kubeconfig "$KC" -o json |
    jq -r '[.items[].name] | join(" ")')
[ "$qp" = "$(jq -r '[.items[].metadata.name] | join(" ")' <<<"$cq")" ] \
    && pass "the order of cueue queue pending" || fail "order vs cueue queue pending" "queue pending: $qp"

lq=$(k get --raw "$LQP")
got=$(jq -r '[.items[] | "\(.metadata.name|sub("-[^-]*$";"")):\(.positionInLocalQueue):\(.positionInClusterQueue)"] | join(" ")' <<<"$lq")
[ "$got" = "job-p1:0:0 job-p3:1:2 job-p4:2:3" ] && pass "user-queue's pending workloads: $got" \
    || fail "user-queue's pending workloads" "got $got"
got=$(k get --raw "$LQP?limit=1&offset=1" | jq -r '[.items[] | "\(.metadata.name|sub("-[^-]*$";"")):\(.positionInLocalQueue)"] | join(" ")')
[ "$got" = "job-p3:1" ] && pass "LocalQueue limit=1&offset=1: $got" || fail "LocalQueue limit/offset" "got $got"
got=$(k get --raw "$CQP?limit=2&offset=1" | jq -r '[.items[].positionInClusterQueue] | join(",")')
[ "$got" = "1,2" ] && pass "ClusterQueue limit=2&offset=1: positions $got" || fail "ClusterQueue limit/offset" "got $got"
got=$(k get --raw "$CQP?offset=10" | jq -c '.items')
[ "$got" = "[]" ] && pass "an offset past the end: no items" || fail "offset past the end" "got $got"

got=$(k get --raw "$G/clusterqueues/no-such-queue/pendingworkloads" 2>&1)
[[ "$got" == *'(NotFound)'*'clusterqueue.visibility.kueue.x-k8s.io "no-such-queue" not found'* ]] \
    && pass "an unknown ClusterQueue: $got" || fail "unknown ClusterQueue" "$got"
got=$(k get --raw "$G/namespaces/default/localqueues/no-such-queue/pendingworkloads" 2>&1)
[[ "$got" == *'(NotFound)'*'"no-such-queue" not found'* ]] \
    && pass "an unknown LocalQueue: NotFound" || fail "unknown LocalQueue" "$got"

# the controller's own door: no credentials, forged identity headers, a
# user without the right
code=$(curl -sk -o "$TMP/b" -w '%{http_code}' "$VIS$CQP")
[ "$code" = 401 ] && jq -e '.kind == "Status" and .reason == "Unauthorized"' "$TMP/b" >/dev/null \
    && pass "directly without credentials: 401 Status" || fail "no credentials" "$code $(cat "$TMP/b")"
code=$(curl -sk -o "$TMP/b" -w '%{http_code}' -H 'X-Remote-User: admin' \
    -H 'X-Remote-Group: system:masters' "$VIS$CQP")
[ "$code" = 401 ] && pass "identity headers without the front proxy's certificate: 401" \
    || fail "forged X-Remote-User" "$code $(head -c 200 "$TMP/b")"

if [ "$E2E_CLUSTER" = embedded ]; then
    # bob has a token but no right to a non-resource path (cu_authn's
    # rules; the embedded cluster has no RBAC)
    code=$(curl -sk -o "$TMP/b" -w '%{http_code}' -H "Authorization: Bearer $BOB" "$VIS/apis")
    [ "$code" = 403 ] && jq -e '.reason == "Forbidden" and (.message | contains("User \"bob\""))' "$TMP/b" >/dev/null \
        && pass "bob directly: 403 Status naming him" || fail "bob refused" "$code $(cat "$TMP/b")"
    code=$(curl -sk -o /dev/null -w "%{http_code}" "$API$CQP")
    [ "$code" = 401 ] && pass "through the cluster without a token: 401" || fail "cluster without token" "$code"
else
    # a ServiceAccount: refused through the aggregator, then granted
    # localqueues/pendingworkloads in default by Kueue's role
    k create serviceaccount reader >/dev/null
    TOK=$(k create token reader)
    as_reader() {
        curl -sS --cacert "$TMP/k8s/pki/ca.crt" -H "Authorization: Bearer $TOK" \
            -o "$TMP/r" -w '%{http_code}' "$API$1"
    }
    code=$(as_reader "$LQP")
    [ "$code" = 403 ] && jq -e '.reason == "Forbidden" and (.message | contains("cannot get resource \"localqueues/pendingworkloads\""))' "$TMP/r" >/dev/null \
        && pass "a ServiceAccount without the role: 403 $(jq -r .message "$TMP/r")" \
        || fail "reader refused" "$code $(cat "$TMP/r")"
    k apply -f "$ROOT/config/visibility/30-viewer-roles.yaml" >/dev/null
    k create rolebinding reader-pending --clusterrole=pending-workloads-lq-viewer-role \
        --serviceaccount=default:reader >/dev/null
    wait_for 30 "the RoleBinding of pending-workloads-lq-viewer-role grants it" \
        bash -c "[ \"\$(curl -sS --cacert '$TMP/k8s/pki/ca.crt' -H 'Authorization: Bearer $TOK' -o /dev/null -w '%{http_code}' '$API$LQP')\" = 200 ]"
    code=$(as_reader "$CQP")
    [ "$code" = 403 ] && pass "... but not the ClusterQueue's: 403" || fail "reader's ClusterQueue" "$code"
fi

e2e_finish
