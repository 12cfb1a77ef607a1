#!/usr/bin/env bash
# rbac.sh - end to end on the real control plane (e2e/k8s/cluster.sh:
# etcd, kube-apiserver with RBAC, kube-controller-manager's Job controller,
# kube-scheduler, KWOK): `cueue controller` runs as the ServiceAccount
# cueue-system/cueue-controller-manager with only the RBAC we ship
# (config/rbac/), and nothing it asks for is refused.
#
# 1. The shipped RBAC. The CRDs and config/rbac/ are applied as cluster
#    admin; the controller gets a token of its ServiceAccount from the
#    TokenRequest API (`kubectl create token`) in a kubeconfig of its own.
# 2. A realistic run with that kubeconfig: leader election on (its Lease in
#    cueue-system), secure metrics (TokenReview, SubjectAccessReview).
#    ClusterQueue cq-a (cpu 2, preemption of lower priorities, in Cohort
#    root) and cq-b (cpu 2, cohort root). Jobs really run on KWOK nodes:
#    `low` (priority low, 2 cpu, runs long) is admitted and started;
#    `fin` (cq-b) finishes; `high` (priority high, 2 cpu) preempts `low`,
#    runs and finishes, and `low` is admitted again. Checked: the Workloads'
#    conditions, Jobs unsuspended, suspended and Complete, Events on Jobs
#    and Workloads, queue status written by merge patches (ClusterQueue,
#    LocalQueue, Cohort), the Lease held and released; a Prometheus-like
#    client bound to the shipped cueue-metrics-reader reads /metrics (200),
#    one without it gets 403, none gets 401; a pending Job relabelled to
#    another LocalQueue moves its Workload. Across the run the controller's
#    cueue_api_requests_total has no 401 or 403, its log no error, and the
#    API server's audit log (an audit policy of ours, Metadata level, for
#    the ServiceAccount only) no request refused or malformed; every rule
#    granted was used by some request (least privilege), but the few listed
#    in UNUSED_OK with the reason.
# 3. The test can fail: with `update` on jobs/finalizers taken out of the
#    ClusterRole, a new Job's Workload is refused (blockOwnerDeletion; a
#    FailedCreateWorkload Event, POST 403 counted); with `patch` on Jobs
#    taken out, a new Job's start is refused, the log names the verb and
#    the resource (the API server's message: cannot patch resource "jobs"
#    in API group "batch"), cueue_api_requests_total counts PATCH 403; with
#    the rule back the Job starts.
# 4. In-cluster configuration as a pod of the Deployment runs it: no
#    kubeconfig, KUBERNETES_SERVICE_HOST/PORT of the real API server, and
#    token, ca.crt and namespace in a directory
#    ($CUEUE_TEST_SERVICEACCOUNT_DIR, a test-only stand-in for
#    /var/run/secrets/kubernetes.io/serviceaccount). The token is bound to
#    a Secret; it is rotated (a new file renamed over the old, as the
#    kubelet does) and the old one revoked (its Secret deleted): the
#    controller admits and starts a Job before and after, without a 401
#    or 403, and the audit log shows every request after the rotation made
#    with the new token (its JTI).
# 5. kube-apiserver restarted under the controller: for a moment it refuses
#    the ServiceAccount with 403 what its rules allow (the authorizer's
#    caches are empty; the count is printed, not judged); Jobs created
#    across the restart are all admitted and Complete.
#
# The API server also runs the OwnerReferencesPermissionEnforcement
# admission plugin (off by default, on in OpenShift), which the rule on
# jobs/finalizers is for; section 3 shows that without it no Workload can
# be created.
#
# Exits 77 (CTest's SKIP_RETURN_CODE) when the real components are not
# built (`e2e/k8s/cluster.sh build`), and 0 without a tool (SKIP line).
#
# Usage: e2e/k8s/rbac.sh PATH_TO_cueue
# Needs: kubectl, jq, curl, timeout, and e2e/k8s/cluster.sh's binaries.
set -u -o pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
e2e_init "$@" kubectl jq curl
CLUSTER_SH=$HERE/cluster.sh

SA=cueue-controller-manager SANS=cueue-system
LEASE=c1f6bfd2.kueue.x-k8s.io
NS=team

if ! "$CLUSTER_SH" built >/dev/null 2>&1; then
    echo "SKIP  all: the real control plane is not built (run e2e/k8s/cluster.sh build)"
    exit 77
fi

dump() {
    local l
    for l in "$TMP"/*.log; do [ -e "$l" ] && show "$l" "${l##*/}" 40; done
    for l in "$K8S"/*.log; do [ -e "$l" ] && show "$l" "k8s ${l##*/}" 15; done
    echo "---- workloads"
    k get workloads -A -o wide 2>&1 | sed 's/^/  | /' | tail -n 20
    echo "---- jobs"
    k get jobs -A -o wide 2>&1 | sed 's/^/  | /' | tail -n 20
    echo "---- pods"
    k get pods -A -o wide 2>&1 | sed 's/^/  | /' | tail -n 20
}

