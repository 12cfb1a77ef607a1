#!/usr/bin/env bash
# dev-smoke.sh - end to end: `cueue dev --duration 20` from the repository
# root (default --crds and --samples) starts the cluster and the controller,
# creates the CRDs and config/samples/, and prints what happens. Checks that
# at least one sample Job is admitted, one starts and one finishes (the
# samples' pods carry cueue.dev/simulated-runtime), that pending reasons are
# printed, that the kubeconfig works while it runs, and that it exits 0 and
# leaves no child process behind.
#
# With CUEUE_E2E_CLUSTER=k8s, `cueue dev --kubeconfig` uses the real control
# plane instead of starting `cueue cluster` (and runs 45 s: the real
# components are slower): the same checks, with the samples validated by the
# real API server (every one must be accepted) and their pods run by its Job
# controller, scheduler and KWOK nodes.
#
# Usage: e2e/dev-smoke.sh PATH_TO_cueue
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$ROOT" || exit 1

dump() {
    echo "---- output"; sed 's/^/  | /' "$TMP/out"
    echo "---- controller log"; tail -n 20 "$TMP/dev/controller.log" 2>/dev/null | sed 's/^/  | /'
}

DURATION=20 DEV_KC=$TMP/dev/kubeconfig
EXT=()
if [ "$E2E_CLUSTER" = k8s ]; then
    start_cluster
    DURATION=45 DEV_KC=$KC
    EXT=(--kubeconfig "$KC")
fi

# --config reaches the controller: a Configuration that turns leader
# election on (its log says so; without the file it is off)
cat >"$TMP/config.yaml" <<'YAML'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
leaderElection:
  leaderElect: true
  resourceNamespace: default
YAML
"$CUEUE" dev --duration "$DURATION" --dir "$TMP/dev" --config "$TMP/config.yaml" "${EXT[@]}" \
    >"$TMP/out" 2>"$TMP/err" &
DEV_PID=$!

# While it runs: the kubeconfig it printed works (when kubectl is installed).
if command -v kubectl >/dev/null 2>&1; then
    ok=0
    for _ in $(seq 1 $((DURATION * 5))); do
        if [ -s "$DEV_KC" ] && kubectl --kubeconfig "$DEV_KC" \
               --request-timeout=5s get workloads -A 2>/dev/null | grep -q "job-"; then
            ok=1; break
        fi
        sleep 0.2
    done
    [ "$ok" = 1 ] && pass "kubectl get workloads -A works with DIR/kubeconfig" \
        || fail "kubectl against DIR/kubeconfig" "no Workloads listed within ${DURATION}s"
    if [ "$E2E_CLUSTER" != k8s ]; then
        # the webhooks, routed as a real install routes them: a queued Job
        # created unsuspended is suspended on creation; a ClusterQueue with
        # a borrowingLimit and no cohort is refused with Kueue's message
        kd() { kubectl --kubeconfig "$DEV_KC" --request-timeout=10s "$@"; }
        wh_ready() {
            [ -n "$(kd get mutatingwebhookconfiguration cueue-mutating-webhook-configuration \
                      -o jsonpath='{.webhooks[0].clientConfig.caBundle}' 2>/dev/null)" ]
        }
        wait_for 20 "cueue dev installs the webhook configurations, the controller its CA" wh_ready
        # the object as stored (the controller may admit and start it at once)
        susp=$(kd create -o jsonpath='{.spec.suspend}' -f - 2>"$TMP/job.err" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: unsuspended, namespace: ml-research, labels: {kueue.x-k8s.io/queue-name: research}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
)
        check "a Job created unsuspended with the queue-name label is suspended on creation" \
            "$(cat "$TMP/job.err") spec.suspend: $susp" test "$susp" = true
        kd apply -f - >/dev/null 2>"$TMP/cq.err" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: no-cohort}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: cpu-general
      resources: [{name: cpu, nominalQuota: 1, borrowingLimit: 1}]
YAML
        check "a bad ClusterQueue is refused by vclusterqueue.kb.io" "$(cat "$TMP/cq.err")" \
            grep -q 'admission webhook "vclusterqueue.kb.io" denied the request: .*borrowingLimit: Invalid value: "1": must be nil when cohort is empty' "$TMP/cq.err"
    fi
else
    echo "SKIP  kubectl check: kubectl is not installed"
fi

wait "$DEV_PID"; rc=$?; DEV_PID=""
[ "$rc" -eq 0 ] && pass "exit code 0 after --duration" || fail "exit code" "got $rc"

grep -Eq "^cueue dev: created ([0-9]+) of \\1 objects of config/samples$" "$TMP/out" \
    && pass "every sample object created ($(grep -o 'created [0-9]* of [0-9]* objects of config/samples' "$TMP/out"))" \
    || fail "samples created" "$(grep 'objects of config/samples' "$TMP/out")"
grep -q "kubectl --kubeconfig $DEV_KC get workloads -A" "$TMP/out" \
    && pass "prints how to use kubectl" || fail "kubectl hint" "missing"
grep -Eq "^admitted [a-z-]+/[a-z0-9-]+ to ClusterQueue [a-z-]+ \(flavors [^)]+\)$" "$TMP/out" \
    && pass "an 'admitted' line" || fail "admitted" "no line"
grep -Eq "^started [a-z-]+/[a-z0-9-]+$" "$TMP/out" && pass "a 'started' line" || fail "started" "no line"
grep -Eq "^finished [a-z-]+/[a-z0-9-]+ \(Succeeded\)$" "$TMP/out" \
    && pass "a 'finished' line" || fail "finished" "no line"
grep -q "^waiting ml-research/notebook-export: LocalQueue reserch doesn't exist$" "$TMP/out" \
    && pass "a 'waiting' line with the pending reason" || fail "waiting" "no line for notebook-export"
n=$(grep -c "^waiting ml-research/notebook-export:" "$TMP/out")
[ "$n" -eq 1 ] && pass "a pending reason is printed once while it does not change" \
    || fail "waiting printed once" "$n times"
n=$(grep -c "^admitted analytics/etl-nightly " "$TMP/out")
[ "$n" -eq 1 ] && pass "one 'admitted' line per admission" || fail "admitted once" "$n times"
grep -q "leader election: Lease default/" "$TMP/dev/controller.log" \
    && pass "--config FILE is the controller's Configuration (leader election on)" \
    || fail "--config" "no 'leader election: Lease default/' in the controller log"
if grep -q "^cueue dev: stopping" "$TMP/out" && grep -q "stopping" "$TMP/dev/controller.log"; then
    pass "controller stopped cleanly"
else
    fail "controller stop" "no 'stopping' in the output or the controller log"
fi
if pgrep -f -- "--kubeconfig-out $TMP/dev/kubeconfig" >/dev/null || \
   pgrep -f -- "controller --kubeconfig $DEV_KC" >/dev/null; then
    fail "children stopped" "a cluster or controller process is still running"
else
    pass "children stopped"
fi
[ -s "$TMP/err" ] && { echo "---- stderr"; sed 's/^/  | /' "$TMP/err"; }

e2e_finish
