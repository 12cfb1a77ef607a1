#!/usr/bin/env bash
# explain-queue.sh - end to end: `cueue explain` and `cueue queue` against
# `cueue cluster` and `cueue controller`.
#
# ClusterQueues cq and cq-big (cpu 4 each) with LocalQueues default/lq and
# default/lq-big; suspended Jobs j-0..j-3 of cpu 3 in lq, then a Job "big"
# of cpu 8 in lq-big (never fits) and a Job "stray" in a LocalQueue that
# does not exist.
#  1. No controller (CUEUE_CONTROLLER points at a closed port): the answers
#     are computed from the API objects and say so on their first line; the
#     Jobs have no Workloads yet and are explained as the Workloads the
#     controller would create (j-0 would be admitted, j-1 is pending at
#     position 0 for want of 2 cpu); queue pending / list give the order and
#     the counts; unknown names and queues exit 1 with a clear message;
#     with --config, a transformation's output is shown with its origin.
#  2. The controller runs (metrics on a free port): explain and queue read
#     its /debug endpoints (the same text and items as curl gets), with no
#     "computed from the API objects" line; the Workload names predicted
#     offline are the ones the controller created; a quota raise (cpu 7)
#     admits j-1 and moves j-2 to position 0; --controller overrides
#     $CUEUE_CONTROLLER; a paused controller (SIGSTOP) is given up after
#     5 s.
#  3. A standby replica (--leader-elect while another identity holds the
#     Lease) answers 503: the CLI falls back to the API objects and says the
#     controller is not ready.
#
# Usage: e2e/explain-queue.sh PATH_TO_cueue
# Needs: kubectl, jq, curl, timeout.
set -u -o pipefail

. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq curl

dump() {
    show "$TMP/ctrl.log" "controller log" 30
    show "$TMP/standby.log" "standby controller log" 20
    show "$TMP/out" "last stdout" 30
    show "$TMP/err" "last stderr" 10
}

start_cluster
apply_crds
quota_setup cq:lq:4 cq-big:lq-big:4
export KUBECONFIG=$KC

# cq: run ARGS...: cueue with stdout in $TMP/out, stderr in $TMP/err, $RC.
jqe() { jq -e "$@" >/dev/null; }
cq() { "$CUEUE" "$@" >"$TMP/out" 2>"$TMP/err"; RC=$?; }
out_has() { grep -Eq -- "$1" "$TMP/out"; }
err_has() { grep -Eq -- "$1" "$TMP/err"; }
line1() { head -n 1 "$TMP/out"; }
OFFLINE_LINE='^\(no controller reachable at http://127\.0\.0\.1:1: computed from the API objects\)$'

jobs_yaml j 4 lq 3 300s | k apply -f - >/dev/null || { fail "create Jobs" "kubectl failed"; e2e_finish; }
sleep 1.1   # a later creationTimestamp: behind the j-* Jobs in the queue
{ job_yaml big 8 300s lq-big; echo "---"; job_yaml stray 1 300s nolq; } |
    k apply -f - >/dev/null || { fail "create Jobs" "kubectl failed"; e2e_finish; }

# ---- 1. no controller: from the API objects ----
export CUEUE_CONTROLLER=http://127.0.0.1:1

cq explain j-1
check "offline explain j-1 exits 0" "rc $RC" [ "$RC" -eq 0 ]
check "offline explain says it computed from the API objects (first line)" "$(line1)" \
    grep -Eq "$OFFLINE_LINE" <(line1)
check "offline explain: a Job without a Workload is explained as the one to be created" \
    "$(sed -n 2p "$TMP/out")" out_has '^\(Job default/j-1 has no Workload yet: explained as the Workload default/job-j-1-[0-9a-f]{5} '
check "offline explain j-1: pending for quota, 2 cpu more, position 0" "$(head -c 600 "$TMP/out")" \
    bash -c "grep -Eq '^Workload default/job-j-1-[0-9a-f]{5}: pending' '$TMP/out' &&
             grep -q 'position 0 in ClusterQueue cq' '$TMP/out' &&
             grep -q 'cpu: requested 3, available 1: 2 more needed' '$TMP/out'"