# ---- 1. the real control plane, the CRDs and the shipped RBAC

K8S=$TMP/k8s
mkdir -p "$K8S"
cat >"$TMP/nodes.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {kubernetes.io/hostname: node-a}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: node-b
  labels: {kubernetes.io/hostname: node-b}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
YAML
# on exit: the controller, then the control plane (`down` stops the processes
# of DIR/pids), then lib.sh's cleanup (removes $TMP, DIR with it)
on_exit() {
    stop_pid "${CT_PID:-}"
    "$CLUSTER_SH" down "$K8S" >/dev/null 2>&1 || true
    e2e_cleanup
}
trap on_exit EXIT
# The API server's audit log records every request of the controller's
# ServiceAccount (verb, resource, answer): the rules it needs are read from
# it. OwnerReferencesPermissionEnforcement (off by default, on in OpenShift)
# makes the API server check blockOwnerDeletion against jobs/finalizers.
cat >"$TMP/audit-policy.yaml" <<YAML
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: ["system:serviceaccount:$SANS:$SA"]
- level: None
YAML
AUDIT=$TMP/audit.log
export CUEUE_K8S_FLAGS_KUBE_APISERVER="${CUEUE_K8S_FLAGS_KUBE_APISERVER:-} --audit-policy-file=$TMP/audit-policy.yaml --audit-log-path=$AUDIT --audit-log-maxsize=0 --enable-admission-plugins=OwnerReferencesPermissionEnforcement"
t0=$SECONDS
if ! "$CLUSTER_SH" up "$K8S" --nodes "$TMP/nodes.yaml" >"$TMP/cluster-up.log" 2>&1; then
    fail "real control plane started" "cluster.sh up failed"
    e2e_finish
fi
pass "real control plane up in $((SECONDS - t0)) s"
# the JobSet and LeaderWorkerSet controllers, so that the integrations the
# shipped Configuration enables run here (their rules are checked as the
# rest); without their builds, those rules are left out of the check
ADDONS=0
if "$HERE/addons.sh" built jobset && "$HERE/addons.sh" built lws; then
    if "$HERE/addons.sh" up "$K8S" jobset lws >"$TMP/addons-up.log" 2>&1; then
        ADDONS=1
        pass "the JobSet and LWS controllers started"
    else
        fail "the JobSet and LWS controllers started" "$(tail -n 5 "$TMP/addons-up.log")"
    fi
else
    echo "SKIP  the JobSet and LWS integrations: addons not built (e2e/k8s/addons.sh build)"
fi
KC=$K8S/kubeconfig # cluster admin: lib.sh's k() uses it

apply_crds
if k apply -f "$ROOT/config/rbac/" >"$TMP/rbac-apply.log" 2>&1; then
    pass "config/rbac/ applied ($(grep -c . "$TMP/rbac-apply.log") objects)"
else
    fail "config/rbac/ applied" "$(tail -n 3 "$TMP/rbac-apply.log")"
    e2e_finish
fi
# the CRDs serve before the queue objects are created
wait_for 30 "CRDs established" k wait --for condition=Established --timeout=25s \
    crd/clusterqueues.kueue.x-k8s.io crd/workloads.kueue.x-k8s.io crd/cohorts.kueue.x-k8s.io
