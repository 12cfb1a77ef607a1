#!/usr/bin/env bash
# controller-hostile.sh - end to end: `cueue controller` (and the CLI
# readers) facing objects the API server accepts but that are awkward to
# read, and writes the server refuses (issue 10, H3 and H4).
#
#  H3. A Job with a 100-deep unknown field in spec.template.spec and
#      Workloads with a 70-deep and a 40-deep field in their pod template
#      (the server accepts them). A running controller admits them; a
#      restarted one syncs (/readyz 200), admits a new Job, and
#      `cueue queue list` and `cueue explain` work for the whole cluster.
#  H4. A Job whose queue-name label is a valid label value but not a valid
#      LocalQueue name (Team_A): the controller does not hammer the server
#      with Workload creations (POSTs counted in the cluster's request log
#      over 10 s), reports it once on the Job (one Warning Event) and logs
#      it once.
#  A TLS verification failure and a refused token (401) are logged once at
#  the default level, naming what failed and the server; so is the
#  recovery.
#
# Usage: e2e/controller-hostile.sh PATH_TO_cueue
# Needs: kubectl, jq, curl, timeout.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq curl

dump() {
    show "$TMP/ctrl.log" "controller log" 40
    show "$TMP/ctrl2.log" "restarted controller log" 40
    show "$TMP/ctrl-tok.log" "token controller log" 20
    show "$TMP/out" "last stdout" 20
    show "$TMP/err" "last stderr" 20
}

start_cluster -v
apply_crds
quota_setup cq:lq:8
export KUBECONFIG=$KC

# deep N: a JSON value nested N objects deep ({"d":{"d":...1...}}).
deep() {
    local n=$1 i o="" c=""
    for ((i = 0; i < n; i++)); do o+='{"d":'; c+='}'; done
    printf '%s1%s' "$o" "$c"
}
post() { curl -s -o "$TMP/out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data-binary @- "$API$1"; }

# A suspended Job (cpu 1) in queue $2 with an unknown field $3 deep in its
# pod spec.
deep_job() {
    cat <<JSON | post /apis/batch/v1/namespaces/default/jobs
{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"$1","namespace":"default",
 "labels":{"kueue.x-k8s.io/queue-name":"$2"}},
 "spec":{"suspend":true,"parallelism":1,"completions":1,"template":{
  "metadata":{"annotations":{"cueue.dev/simulated-runtime":"600s"}},
  "spec":{"restartPolicy":"Never","deepField":$(deep "$3"),
   "containers":[{"name":"main","image":"busybox","resources":{"requests":{"cpu":"1"}}}]}}}}
JSON
}
# A Workload (cpu 1) in lq with a field $2 deep in its pod template.
deep_wl() {
    cat <<JSON | post /apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads
{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"$1","namespace":"default"},
 "spec":{"queueName":"lq","podSets":[{"name":"main","count":1,"template":{"spec":{
   "containers":[{"name":"main","image":"busybox","resources":{"requests":{"cpu":"1"}}}],
   "affinity":{"nodeAffinity":{"deep":$(deep "$2")}}}}}]}}
JSON
}
depth_of() {   # the nesting depth of what the server stores for $1 (kind/name)
    k get "$1" -o json | jq '[paths | length] | max'
}
admitted() {   # Workload $1 holds quota
    k get workload "$1" -o json | jq -e 'any(.status.conditions[]?;
        .type == "QuotaReserved" and .status == "True")' >/dev/null
}
wl_of() {
    k get workloads -o json | jq -r --arg j "$1" '.items[] | select(.metadata.ownerReferences[]? |
        .kind == "Job" and .name == $j) | .metadata.name'
}
job_admitted() { local w; w=$(wl_of "$1") && [ -n "$w" ] && admitted "$w"; }

start_controller ctrl -v 1 --health-probe-bind-address 127.0.0.1:0 --metrics-bind-address 0
wait_for 15 "controller synced" grep -q "all informers synced" "$TMP/ctrl.log"

# ---- H3: deep objects, read by a running controller ----
code=$(deep_job deep-job lq 100)
check "a Job with a 100-deep field is accepted by the cluster" "HTTP $code: $(head -c 300 "$TMP/out")" \
    [ "$code" = 201 ]