cq explain default/j-0
check "offline explain j-0: the engine admits it, not yet in the API" "$(head -c 400 "$TMP/out")" \
    bash -c "grep -q '^(not admitted in the API yet' '$TMP/out' &&
             grep -Eq '^Workload default/job-j-0-[0-9a-f]{5}: admitted' '$TMP/out'"

cq explain stray
check "offline explain of a Job in a missing LocalQueue" "$(head -c 400 "$TMP/out")" \
    bash -c "[ $RC -eq 0 ] && grep -q 'LocalQueue default/nolq (missing)' '$TMP/out'"

# --config: the Configuration's transformations make the requests
printf '%s\n' 'apiVersion: config.kueue.x-k8s.io/v1beta2' 'kind: Configuration' 'resources:' \
    '  transformations: [{input: cpu, outputs: {cpu_credits: 1}}]' >"$TMP/xform.yaml"
cq explain --config "$TMP/xform.yaml" j-1
check "offline explain --config: a transformed request is shown with its origin" \
    "rc $RC: $(grep -A3 '^Requests' "$TMP/out" | tr '\n' '|')" \
    bash -c "[ $RC -eq 0 ] && grep -q '^  pod set main: 1 pod (cpu 3, cpu_credits 3)$' '$TMP/out' &&
             grep -q '^    cpu_credits: 3 (from cpu via transformation)$' '$TMP/out'"

cq explain -o json default/j-1
WL1=$(jq -r .workload "$TMP/out" 2>/dev/null)
check "offline explain -o json: a document on stdout, the note on stderr" \
    "rc $RC, workload '$WL1'" \
    bash -c "[ $RC -eq 0 ] && jq -e '.status == \"pending\" and .queue.position == 0' '$TMP/out' >/dev/null &&
             grep -q 'computed from the API objects' '$TMP/err'"

cq queue pending cq -o json
check "offline queue pending -o json: j-1, j-2, j-3 at positions 0, 1, 2" "$(head -c 300 "$TMP/out")" \
    jqe '[.items[] | select(.name | startswith("job-j-")) | [.name[0:7], .positionInClusterQueue]]
           == [["job-j-1", 0], ["job-j-2", 1], ["job-j-3", 2]] and .kind == "PendingWorkloads"
           and (.items[0].requests.cpu == "3") and (.items | all(.clusterQueue == "cq"))' "$TMP/out"
NPEND=$(jq '.items | length' "$TMP/out")

cq queue pending cq
check "offline queue pending table: header, one row per item, notes first" "$(cat "$TMP/out")" \
    bash -c "grep -Eq '$OFFLINE_LINE' <(head -n 1 '$TMP/out') &&
             grep -Eq '^POSITION +NAMESPACE/NAME +LOCALQUEUE +PRIORITY +REQUESTS +AGE +REASON$' '$TMP/out' &&
             grep -Eq '^0 +default/job-j-1-[0-9a-f]{5} +lq +0 +cpu=3 +[0-9]+s +' '$TMP/out' &&
             [ \$(grep -Ec '^[0-9]+ +default/' '$TMP/out') -eq $NPEND ]"

cq queue pending
check "offline queue pending (all): a CLUSTERQUEUE column, cq-big's big" "$(cat "$TMP/out")" \
    bash -c "grep -Eq '^POSITION +NAMESPACE/NAME +CLUSTERQUEUE +LOCALQUEUE ' '$TMP/out' &&
             grep -Eq '^0 +default/job-big-[0-9a-f]{5} +cq-big +lq-big +0 +cpu=8 +[0-9]+s +ExceedsMaxQuota$' '$TMP/out'"

cq queue pending default/lq
check "offline queue pending NS/LQ: names without namespace" "$(cat "$TMP/out")" \
    bash -c "grep -Eq '^POSITION +NAME +LOCALQUEUE ' '$TMP/out' && grep -Eq '^0 +job-j-1-' '$TMP/out'"

cq queue list
check "offline queue list: cq with 1 admitted (by the engine) and the pending ones" "$(cat "$TMP/out")" \
    bash -c "grep -Eq '^cq +- +$NPEND +1 +1$' '$TMP/out' && grep -Eq '^default/lq +cq +$NPEND +1 +1$' '$TMP/out' &&
             grep -q '6 labelled Jobs have no Workload yet' '$TMP/out'"