# Cueue's two webhook configurations, so that the controller's certificate
# management puts its CA into them (the rules of cueue-webhook-role are
# used), but matching no object: nothing routes to their Service here,
# and e2e/install.sh checks the webhooks themselves
for f in "$ROOT"/config/webhook/*.yaml; do
    k create -f "$f" -o json --dry-run=client |
        jq '.webhooks |= map(.objectSelector = {matchLabels: {"cueue.dev/e2e-never": "x"}})' |
        k create -f - >/dev/null || fail "webhook configuration $(basename "$f")" "create failed"
done
# the webhook certificates' Secret, empty, as dist/install.yaml ships it
k apply -f "$ROOT/config/manager/10-secret.yaml" >/dev/null || fail "the empty Secret" "apply failed"
# the Configuration the controllers run with: the shipped one's namespace
# and certificate names (config/manager/00-config.yaml), no leader election
# unless a run asks for it
# and its integrations.frameworks
FWS=$(sed -n '/^      frameworks:/,/^    [a-z]/s/^      - //p' "$ROOT/config/manager/00-config.yaml" | paste -sd, -)
cat >"$TMP/config.yaml" <<YAML
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: $SANS
leaderElection: {leaderElect: false}
internalCertManagement:
  enable: true
  webhookServiceName: cueue-webhook-service
  webhookSecretName: cueue-webhook-server-cert
integrations:
  frameworks: [$FWS]
YAML
WHFLAGS=(--config "$TMP/config.yaml" --webhook-bind-address 127.0.0.1:0
         --webhook-cert-dir "$TMP/certs")

# the ServiceAccount's kubeconfig, as the suites on the real cluster make it
SAKC=$TMP/sa-kubeconfig
if out=$("$HERE/sa-kubeconfig.sh" "$KC" "$SAKC" 2h 2>&1); then
    pass "token for $SANS/$SA from the TokenRequest API, in a kubeconfig of its own"
else
    fail "token for $SANS/$SA" "$out"
    e2e_finish
fi
SERVER=$(kubectl --kubeconfig "$SAKC" config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
kubectl --kubeconfig "$SAKC" config view --raw --minify \
    -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$TMP/ca.crt"
ks() { kubectl --kubeconfig "$SAKC" --request-timeout=15s "$@"; }
me=$(ks auth whoami -o jsonpath='{.status.userInfo.username}' 2>/dev/null)
check "the token authenticates as the ServiceAccount" "whoami: '$me'" \
    test "$me" = "system:serviceaccount:$SANS:$SA"
# not cluster admin: the shipped rules and nothing else
check "the ServiceAccount may not read Secrets or delete Jobs" "it may" \
    bash -c "! kubectl --kubeconfig '$SAKC' auth can-i get secrets -A >/dev/null 2>&1 &&
             ! kubectl --kubeconfig '$SAKC' auth can-i delete jobs -n $NS >/dev/null 2>&1"

k create namespace "$NS" >/dev/null
k apply -f - >/dev/null <<YAML || { fail "queue objects" "apply failed"; e2e_finish; }
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: general}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: root}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-a}
spec:
  cohortName: root
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: general
      resources: [{name: cpu, nominalQuota: "2", borrowingLimit: "0"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-b}
spec:
  cohortName: root
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: general
      resources: [{name: cpu, nominalQuota: "2", borrowingLimit: "0"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq-a, namespace: $NS}
spec: {clusterQueue: cq-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq-b, namespace: $NS}
spec: {clusterQueue: cq-b}
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
YAML
pass "queue objects created"

# mkjob NAME LQ CPU RUNTIME [PRIORITY]: a suspended Job in $NS
mkjob() {
    local prio=""
    [ -n "${5:-}" ] && prio=", kueue.x-k8s.io/priority-class: $5"
    k apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: $2$prio}
spec:
  suspend: true
  parallelism: 1
  completions: 1
  template:
    metadata:
      annotations: {cueue.dev/simulated-runtime: "$4"}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: "$3"}}
YAML
}
wl_of() { k get workloads -n "$NS" -o json | jq -r --arg j "$1" \
    '.items[] | select(.metadata.ownerReferences[]?.name == $j) | .metadata.name' | head -n 1; }
# wl_cond JOB TYPE STATUS: the Job's Workload has condition TYPE=STATUS
wl_cond() {
    local w; w=$(wl_of "$1"); [ -n "$w" ] || return 1
    k get workload -n "$NS" "$w" -o json |
        jq -e --arg t "$2" --arg s "$3" 'any(.status.conditions[]?; .type == $t and .status == $s)' >/dev/null
}
job_unsuspended() { [ "$(k get job -n "$NS" "$1" -o jsonpath='{.spec.suspend}')" = false ]; }
job_suspended() { [ "$(k get job -n "$NS" "$1" -o jsonpath='{.spec.suspend}')" = true ]; }
job_complete() { k get job -n "$NS" "$1" -o json |
    jq -e 'any(.status.conditions[]?; .type == "Complete" and .status == "True")' >/dev/null; }
job_has_running_pod() { k get pods -n "$NS" -l "batch.kubernetes.io/job-name=$1" \
    --field-selector status.phase=Running -o name | grep -q .; }
job_no_pods() { [ -z "$(k get pods -n "$NS" -l "batch.kubernetes.io/job-name=$1" -o name)" ]; }

# metrics: the controller's secure /metrics with a bearer token
scrape() { curl -sk --max-time 10 -H "Authorization: Bearer $2" "https://$1/metrics"; }
http_code() { curl -sk --max-time 10 -o /dev/null -w '%{http_code}' ${2:+-H "Authorization: Bearer $2"} "https://$1/metrics"; }
# refusals TEXT: the cueue_api_requests_total series with code 401 or 403
refusals() { grep -E '^cueue_api_requests_total\{.*code="40[13]"' <<<"$1" | grep -v ' 0$'; }
requests_total() { awk '/^cueue_api_requests_total\{/ { s += $NF } END { print s + 0 }' <<<"$1"; }

# start_sa_controller NAME ARGS...: the controller with the ServiceAccount's
# kubeconfig; waits for its metrics address (MADDR) and its sync
start_sa_controller() {
    local name=$1; shift
    "$CUEUE" controller --kubeconfig "$SAKC" "${WHFLAGS[@]}" "$@" 2>>"$TMP/$name.log" &
    CT_PID=$!
    wait_for 60 "$name: synced with the ServiceAccount's token" \
        grep -q "all informers synced" "$TMP/$name.log"
    MADDR=$(sed -n 's/.*metrics on \([^ ]*\) (.*/\1/p' "$TMP/$name.log" | head -n 1)
}

