#!/usr/bin/env bash
# controller-failover.sh - end to end: `cueue cluster` + two `cueue controller
# --leader-elect` replicas with short Lease timings (3s/2s/500ms). One
# ClusterQueue with cpu 10 and two suspended Jobs of cpu 1. Exactly one
# replica logs "became leader" and the Jobs are admitted (by the leader
# only); its /readyz answers 200, and so does the synced standby's. The
# leader is killed with SIGKILL (no release): the standby becomes leader
# within 20 s and admits a third Job created after the kill. A third
# replica then takes over from the new leader while it is paused
# (SIGSTOP), and the paused one, resumed, logs "lost leadership" and writes
# nothing more. Finally the survivor releases the Lease on SIGTERM
# (holderIdentity cleared).
#
# Usage: e2e/controller-failover.sh PATH_TO_cueue
# Needs: kubectl, jq, curl, timeout.
set -u -o pipefail

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 PATH_TO_cueue" >&2
    exit 2
fi
CUEUE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
for tool in kubectl jq curl timeout; do
    command -v "$tool" >/dev/null 2>&1 || { echo "SKIP  all: $tool is not installed"; exit 0; }
done
TMP=$(mktemp -d)
export HOME=$TMP/home
mkdir -p "$HOME"
CL_PID="" A_PID="" B_PID="" C_PID=""
cleanup() {
    for p in "$A_PID" "$B_PID" "$C_PID" "$CL_PID"; do
        [ -n "$p" ] && kill -CONT "$p" 2>/dev/null
        [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

FAILS=0
pass() { echo "PASS  $1"; }
fail() { echo "FAIL  $1: $2"; FAILS=$((FAILS + 1)); }
dump() {
    for r in a b c; do
        echo "---- controller $r log"; sed 's/^/  | /' "$TMP/ctrl-$r.log" | tail -n 30
    done
    echo "---- lease"; k get lease -A -o yaml 2>&1 | sed 's/^/  | /' | tail -n 30
}
KC=$TMP/kc
k() { kubectl --kubeconfig "$KC" --request-timeout=15s "$@"; }

# wait_for SECONDS DESC COMMAND...: polls until COMMAND succeeds.
wait_for() {
    local secs=$1 desc=$2; shift 2
    local end=$((SECONDS + secs))
    while [ $SECONDS -lt $end ]; do
        if "$@" >/dev/null 2>&1; then pass "$desc"; return 0; fi
        sleep 0.2
    done
    fail "$desc" "not within ${secs}s"
    return 1
}

"$CUEUE" cluster --listen 127.0.0.1:0 --kubeconfig-out "$KC" 2>"$TMP/cluster.log" &
CL_PID=$!
for _ in $(seq 1 100); do [ -s "$KC" ] && break; sleep 0.1; done
[ -s "$KC" ] || { echo "FAIL  cluster did not start"; cat "$TMP/cluster.log"; exit 1; }

k apply -f "$ROOT/crds/" >/dev/null || { echo "FAIL  apply crds"; exit 1; }
k apply -f - >/dev/null <<'YAML' || { echo "FAIL  apply quota setup"; exit 1; }
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: general}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: general
      resources:
      - {name: cpu, nominalQuota: "10"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
YAML
pass "quota setup applied"

job() {
    cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  suspend: true
  parallelism: 1
  completions: 1
  template:
    metadata:
      annotations: {cueue.dev/simulated-runtime: "300s"}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: "1"}}
YAML
}
job first | k apply -f - >/dev/null || fail "create Job first" "kubectl failed"
job second | k apply -f - >/dev/null || fail "create Job second" "kubectl failed"

TIMINGS=(--leader-elect --leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s
         --leader-elect-retry-period 500ms --health-probe-bind-address 127.0.0.1:0)
"$CUEUE" controller --kubeconfig "$KC" -v 1 "${TIMINGS[@]}" 2>"$TMP/ctrl-a.log" &
A_PID=$!
"$CUEUE" controller --kubeconfig "$KC" -v 1 "${TIMINGS[@]}" 2>"$TMP/ctrl-b.log" &
B_PID=$!

port_of() { sed -n 's/.*health probes on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$TMP/ctrl-$1.log" | head -n 1; }
has_port() { [ -n "$(port_of "$1")" ]; }
wait_for 15 "controller a serves health probes" has_port a
wait_for 15 "controller b serves health probes" has_port b
PORT_a=$(port_of a) PORT_b=$(port_of b)
probe() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$1$2"; }

[ "$(probe "$PORT_a" /healthz)" = 200 ] && pass "/healthz 200" || fail "/healthz" "$(probe "$PORT_a" /healthz)"
[ "$(probe "$PORT_a" /nope)" = 404 ] && pass "unknown path 404" || fail "unknown path" "$(probe "$PORT_a" /nope)"

nleaders() { cat "$TMP/ctrl-a.log" "$TMP/ctrl-b.log" | grep -c "became leader"; }
one_leader() { [ "$(nleaders)" -ge 1 ]; }
wait_for 15 "a replica became leader" one_leader
sleep 2   # the other must still be standing by
[ "$(nleaders)" -eq 1 ] && pass "exactly one replica logged 'became leader'" \
    || fail "exactly one leader" "$(nleaders) 'became leader' lines"
if grep -q "became leader" "$TMP/ctrl-a.log"; then
    L=a L_PID=$A_PID S=b S_PID=$B_PID
else
    L=b L_PID=$B_PID S=a S_PID=$A_PID
fi
echo "      leader: $L, standby: $S"
holder() { k get lease c1f6bfd2.kueue.x-k8s.io -n default -o jsonpath='{.spec.holderIdentity}'; }
H=$(holder)
case "$H" in *_"$L_PID") pass "Lease default/c1f6bfd2.kueue.x-k8s.io held by the leader ($H)";;
             *) fail "Lease holder" "'$H', leader pid $L_PID";; esac

