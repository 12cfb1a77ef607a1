#!/usr/bin/env bash
# controller-failover.sh - end to end: the cluster of CUEUE_E2E_CLUSTER
# (`cueue cluster`, or the real control plane of e2e/k8s/cluster.sh, whose
# Lease API is the real one) + two `cueue controller
# --leader-elect` replicas with short Lease timings (3s/2s/500ms). One
# ClusterQueue with cpu 10 and two suspended Jobs of cpu 1. Exactly one
# replica logs "became leader" and the Jobs are admitted (by the leader
# only); its /readyz answers 200, and so does the synced standby's. The
# leader is killed with SIGKILL (no release): the standby becomes leader
# within 30 s and admits a third Job created after the kill. A third
# replica then takes over from the new leader while it is paused
# (SIGSTOP), and the paused one, resumed, logs "lost leadership" and writes
# nothing more. Finally the survivor releases the Lease on SIGTERM
# (holderIdentity cleared).
#
# Usage: e2e/controller-failover.sh PATH_TO_cueue
# Needs: kubectl, jq, curl, timeout.
set -u -o pipefail

. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq curl
A_PID="" B_PID="" C_PID=""

dump() {
    for r in a b c; do show "$TMP/ctrl-$r.log" "controller $r log" 30; done
    echo "---- lease"; k get lease -A -o yaml 2>&1 | sed 's/^/  | /' | tail -n 30
}

start_cluster
apply_crds
quota_setup cq:lq:10

job() { job_yaml "$1" 1 300s lq; }
job first | k apply -f - >/dev/null || fail "create Job first" "kubectl failed"
job second | k apply -f - >/dev/null || fail "create Job second" "kubectl failed"

TIMINGS=(--leader-elect --leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s
         --leader-elect-retry-period 500ms --health-probe-bind-address 127.0.0.1:0)
start_controller ctrl-a -v 1 "${TIMINGS[@]}"; A_PID=$CT_PID
start_controller ctrl-b -v 1 "${TIMINGS[@]}"; B_PID=$CT_PID

port_of() { sed -n 's/.*health probes on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$TMP/ctrl-$1.log" | head -n 1; }
has_port() { [ -n "$(port_of "$1")" ]; }
wait_for 30 "controller a serves health probes" has_port a
wait_for 30 "controller b serves health probes" has_port b
PORT_a=$(port_of a) PORT_b=$(port_of b)
probe() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$1$2"; }

[ "$(probe "$PORT_a" /healthz)" = 200 ] && pass "/healthz 200" || fail "/healthz" "$(probe "$PORT_a" /healthz)"
[ "$(probe "$PORT_a" /nope)" = 404 ] && pass "unknown path 404" || fail "unknown path" "$(probe "$PORT_a" /nope)"

nleaders() { cat "$TMP/ctrl-a.log" "$TMP/ctrl-b.log" | grep -c "became leader"; }
one_leader() { [ "$(nleaders)" -ge 1 ]; }
wait_for 30 "a replica became leader" one_leader
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
wait_for 30 "Job first admitted" admitted first
wait_for 30 "Job second admitted" admitted second
wait_for 30 "Jobs first and second unsuspended" sh -c "$(declare -f k unsusp); KC='$KC'; unsusp first && unsusp second"
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
wait_for 30 "the standby became leader after the leader was killed" took_over \
    && echo "      took over after ~$((SECONDS - KILLED_AT))s"
wait_for 30 "Job third (created after the kill) admitted" admitted third
wait_for 30 "Job third unsuspended" unsusp third
ready_new() { [ "$(probe "$(eval echo "\$PORT_$S")" /readyz)" = 200 ]; }
wait_for 15 "/readyz 200 on the new leader" ready_new

# A third replica stands by; the leader is paused (SIGSTOP) past the Lease
# duration, the third takes over, and the paused one, resumed, stops leading.
start_controller ctrl-c -v 1 "${TIMINGS[@]}"; C_PID=$CT_PID
wait_for 30 "replica c synced and standing by" grep -q "standing by" "$TMP/ctrl-c.log"
kill -STOP "$S_PID"
c_leads() { grep -q "became leader" "$TMP/ctrl-c.log"; }
wait_for 30 "replica c became leader while $S was paused" c_leads
kill -CONT "$S_PID"
lost() { grep -q "lost leadership" "$TMP/ctrl-$S.log"; }
wait_for 20 "the resumed replica $S logged 'lost leadership'" lost
job fourth | k apply -f - >/dev/null || fail "create Job fourth" "kubectl failed"
wait_for 30 "Job fourth admitted by the new leader" admitted fourth
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

e2e_finish