# a scraper: Prometheus's ServiceAccount bound to the shipped metrics reader,
# and one bound to nothing
k create namespace monitoring >/dev/null
k create serviceaccount prometheus -n monitoring >/dev/null
k create serviceaccount nobody -n monitoring >/dev/null
k create clusterrolebinding cueue-metrics-reader-prometheus --clusterrole=cueue-metrics-reader \
    --serviceaccount=monitoring:prometheus >/dev/null
PTOKEN=$(k create token prometheus -n monitoring)
NTOKEN=$(k create token nobody -n monitoring)

# ---- 2. the realistic run, as the ServiceAccount

start_sa_controller ctrl -v 1 --leader-elect --leader-elect-namespace "$SANS" --metrics-bind-address 127.0.0.1:0 \
    --metrics-secure --health-probe-bind-address 127.0.0.1:0
check "metrics address in the log" "none" test -n "$MADDR"
wait_for 60 "became leader (Lease $SANS/$LEASE)" grep -q "became leader (Lease $SANS/$LEASE" "$TMP/ctrl.log"
holder=$(k get lease -n "$SANS" "$LEASE" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)
check "the Lease names the controller as holder" "holder '$holder'" test -n "$holder"

mkjob low lq-a 2 1h low
mkjob fin lq-b 1 3s
wait_for 60 "low admitted" wl_cond low Admitted True
wait_for 60 "low started (unsuspended)" job_unsuspended low
wait_for 90 "low's pod Running on a KWOK node" job_has_running_pod low
wait_for 120 "fin Complete (the Job controller, after its pod's runtime)" job_complete fin
wait_for 60 "fin's Workload Finished" wl_cond fin Finished True

mkjob high lq-a 2 3s high
wait_for 60 "low preempted (Preempted=True)" wl_cond low Preempted True
wait_for 60 "low suspended again" job_suspended low
wait_for 90 "low's pods gone" job_no_pods low
wait_for 90 "high admitted once low's quota is free" wl_cond high Admitted True
wait_for 120 "high Complete" job_complete high
wait_for 60 "high's Workload Finished" wl_cond high Finished True
wait_for 90 "low admitted again" wl_cond low Admitted True
wait_for 60 "low started again" job_unsuspended low

# a pending Job moved to another LocalQueue: its Workload's spec is patched
mkjob mover lq-a 1 2s
wait_for 60 "mover pending in lq-a (cq-a is full)" wl_cond mover QuotaReserved False
k label job -n "$NS" mover kueue.x-k8s.io/queue-name=lq-b --overwrite >/dev/null
wl_queue() { [ "$(k get workload -n "$NS" "$(wl_of "$1")" -o jsonpath='{.spec.queueName}')" = "$2" ]; }
wait_for 60 "mover's Workload moved to lq-b" wl_queue mover lq-b
wait_for 60 "mover admitted in cq-b" wl_cond mover Admitted True
wait_for 120 "mover Complete" job_complete mover

# A pod group of 2 (the pod integration): created as Kueue's pod webhook
# leaves such pods (none routes here): managed, gated, with its finalizer.
# Admitted whole, ungated, run, and their finalizers are taken off.
for i in 0 1; do
    k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: pg-$i
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: lq-b, kueue.x-k8s.io/managed: "true", kueue.x-k8s.io/pod-group-name: pg}
  annotations: {kueue.x-k8s.io/pod-group-total-count: "2", cueue.dev/simulated-runtime: 3s}
  finalizers: [kueue.x-k8s.io/managed]