code=$(deep_wl deep-wl 70)
check "a Workload with a 70-deep field is accepted by the cluster" "HTTP $code: $(head -c 300 "$TMP/out")" \
    [ "$code" = 201 ]
code=$(deep_wl deep-wl40 40)
check "a Workload with a 40-deep field is accepted by the cluster" "HTTP $code" [ "$code" = 201 ]
d=$(depth_of workload/deep-wl)
check "the cluster keeps the 70-deep field" "depth $d" [ "${d:-0}" -gt 70 ]

# The controller reads them and admits them: the cluster takes the
# admission (a status patch of a Workload whose managedFields are as deep
# as its field) and the start of the deep Job (unsuspended).
wait_for 15 "running controller: the deep Job's Workload is admitted" job_admitted deep-job
unsuspended() { [ "$(k get job "$1" -o json | jq -r '.spec.suspend')" = false ]; }
wait_for 15 "running controller: the deep Job is unsuspended" unsuspended deep-job
wait_for 15 "running controller: the 70-deep Workload is admitted" admitted deep-wl
wait_for 15 "running controller: the 40-deep Workload is admitted" admitted deep-wl40
n=$(grep -c ' -> 422' "$TMP/cluster.log")
check "the cluster refused none of the controller's writes" "$n: $(grep ' -> 422' "$TMP/cluster.log" | head -3)" \
    [ "$n" = 0 ]

# ---- H3: a restarted controller syncs with them in the cluster ----
stop_pid "$CT_PID"
CT_PID=""
start_controller ctrl2 -v 1 --health-probe-bind-address 127.0.0.1:0 --metrics-bind-address 0
wait_for 15 "restarted controller: all informers synced" grep -q "all informers synced" "$TMP/ctrl2.log"
port=$(sed -n 's/.*health probes on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$TMP/ctrl2.log" | head -n 1)
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ]; }
wait_for 15 "restarted controller: /readyz 200" ready
job_yaml after 1 600s lq | k apply -f - >/dev/null || fail "create Job after" "kubectl failed"
wait_for 20 "restarted controller: a new Job is admitted" job_admitted after

# ---- H3: the CLI reads the whole cluster ----
export CUEUE_CONTROLLER=http://127.0.0.1:1   # from the API objects
"$CUEUE" queue list >"$TMP/out" 2>"$TMP/err"; rc=$?
check "cueue queue list works with deep Workloads in the cluster" "rc $rc: $(head -c 300 "$TMP/err")" \
    [ "$rc" -eq 0 ]
check "cueue queue list shows cq" "$(cat "$TMP/out")" grep -Eq '^cq ' "$TMP/out"
"$CUEUE" explain default/deep-wl40 >"$TMP/out" 2>"$TMP/err"; rc=$?
check "cueue explain of the 40-deep Workload works" "rc $rc: $(head -c 300 "$TMP/err")" [ "$rc" -eq 0 ]
"$CUEUE" explain default/after >"$TMP/out" 2>"$TMP/err"; rc=$?
check "cueue explain of another Job works" "rc $rc: $(head -c 300 "$TMP/err")" [ "$rc" -eq 0 ]
unset CUEUE_CONTROLLER