cq explain default/nope
check "explain of an unknown name: exit 1 and the message" "rc $RC: $(cat "$TMP/err")" \
    bash -c "[ $RC -eq 1 ] && [ ! -s '$TMP/out' ] &&
             grep -qx 'cueue: explain: no Workload or Job default/nope (namespace default)' '$TMP/err'"
cq explain nons/nope
check "explain in a missing namespace says so" "$(cat "$TMP/err")" \
    bash -c "[ $RC -eq 1 ] && grep -q '(namespace nons does not exist)' '$TMP/err'"
cq queue pending nosuch
check "queue pending of an unknown ClusterQueue: exit 1" "rc $RC: $(cat "$TMP/err")" \
    bash -c "[ $RC -eq 1 ] && grep -qx 'cueue: queue: no ClusterQueue nosuch' '$TMP/err'"

# ---- 2. the controller's endpoints ----
start_controller ctrl --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 0
mport() { sed -n 's/.*metrics on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$TMP/ctrl.log" | head -n 1; }
has_mport() { [ -n "$(mport)" ]; }
wait_for 15 "controller serves metrics" has_mport
PORT=$(mport)
export CUEUE_CONTROLLER=http://127.0.0.1:$PORT
wait_for 20 "controller admitted j-0" grep -q "admitted Workload default/job-j-0-" "$TMP/ctrl.log"
pending_ok() { curl -sf --max-time 5 "$CUEUE_CONTROLLER/debug/pending?clusterQueue=cq" |
                   jq -e '.items | length >= 3' >/dev/null; }
wait_for 15 "/debug/pending lists the pending Workloads" pending_ok

WL1_API=$(k get workloads -n default -o json |
          jq -r '.items[] | select(.metadata.ownerReferences[0].name == "j-1") | .metadata.name')
check "the Workload name predicted offline is the controller's" "offline '$WL1', API 'default/$WL1_API'" \
    [ "$WL1" = "default/$WL1_API" ]

cq explain j-1
check "explain j-1 via the controller: no 'computed' line, the Job's Workload named" "$(head -n 3 "$TMP/out")" \
    bash -c "[ $RC -eq 0 ] && ! grep -q 'computed from the API objects' '$TMP/out' &&
             grep -qx '(Job default/j-1: its Workload is $WL1)' <(head -n 1 '$TMP/out') &&
             grep -q '^Workload $WL1: pending' '$TMP/out'"
cq explain "$WL1"
curl -s --max-time 5 "$CUEUE_CONTROLLER/debug/explain?workload=$WL1" >"$TMP/curl"
check "explain NS/WORKLOAD prints the controller's text as is" "$(diff "$TMP/curl" "$TMP/out" | head -5)" \
    cmp -s "$TMP/curl" "$TMP/out"
cq explain -o json "$WL1"
check "explain -o json via the controller" "$(head -c 200 "$TMP/out")" \
    bash -c "[ $RC -eq 0 ] && [ ! -s '$TMP/err' ] && jq -e '.workload == \"$WL1\"' '$TMP/out' >/dev/null"

cq queue pending cq -o json
curl -s --max-time 5 "$CUEUE_CONTROLLER/debug/pending?clusterQueue=cq" >"$TMP/curl"
check "queue pending -o json: the controller's items" "$(head -c 300 "$TMP/out")" \
    bash -c "[ $RC -eq 0 ] && [ \"\$(jq -cS .items '$TMP/out')\" = \"\$(jq -cS .items '$TMP/curl')\" ]"
cq queue pending cq
check "queue pending table via the controller: j-1 at 0, no 'computed' line" "$(cat "$TMP/out")" \
    bash -c "! grep -q 'computed from' '$TMP/out' && grep -Eq '^POSITION ' <(head -n 1 '$TMP/out') &&
             grep -Eq '^0 +$WL1 +lq +0 +cpu=3 ' '$TMP/out'"

admitted_in_status() {
    "$CUEUE" queue list >"$TMP/out" 2>"$TMP/err" && grep -Eq '^cq +- +[0-9]+ +1 +1$' "$TMP/out"
}
wait_for 15 "queue list via the controller: cq admitted 1 (status), pending from the endpoint" admitted_in_status
NP=$(curl -s --max-time 5 "$CUEUE_CONTROLLER/debug/pending?clusterQueue=cq" | jq '.items | length')
check "queue list PENDING equals the endpoint's count" "$(cat "$TMP/out")" \
    grep -Eq "^cq +- +$NP +" "$TMP/out"

# more quota: j-1 is admitted, j-2 moves to the front
k patch clusterqueue cq --type merge \
    -p '{"spec":{"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"general","resources":[{"name":"cpu","nominalQuota":"7"}]}]}]}}' \
    >/dev/null || fail "patch cq" "kubectl failed"
j2_first() {
    "$CUEUE" queue pending default/lq -o json 2>/dev/null |
        jq -e '.items[0].name | startswith("job-j-2-")' >/dev/null
}
wait_for 20 "after a quota raise j-2 is at position 0 of default/lq" j2_first
cq explain j-1
check "explain j-1 now says admitted" "$(head -n 3 "$TMP/out")" out_has "^Workload $WL1: admitted"

cq explain --controller http://127.0.0.1:1 j-2
check "--controller overrides \$CUEUE_CONTROLLER" "$(line1)" grep -Eq "$OFFLINE_LINE" <(line1)

kill -STOP "$CT_PID"
T0=$SECONDS
cq queue pending cq
T1=$SECONDS
kill -CONT "$CT_PID"
check "a paused controller is given up after 5 s (API objects used)" "rc $RC after $((T1 - T0)) s: $(line1)" \
    bash -c "[ $RC -eq 0 ] && [ $((T1 - T0)) -le 9 ] &&
             grep -q '^(no answer from the controller at $CUEUE_CONTROLLER within 5 s: computed from the API objects)' '$TMP/out'"

# ---- 3. a standby replica answers 503 ----
NOW=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
k apply -f - >/dev/null <<YAML || fail "create Lease" "kubectl failed"
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: c1f6bfd2.kueue.x-k8s.io, namespace: default}
spec: {holderIdentity: someone-else, leaseDurationSeconds: 3600, acquireTime: "$NOW", renewTime: "$NOW"}
YAML
# the first controller runs without election: the Lease is only the standby's
"$CUEUE" controller --kubeconfig "$KC" --leader-elect --leader-elect-namespace default \
    --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 0 2>>"$TMP/standby.log" &