spec:
  schedulingGates: [{name: kueue.x-k8s.io/admission}]
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    resources: {requests: {cpu: 500m}}
YAML
done
pg_wl_cond() {
    k get workload -n "$NS" pg -o json | jq -e --arg t "$1" \
        'any(.status.conditions[]?; .type == $t and .status == "True")' >/dev/null
}
pg_done() {
    k get pods -n "$NS" -l kueue.x-k8s.io/pod-group-name=pg -o json | jq -e '[.items[] |
        select(.status.phase == "Succeeded" and (.metadata.finalizers // [] | length) == 0)] |
        length == 2' >/dev/null
}
wait_for 60 "pod group pg admitted whole" pg_wl_cond Admitted
wait_for 120 "pod group pg ran (Succeeded), its finalizers taken off" pg_done
wait_for 60 "pod group pg's Workload Finished" pg_wl_cond Finished
if [ "$ADDONS" = 1 ]; then
    # a JobSet of one replicated Job: admitted, started, Completed
    k apply -f - >/dev/null <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: lq-b}
spec:
  suspend: true
  replicatedJobs:
  - name: w
    replicas: 1
    template:
      spec:
        parallelism: 1
        completions: 1
        template:
          metadata:
            annotations: {cueue.dev/simulated-runtime: 3s}
          spec:
            restartPolicy: Never
            containers:
            - name: main
              image: busybox
              resources: {requests: {cpu: 500m}}
YAML
    js_done() { k get jobset -n "$NS" js -o json |
        jq -e 'any(.status.conditions[]?; .type == "Completed" and .status == "True")' >/dev/null; }
    wait_for 60 "JobSet js admitted" wl_cond js Admitted True
    wait_for 150 "JobSet js Completed" js_done
    wait_for 60 "JobSet js's Workload Finished" wl_cond js Finished True
    # a LeaderWorkerSet of one group of 2 (templates marked as Kueue's LWS
    # webhook marks them): its group's Workload, its pods labelled into it
    k apply -f - >/dev/null <<YAML
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: lw
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: lq-b}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      metadata:
        annotations: {kueue.x-k8s.io/pod-suspending-parent: leaderworkerset.x-k8s.io/leaderworkerset}
      spec:
        containers:
        - name: main
          image: busybox
          resources: {requests: {cpu: 250m}}
YAML
    wait_for 60 "LWS lw: its group's Workload admitted" wl_cond lw Admitted True
    lw_labelled() {
        k get pods -n "$NS" -l leaderworkerset.sigs.k8s.io/name=lw -o json | jq -e '[.items[] |
            select(.metadata.labels["kueue.x-k8s.io/managed"] == "true")] | length == 2' >/dev/null
    }
    wait_for 60 "LWS lw: its 2 pods labelled into their group" lw_labelled
    # scaled to no group: the controller deletes the group's Workload
    lw_wl=$(wl_of lw)
    k patch leaderworkerset -n "$NS" lw --type merge -p '{"spec":{"replicas":0}}' >/dev/null
    lw_wl_gone() { ! k get workload -n "$NS" "$lw_wl" >/dev/null 2>&1; }
    wait_for 60 "LWS lw scaled to 0: its group's Workload deleted" lw_wl_gone
    k delete leaderworkerset -n "$NS" lw --wait=false >/dev/null
fi

# Events, as the ServiceAccount wrote them
# ev_has "KIND NAME REASON": such an Event exists in $NS
ev_has() {
    k get events -n "$NS" -o json |
        jq -r '.items[] | "\(.involvedObject.kind) \(.involvedObject.name) \(.reason)"' | grep -qxF "$1"
}
wlow=$(wl_of low)
for want in "Job low Started" "Job low Stopped" "Job fin FinishedWorkload" "Job high CreatedWorkload" \
    "Workload $wlow QuotaReserved" "Workload $wlow Admitted" "Workload $wlow Preempted"; do
    wait_for 30 "Event: $want" ev_has "$want"
done

# queue status, written by merge patches of /status (field manager cueue-queue-status)
status_written() {
    k get "$@" --show-managed-fields -o json | jq -e 'any(.metadata.managedFields[]?;
        .manager == "cueue-queue-status" and .operation == "Update" and .subresource == "status")' >/dev/null
}
wait_for 30 "ClusterQueue cq-a status written" status_written clusterqueue cq-a
wait_for 30 "LocalQueue lq-a status written" status_written localqueue -n "$NS" lq-a
wait_for 30 "Cohort root status written" status_written cohort root
cq_admitted() { [ "$(k get clusterqueue cq-a -o jsonpath='{.status.admittedWorkloads}')" = 1 ]; }
wait_for 30 "cq-a status: admittedWorkloads 1" cq_admitted

# the metrics endpoint: TokenReview and SubjectAccessReview by the controller
check "/metrics with the metrics reader's token: 200" "got $(http_code "$MADDR" "$PTOKEN")" \
    test "$(http_code "$MADDR" "$PTOKEN")" = 200
check "/metrics with a token without the role: 403" "got $(http_code "$MADDR" "$NTOKEN")" \
    test "$(http_code "$MADDR" "$NTOKEN")" = 403
check "/metrics without a token: 401" "got $(http_code "$MADDR" "")" \
    test "$(http_code "$MADDR" "")" = 401
M=$(scrape "$MADDR" "$PTOKEN")
n=$(requests_total "$M")
bad=$(refusals "$M")
check "no API request refused (401/403) in $n requests (cueue_api_requests_total)" "$bad" test -z "$bad"
echo "      requests by verb and code: $(grep -E '^cueue_api_requests_total\{' <<<"$M" |
    sed 's/cueue_api_requests_total{//; s/"//g; s/} / /' | tr '\n' ';')"