wl_of() {
    k get workloads -n default -o json | jq -r --arg j "$1" \
      '.items[] | select(.metadata.ownerReferences[]? | .kind == "Job" and .name == $j) | .metadata.name'
}
admitted() { local n; n=$(wl_of "$1") && [ -n "$n" ] &&
    k get workload "$n" -n default -o json | jq -e '.status.admission.clusterQueue == "cq" and
      any(.status.conditions[]; .type == "Admitted" and .status == "True")'; }
unsusp() { k get job "$1" -n default -o jsonpath='{.spec.suspend}' | grep -qx false; }
wait_for 15 "Job first admitted" admitted first
wait_for 15 "Job second admitted" admitted second
wait_for 15 "Jobs first and second unsuspended" sh -c "$(declare -f k unsusp); KC='$KC'; unsusp first && unsusp second"
grep -q "admitted Workload" "$TMP/ctrl-$L.log" && pass "the leader wrote the admissions" \
    || fail "leader admissions" "none logged by $L"
grep -q "admitted Workload" "$TMP/ctrl-$S.log" && fail "standby idle" "the standby admitted" \
    || pass "the standby admitted nothing"
grep -q "standing by" "$TMP/ctrl-$S.log" && pass "the standby logged that it is standing by" \
    || fail "standby log" "no 'standing by' line"

[ "$(probe "$(eval echo "\$PORT_$L")" /readyz)" = 200 ] && pass "/readyz 200 on the leader" \
    || fail "/readyz on the leader" "$(probe "$(eval echo "\$PORT_$L")" /readyz)"
[ "$(probe "$(eval echo "\$PORT_$S")" /readyz)" = 200 ] && pass "/readyz 200 on the synced standby" \
    || fail "/readyz on the standby" "$(probe "$(eval echo "\$PORT_$S")" /readyz)"

kill -9 "$L_PID"; wait "$L_PID" 2>/dev/null
if [ "$L" = a ]; then A_PID=""; else B_PID=""; fi
KILLED_AT=$SECONDS
job third | k apply -f - >/dev/null || fail "create Job third" "kubectl failed"
took_over() { grep -q "became leader" "$TMP/ctrl-$S.log"; }
wait_for 20 "the standby became leader after the leader was killed" took_over \
    && echo "      took over after ~$((SECONDS - KILLED_AT))s"
wait_for 15 "Job third (created after the kill) admitted" admitted third
wait_for 15 "Job third unsuspended" unsusp third
ready_new() { [ "$(probe "$(eval echo "\$PORT_$S")" /readyz)" = 200 ]; }
wait_for 5 "/readyz 200 on the new leader" ready_new

# A third replica stands by; the leader is paused (SIGSTOP) past the Lease
# duration, the third takes over, and the paused one, resumed, stops leading.
"$CUEUE" controller --kubeconfig "$KC" -v 1 "${TIMINGS[@]}" 2>"$TMP/ctrl-c.log" &
C_PID=$!
wait_for 15 "replica c synced and standing by" grep -q "standing by" "$TMP/ctrl-c.log"
kill -STOP "$S_PID"
c_leads() { grep -q "became leader" "$TMP/ctrl-c.log"; }
wait_for 20 "replica c became leader while $S was paused" c_leads
kill -CONT "$S_PID"
lost() { grep -q "lost leadership" "$TMP/ctrl-$S.log"; }
wait_for 10 "the resumed replica $S logged 'lost leadership'" lost
job fourth | k apply -f - >/dev/null || fail "create Job fourth" "kubectl failed"
wait_for 15 "Job fourth admitted by the new leader" admitted fourth
n4() { grep -c "admitted Workload default/job-fourth" "$TMP/ctrl-$1.log"; }
[ "$(n4 c)" -eq 1 ] && [ "$(n4 "$S")" -eq 0 ] && pass "only the new leader admitted Job fourth" \
    || fail "Job fourth admissions" "c: $(n4 c), $S: $(n4 "$S")"
kill -TERM "$C_PID"; wait "$C_PID"; rc=$?; C_PID=""
[ "$rc" -eq 0 ] && pass "replica c exits 0 on SIGTERM" || fail "replica c exit" "exit $rc"
grep -q "releasing the Lease" "$TMP/ctrl-c.log" && pass "replica c released the Lease on SIGTERM" \
    || fail "replica c release" "no 'releasing the Lease' line"

kill -TERM "$S_PID"; wait "$S_PID"; rc=$?
if [ "$S" = a ]; then A_PID=""; else B_PID=""; fi
[ "$rc" -eq 0 ] && pass "replica $S exits 0 on SIGTERM" || fail "replica $S exit on SIGTERM" "exit $rc"
[ -z "$(holder)" ] && pass "no holder once every replica stopped (holderIdentity empty)" \
    || fail "Lease released" "holder '$(holder)'"

if [ "$FAILS" -ne 0 ]; then dump; echo "$FAILS check(s) failed"; exit 1; fi
echo "all checks passed"