# ---- H4: a queue-name that is no LocalQueue name ----
n0=$(grep -c 'POST /apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads ' "$TMP/cluster.log")
job_yaml bad-queue 1 600s Team_A | k apply -f - >/dev/null || fail "create Job bad-queue" "kubectl failed"
sleep 10
n1=$(grep -c 'POST /apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads ' "$TMP/cluster.log")
posts=$((n1 - n0))
check "Team_A: at most 3 Workload creations in 10 s" "$posts POSTs" [ "$posts" -le 3 ]
events() {
    k get events -o json | jq '[.items[] | select(.involvedObject.kind == "Job" and
        .involvedObject.name == "bad-queue" and .type == "Warning")] | (map(.count // 1) | add) // 0'
}
wait_for 5 "Team_A: a Warning Event on the Job" [ "$(events)" -ge 1 ]
ne=$(events)
check "Team_A: exactly one Warning Event (count 1)" "$ne" [ "$ne" = 1 ]
nl=$(grep -c 'bad-queue' "$TMP/ctrl2.log")
check "Team_A: one log line about the Job" "$nl lines: $(grep 'bad-queue' "$TMP/ctrl2.log" | head -3)" \
    [ "$nl" -eq 1 ]
if grep -q 'created Workload .*bad-queue' "$TMP/ctrl2.log"; then
    fail "Team_A: no 'created Workload' logged" "$(grep 'created Workload.*bad-queue' "$TMP/ctrl2.log" | head -2)"
else
    pass "Team_A: no 'created Workload' logged"
fi
# a 100 KB priorityClassName: the same (the Job itself is accepted)
pcn=$(head -c 102400 /dev/zero | tr '\0' p)
code=$(cat <<JSON | post /apis/batch/v1/namespaces/default/jobs
{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"big-pc","namespace":"default",
 "labels":{"kueue.x-k8s.io/queue-name":"lq"}},
 "spec":{"suspend":true,"template":{"spec":{"restartPolicy":"Never","priorityClassName":"$pcn",
  "containers":[{"name":"main","image":"busybox","resources":{"requests":{"cpu":"1"}}}]}}}}
JSON
)
if [ "$code" = 201 ]; then
    n0=$(grep -c 'POST /apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads ' "$TMP/cluster.log")
    sleep 5
    n1=$(grep -c 'POST /apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads ' "$TMP/cluster.log")
    check "100 KB priorityClassName: at most 2 Workload creations in 5 s" "$((n1 - n0)) POSTs" \
        [ $((n1 - n0)) -le 2 ]
    nl=$(grep -c 'Job default/big-pc' "$TMP/ctrl2.log")
    check "100 KB priorityClassName: one log line" "$nl lines" [ "$nl" -eq 1 ]
else
    pass "100 KB priorityClassName: the cluster refuses the Job itself (HTTP $code)"
fi
# a change of the Job (a valid queue) is acted on at once
k label job bad-queue kueue.x-k8s.io/queue-name=lq --overwrite >/dev/null
wait_for 15 "Team_A fixed to lq: the Job's Workload is admitted" job_admitted bad-queue

# ---- what fails talking to the API server is said once, and the recovery ----
stop_pid "$CT_PID"
CT_PID=""
stop_cluster
echo "good-token,admin,1" >"$TMP/tokens.csv"
CL_LISTEN=127.0.0.1:0 start_cluster --tls --token-file "$TMP/tokens.csv"
apply_crds
grep -v certificate-authority-data "$KC" >"$TMP/kc-badca"
"$CUEUE" controller --kubeconfig "$TMP/kc-badca" --health-probe-bind-address 0 \
    --metrics-bind-address 0 2>"$TMP/ctrl-badca.log" &
BAD=$!
sleep 3
stop_pid "$BAD"
n=$(grep -c 'cannot reach the API server at https://127.0.0.1:[0-9]*: SSL certificate problem' "$TMP/ctrl-badca.log")
check "an unknown CA: said once at the default level (curl's error, the server)" \
    "$n lines: $(head -c 600 "$TMP/ctrl-badca.log")" [ "$n" -eq 1 ]
sed 's/^\( *\)token: .*/\1tokenFile: tok/' "$KC" >"$TMP/kc-tokfile"
echo wrong-token >"$TMP/tok"
"$CUEUE" controller --kubeconfig "$TMP/kc-tokfile" --health-probe-bind-address 0 \
    --metrics-bind-address 0 2>"$TMP/ctrl-tok.log" &
CT_PID=$!
wait_for 10 "a refused token is said" grep -q 'refused the controller.s credentials: HTTP 401' "$TMP/ctrl-tok.log"
sleep 3
n=$(grep -c 'HTTP 401' "$TMP/ctrl-tok.log")
check "a refused token: said once" "$n lines: $(grep 'HTTP 401' "$TMP/ctrl-tok.log" | head -3)" [ "$n" -eq 1 ]
echo good-token >"$TMP/tok"
wait_for 20 "the recovery is said" grep -q 'answers again' "$TMP/ctrl-tok.log"
# (the informers back off up to 30 s plus jitter while refused)
wait_for 45 "then the informers sync" grep -q 'all informers synced' "$TMP/ctrl-tok.log"

e2e_finish