stop_pid "$CT_PID"; rc=$?
CT_PID=""
check "controller stopped cleanly (exit 0)" "exit $rc" test "$rc" -eq 0
holder=$(k get lease -n "$SANS" "$LEASE" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)
check "the Lease is released at exit" "holder '$holder'" test -z "$holder"
check "the log has no refused request" "$(grep -m3 "refused the controller" "$TMP/ctrl.log")" \
    bash -c "! grep -q 'refused the controller' '$TMP/ctrl.log'"

# ---- the audit log: every request of the controller allowed, every rule used

# granted: "GROUP/RESOURCE[/SUB] VERB" of the shipped roles, as the API
# server holds them
granted() {
    { k get clusterrole cueue-manager-role cueue-metrics-auth-role cueue-webhook-role -o json
      k get role -n "$SANS" cueue-leader-election-role cueue-secrets-role -o json; } |
        jq -r '(.items? // [.]) | .[] | .rules[] | select(.resources) |
            .apiGroups[] as $g | .resources[] as $r | .verbs[] as $v | "\($g)/\($r) \($v)"' | sort -u
}
# audited FROM TO: "GROUP/RESOURCE[/SUB] VERB CODE" of the controller's
# requests (user agent cueue/...) in lines FROM..TO of the audit log
audited() {
    sed -n "$1,$2p" "$AUDIT" | jq -r 'select(.stage == "ResponseComplete" or .stage == "ResponseStarted")
        | select((.userAgent // "") | startswith("cueue/")) | select(.objectRef)
        | "\(.objectRef.apiGroup // "")/\(.objectRef.resource)\(if .objectRef.subresource
            then "/" + .objectRef.subresource else "" end) \(.verb) \(.responseStatus.code)"'
}
# rules granted that a run may well not use, and why
UNUSED_OK="kueue.x-k8s.io/workloads get|batch/jobs get|jobset.x-k8s.io/jobsets get|/secrets create|"
UNUSED_OK+="batch/jobs/finalizers update|/pods/finalizers update|jobset.x-k8s.io/jobsets/finalizers update|"
UNUSED_OK+="leaderworkerset.x-k8s.io/leaderworkersets/finalizers update|/pods delete|"
[ "$ADDONS" = 1 ] || UNUSED_OK+="jobset.x-k8s.io/jobsets list|jobset.x-k8s.io/jobsets watch|jobset.x-k8s.io/jobsets patch|"
# workloads get, jobs get, jobsets get: read again only after a 409
# conflict on a write;
# secrets create: only when the Secret is missing (dist/install.yaml ships
# it empty, as here, so the controller updates it);
# jobs/finalizers, pods/finalizers, jobsets/finalizers and
# leaderworkersets/finalizers update: asked by
# OwnerReferencesPermissionEnforcement for blockOwnerDeletion on a
# Workload's owner, which is no request of its own (section 3 shows it is
# needed);
# pods delete: only an excess pod of a group, or a failed one replaced
# (e2e/controller-pods.sh);
# without the addons, the JobSet rules (the CRD is missing: not even
# listed; e2e/controller-jobset.sh runs them)
# audit_checks WHAT FROM TO: no request in the window refused (403 or 401)
audit_checks() {
    local what=$1 from=$2 to=$3 reqs refused
    reqs=$(audited "$from" "$to")
    refused=$(awk '$3 == 403 || $3 == 401' <<<"$reqs" | sort | uniq -c)
    check "$what: the audit log has $(grep -c . <<<"$reqs") requests of the controller, none refused" \
        "$refused" test -z "$refused"
    # nor malformed (a body the real API server cannot read, say)
    refused=$(awk '$3 == 400 || $3 == 415 || $3 == 422' <<<"$reqs" | sort | uniq -c)
    check "$what: no request answered 400, 415 or 422" "$refused" test -z "$refused"
}
# clean_log NAME: the controller's log has no error line and it stopped with
# write_errors=0
clean_log() {
    check "$1: no error in the log, write_errors=0 at exit" \
        "$(grep -m3 ' error "' "$TMP/$1.log"; grep -m1 'stopped:' "$TMP/$1.log")" \
        bash -c "! grep -q ' error \"' '$TMP/$1.log' && grep -q 'stopped: .* write_errors=0 ' '$TMP/$1.log'"
}
audit_len() { wc -l <"$AUDIT"; }
A2_END=$(audit_len)
audit_checks "run as the ServiceAccount" 1 "$A2_END"
clean_log ctrl
USED=$(audited 1 "$A2_END" | awk '$3 != 403 && $3 != 401 { print $1, $2 }' | sort -u)
echo "      used: $(tr '\n' ';' <<<"$USED")"
unused=$(comm -23 <(granted) <(echo "$USED") | grep -vxE "${UNUSED_OK%|}")
check "least privilege: every rule granted was used (but $(tr '|' ',' <<<"${UNUSED_OK%|}"))" \
    "granted, never used: $(tr '\n' ';' <<<"$unused")" test -z "$unused"

# ---- 3. one rule less: the refusal is visible

# without_rule GROUP RESOURCE VERB: cueue-manager-role minus that verb
without_rule() {
    k get clusterrole cueue-manager-role -o json |
        jq --arg g "$1" --arg r "$2" --arg v "$3" '.rules |= map(if .apiGroups == [$g] and
            .resources == [$r] then .verbs -= [$v] else . end) | .rules |= map(select(.verbs != []))
            | del(.metadata.resourceVersion)' | k replace -f - >/dev/null
}
restore_role() { k apply -f "$ROOT/config/rbac/20-manager-role.yaml" >/dev/null; }
refused_logged() { grep -qE "refused the controller.s request: .*$1" "$TMP/neg.log"; }
m403() { scrape "$MADDR" "$PTOKEN" | grep -qE "^cueue_api_requests_total\{verb=\"$1\",code=\"403\"\} [1-9]"; }