SB_PID=$!
sport() { sed -n 's/.*metrics on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$TMP/standby.log" | head -n 1; }
has_sport() { [ -n "$(sport)" ]; }
wait_for 15 "standby controller serves metrics" has_sport
SPORT=$(sport)
is_503() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$SPORT/debug/pending")" = 503 ]; }
wait_for 10 "the standby's /debug/pending answers 503" is_503
cq queue pending --controller "http://127.0.0.1:$SPORT" cq
check "queue pending against a standby: computed from the API objects, says not ready" "$(line1)" \
    bash -c "[ $RC -eq 0 ] && grep -Eq '^\(the controller at http://127\.0\.0\.1:$SPORT is not ready \(not ready: .*\): computed from the API objects\)$' <(head -n 1 '$TMP/out')"
stop_pid "$SB_PID"

# ---- 4. offline: an unlabelled Job in a namespace with a LocalQueue "default" ----
k create namespace plain-ns >/dev/null 2>&1
quota_yaml --namespace plain-ns cq-plain:default:4 | k apply -f - >/dev/null
cat <<YAML | k apply -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: plain, namespace: plain-ns}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: "6"}}}]
YAML
cq explain --kubeconfig "$KC" --controller http://127.0.0.1:1 plain-ns/plain
check "offline explain of an unlabelled Job goes to the namespace's LocalQueue default" \
    "rc $RC: $(head -n 6 "$TMP/out" | tr '\n' '|')" \
    bash -c "[ $RC -eq 0 ] && grep -q 'LocalQueue plain-ns/default -> ClusterQueue cq-plain' '$TMP/out' &&
             grep -q 'request > maximum capacity (6 > 4)' '$TMP/out'"

e2e_finish