start_sa_controller neg -v 1 --metrics-bind-address 127.0.0.1:0 --metrics-secure \
    --health-probe-bind-address 0
# a) no update on jobs/finalizers: with OwnerReferencesPermissionEnforcement
#    the Workload, whose ownerReference blocks the Job's deletion, is refused
without_rule batch jobs/finalizers update
check "update on jobs/finalizers taken out" "still there" \
    bash -c "! kubectl --kubeconfig '$SAKC' auth can-i update jobs/finalizers -n $NS >/dev/null 2>&1"
mkjob negown lq-b 1 3s
wait_for 60 "the log says the Workload was refused: blockOwnerDeletion" refused_logged 'blockOwnerDeletion'
grep -m1 " error \"the API server .*blockOwnerDeletion" "$TMP/neg.log" | sed 's/^/      /'
wait_for 30 "cueue_api_requests_total counts POST 403" m403 POST
wait_for 30 "Event: Job negown FailedCreateWorkload" ev_has "Job negown FailedCreateWorkload"
restore_role
k delete job -n "$NS" negown --wait=false >/dev/null
# b) no patch on Jobs: a Job cannot be started
without_rule batch jobs patch
check "patch on Jobs taken out" "still there" \
    bash -c "! kubectl --kubeconfig '$SAKC' auth can-i patch jobs -n $NS >/dev/null 2>&1"
mkjob neg lq-b 1 3s
wait_for 60 "neg admitted (its Workload may be written)" wl_cond neg Admitted True
wait_for 60 "the log names the verb and the resource refused" refused_logged \
    'cannot patch resource \\?"jobs\\?" in API group \\?"batch\\?"'
grep " error \"the API server .*cannot patch" "$TMP/neg.log" | tail -n 1 | sed 's/^/      /'
wait_for 30 "cueue_api_requests_total counts PATCH 403" m403 PATCH
check "neg not started while the rule is missing" "it started" job_suspended neg
restore_role
wait_for 90 "with the rule back, neg starts" job_unsuspended neg
stop_pid "$CT_PID"
CT_PID=""

# ---- 4. in-cluster configuration, as a pod of the Deployment

A4_START=$(($(audit_len) + 1))
SADIR=$TMP/serviceaccount
mkdir -p "$SADIR"
cp "$TMP/ca.crt" "$SADIR/ca.crt"
echo "$SANS" >"$SADIR/namespace"
k create secret generic tok1 -n "$SANS" >/dev/null
k create secret generic tok2 -n "$SANS" >/dev/null
k create token "$SA" -n "$SANS" --bound-object-kind Secret --bound-object-name tok1 >"$SADIR/token"
HOSTPORT=${SERVER#https://}
HOSTPORT=${HOSTPORT%%/*}
env -u KUBECONFIG KUBERNETES_SERVICE_HOST="${HOSTPORT%:*}" KUBERNETES_SERVICE_PORT="${HOSTPORT##*:}" \
    CUEUE_TEST_SERVICEACCOUNT_DIR="$SADIR" \
    "$CUEUE" controller "${WHFLAGS[@]}" -v 1 --leader-elect --leader-elect-namespace "$SANS" --metrics-bind-address 127.0.0.1:0 --metrics-secure \
    --health-probe-bind-address 0 2>>"$TMP/incluster.log" &
CT_PID=$!
wait_for 60 "in-cluster: connects to the service host and port" \
    grep -q "connecting to https://$HOSTPORT" "$TMP/incluster.log"
wait_for 60 "in-cluster: synced" grep -q "all informers synced" "$TMP/incluster.log"
wait_for 60 "in-cluster: leader" grep -q "became leader" "$TMP/incluster.log"
MADDR=$(sed -n 's/.*metrics on \([^ ]*\) (.*/\1/p' "$TMP/incluster.log" | head -n 1)
mkjob ic1 lq-b 1 2s
wait_for 60 "in-cluster: ic1 admitted" wl_cond ic1 Admitted True
wait_for 60 "in-cluster: ic1 started" job_unsuspended ic1
wait_for 120 "in-cluster: ic1 Complete" job_complete ic1
# rotation: the kubelet writes a new file and renames it over the old;
# then the old token is revoked
k create token "$SA" -n "$SANS" --bound-object-kind Secret --bound-object-name tok2 >"$SADIR/token.new"
mv "$SADIR/token.new" "$SADIR/token"
k delete secret tok1 -n "$SANS" >/dev/null
A_ROT=$(($(audit_len) + 1))
mkjob ic2 lq-b 1 2s
wait_for 60 "in-cluster, rotated token: ic2 admitted" wl_cond ic2 Admitted True
wait_for 60 "in-cluster, rotated token: ic2 started" job_unsuspended ic2
# the audit log names each request's token (its JTI): after the rotation,
# every request (but a watch opened before it) carries the new one
jwt_jti() {
    local p
    p=$(cut -d. -f2 <"$1" | tr '_-' '/+')
    while [ $((${#p} % 4)) -ne 0 ]; do p="$p="; done
    base64 -d <<<"$p" 2>/dev/null | jq -r .jti
}
JTI2=$(jwt_jti "$SADIR/token")
creds=$(sed -n "$A_ROT,\$p" "$AUDIT" | jq -r 'select(.stage == "ResponseComplete" and .verb != "watch")
    | select((.userAgent // "") | startswith("cueue/"))
    | .user.extra["authentication.kubernetes.io/credential-id"][0] // "none"' | sort | uniq -c)
rotated() { [ -n "$JTI2" ] && [ "$(grep -c . <<<"$creds")" -eq 1 ] && grep -q "JTI=$JTI2\$" <<<"$creds"; }
check "in-cluster: after the rotation every request carries the new token (JTI $JTI2)" \
    "credentials seen: $(tr '\n' ';' <<<"$creds")" rotated
M=$(scrape "$MADDR" "$PTOKEN")
bad=$(refusals "$M")
check "in-cluster: no API request refused in $(requests_total "$M") requests" "$bad" test -z "$bad"
stop_pid "$CT_PID"; rc=$?
CT_PID=""
check "in-cluster: stopped cleanly (exit 0)" "exit $rc" test "$rc" -eq 0
audit_checks "in-cluster" "$A4_START" "$(audit_len)"
clean_log incluster
check "in-cluster: the log has no refused request" "$(grep -m3 "refused the controller" "$TMP/incluster.log")" \
    bash -c "! grep -q 'refused the controller' '$TMP/incluster.log'"

# ---- 5. an API server restart: its RBAC caches start empty

# kube-apiserver serves before its authorizer's informers have synced, so
# for a moment after a restart it refuses a ServiceAccount (never
# system:masters) with 403 what the rules allow. The controller must
# recover: Jobs created across the restart are all admitted and finish.
start_sa_controller restart -v 1 --metrics-bind-address 0 --health-probe-bind-address 0
# restart_jobs N: Jobs rs-0..rs-N-1 in lq-b, one cpu for a second each
restart_jobs() {
    local i
    for ((i = 0; i < $1; i++)); do mkjob "rs-$i" lq-b 1 1s & done
    wait_jobs_created() { [ "$(k get jobs -n "$NS" -o name | grep -c '/rs-')" -ge "$1" ]; }
    poll 60 wait_jobs_created "$1"
}
if "$CLUSTER_SH" stop "$K8S" kube-apiserver >>"$TMP/restart-cluster.log" 2>&1 &&
    "$CLUSTER_SH" start "$K8S" kube-apiserver >>"$TMP/restart-cluster.log" 2>&1; then
    pass "kube-apiserver restarted under the controller"
else
    fail "kube-apiserver restarted" "$(tail -n 3 "$TMP/restart-cluster.log")"
fi
restart_jobs 6
all_rs_complete() { [ "$(k get jobs -n "$NS" -o json | jq '[.items[] | select(.metadata.name |
    startswith("rs-")) | select(any(.status.conditions[]?; .type == "Complete"))] | length')" -eq 6 ]; }
wait_for 180 "after the restart: the 6 Jobs created then are admitted and Complete" all_rs_complete
n403=$(grep -c "refused the controller's request: HTTP 403" "$TMP/restart.log")
echo "      403 lines in the controller's log around the restart: $n403"
stop_pid "$CT_PID"
CT_PID=""

e2e_finish
