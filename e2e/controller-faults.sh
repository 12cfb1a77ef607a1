#!/usr/bin/env bash
# controller-faults.sh - end-to-end fault tests of `cueue controller` against
# the cluster of CUEUE_E2E_CLUSTER (`cueue cluster`, or the real control
# plane of e2e/k8s/cluster.sh) (shared/reference/reliability.md §5: F1, F2,
# F7, F9, F11, F12).
#
# a. An invariant recorder and checker. Every scenario records every Workload
#    and Job watch event from the start (curl on the watch stream, re-watching
#    from the last resourceVersion, and relisting into a SNAPSHOT record after
#    410 Gone) and checks the history afterwards with a jq program:
#    (i) the admitted usage (status.admission with QuotaReserved=True, not
#    Finished) of a ClusterQueue never exceeds its nominal quota (no cohorts,
#    so nominal is the limit); (ii) status.admission goes absent->present at
#    most once unless an Evicted=True condition with a reason came in between,
#    and is never replaced while held; (iii) no Job goes suspend true->false
#    while its Workload holds no quota; (iv) no Workload is admitted after its
#    Job finished or after it was Finished. The checker itself is first run
#    on made-up histories, with and without each violation.
# b. kill -9 of the controller several times while admissions flow (3
#    ClusterQueues, $FAULTS_B_JOBS Jobs of 1-4 cpu running 2-6 s, quota for a
#    fraction of them), restarting it each time.
# c. The API server stopped and started again while the controller runs and
#    Jobs are pending: `cueue cluster --data-dir` (SIGTERM, then the same
#    address and data), or kube-apiserver (over the same etcd).
# d. 410 Gone: {"compact":true} then {"dropWatches":true} on /cueue/faults.
# e. 409 Conflict on the Workload status PATCHes (times 5, twice).
# f. 429 and 503 with Retry-After on some writes.
# g. etcd stopped for a few seconds and started again (same data) while
#    Jobs flow.
# h. Leader failover while Jobs flow: two replicas with short Lease
#    timings, the leader killed (SIGKILL), then a third replica taking over
#    from the new leader while it is paused (SIGSTOP); the resumed one
#    admits nothing more.
# d, e and f need the embedded cluster's fault injection and g the real
# cluster's etcd: each is skipped (SKIP line) on the other cluster. Each
# scenario has a cluster of its own.
# Each of b-h then requires: every Job Complete, every Workload Finished and
# admitted exactly once (nothing evicts in these setups), checks (i)-(iv)
# pass on the recorded history, and the recording matches the final LIST.
#
# Usage: e2e/controller-faults.sh PATH_TO_cueue
# Environment: CUEUE_E2E_CLUSTER (embedded or k8s), FAULTS_B_JOBS (default
#   150), FAULTS_JOBS (c-g, default 45), FAULTS_KILL_AFTER (b: kill -9 once
#   the controller's log holds that many admissions, in all, default
#   "1 30 60": admissions are flowing then on either cluster, however fast
#   it is), FAULTS_RESTART_DELAY (b: s between the kill and the restart,
#   default 1; 0 can admit past the quota, see scenario_b), FAULTS_TIMEOUT
#   (s to wait for all Jobs of a scenario, default 150; 300 on k8s),
#   FAULTS_STALL (s without any Job changing state before giving up,
#   default 30; 60 on k8s),
#   FAULTS_H_JOBS (h, default 90), FAULTS_ONLY (e.g. "a b": run only these
#   scenarios), E2E_KEEP=1 (keep the logs and recordings in $TMP; on k8s
#   each scenario's cluster in $TMP/X/k8s).
# Needs: kubectl, jq, curl, timeout.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq curl

B_JOBS=${FAULTS_B_JOBS:-150}
JOBS=${FAULTS_JOBS:-45}
KILL_AFTER=${FAULTS_KILL_AFTER:-1 30 60}
RESTART_DELAY=${FAULTS_RESTART_DELAY:-1}
# the real components are slower (and share the machine's cores)
if [ "$E2E_CLUSTER" = k8s ]; then
    TIMEOUT=${FAULTS_TIMEOUT:-300} STALL=${FAULTS_STALL:-60}
else
    TIMEOUT=${FAULTS_TIMEOUT:-150} STALL=${FAULTS_STALL:-30}
fi
ONLY=${FAULTS_ONLY:-a b c d e f g h}
BASE_PREFIX=${E2E_PREFIX:-}   # "[k8s] " on the real cluster
want() { case " $ONLY " in *" $1 "*) return 0;; esac; return 1; }

# ---------------------------------------------------------------- checker (a)

# Quantities ("3", "500m", "2Gi") in milli-units.
JQ_QTY='def qty:
  if type == "number" then . * 1000
  else (capture("^(?<n>[0-9]+(\\.[0-9]+)?)(?<s>[a-zA-Z]*)$") // error("bad quantity \(.)")) as $c
    | ({"": 1000, "m": 1, "k": 1e6, "M": 1e9, "G": 1e12, "T": 1e15,
        "Ki": 1024000, "Mi": 1048576000, "Gi": 1073741824000, "Ti": 1099511627776000}[$c.s]
       // error("bad quantity suffix \(.)")) * ($c.n | tonumber)
  end | round;'

# The checker. Input (jq -n, from inputs): one record per line,
# {"s":"Workload"|"Job","e":E} with E a watch event line or a relist
# {"type":"SNAPSHOT","since":RV,"rv":RV,"items":[...]} (the stream missed
# what happened in (since, rv]). Records are ordered by resourceVersion (one
# counter for all kinds). $quota: {"CQ/FLAVOR/RESOURCE": nominal, milli};
# $final: [final Workload LIST, final Job LIST] or [].
# Output: {violations: [{inv, rv, event, object, msg}], count: {inv: n}, ...}.
invariants_jq() {
    echo "$JQ_QTY"
    cat <<'JQ'
def conds: (.status.conditions // []);
def ctrue($t): any(conds[]; .type == $t and .status == "True");
def adm: .status.admission != null;
def holds: adm and ctrue("QuotaReserved") and (ctrue("Finished") | not);
def name: "\(.metadata.namespace)/\(.metadata.name)";
def owner: [(.metadata.ownerReferences // [])[] | select(.kind == "Job") | .uid][0];
def usage:
  if holds then
    [.status.admission as $a | ($a.podSetAssignments // [])[] | (.flavors // {}) as $f
     | (.resourceUsage // {}) | to_entries[]
     | {k: "\($a.clusterQueue)/\($f[.key] // "?")/\(.key)", v: (.value | qty)}]
  else [] end;
# the Evicted=True condition with a reason, as "reason@time", or null
def evsig: [conds[] | select(.type == "Evicted" and .status == "True" and (.reason // "") != "")][0]
  | if . then "\(.reason)@\(.lastTransitionTime)" else null end;
def wlsum: "\(name) [admission: \(if adm then .status.admission.clusterQueue else "none" end), "
  + "conditions: \([conds[] | "\(.type)=\(.status)"] | join(","))]";
def jfinished: ctrue("Complete") or ctrue("Failed");
def viol($inv; $rv; $ev; $obj; $msg): .v += [{inv: $inv, rv: $rv, event: $ev, object: $obj, msg: $msg}];

def use_add($w; $sign):
  reduce (($w // {}) | usage)[] as $x (.; .use[$x.k] = ((.use[$x.k] // 0) + $sign * $x.v));
def check_quota($keys; $rv; $ev; $obj):
  reduce $keys[] as $k (.;
    .max[$k] = ([.max[$k] // 0, .use[$k] // 0] | max)
    | if (.use[$k] // 0) > ($quota[$k] // 0) then
        ($k | split("/")[0]) as $cq
        | viol("i"; $rv; $ev; $obj; "\($k): admitted \(.use[$k])m > nominal \($quota[$k] // 0)m; holding: "
               + ([.wl[] | select(holds and .status.admission.clusterQueue == $cq) | name] | join(" ")))
      else . end);

# one Workload goes from $old to $new (either may be null): (ii) and (iv)
def wl_trans($old; $new; $rv; $ev):
  ($new // $old) as $o | $o.metadata.uid as $u | ($o | name) as $n
  # an eviction: an Evicted=True condition not seen on the previous state
  | (if $new != null then
       ($new | evsig) as $s
       | (if $s != null and $s != .evsig[$u] then .evicted[$u] = true else . end) | .evsig[$u] = $s
     else . end)
  | (($old // {}) | adm) as $oa | (($new // {}) | adm) as $na
  | ((($old // {}) | ctrue("QuotaReserved")) | not) as $oqr_not
  | (($new // {}) | ctrue("QuotaReserved")) as $nqr
  | (if ($oa | not) and $na then
       (if (.nadm[$u] // 0) >= 1 and ((.evicted[$u] // false) | not) then
          viol("ii"; $rv; $ev; $n; "status.admission set again (admission #\((.nadm[$u] // 0) + 1), ClusterQueue \($new.status.admission.clusterQueue)) with no Evicted=True condition since the previous one")
        else . end)
       | .nadm[$u] = ((.nadm[$u] // 0) + 1) | .evicted[$u] = false
     elif $oa and $na and $old.status.admission != $new.status.admission then
       viol("ii"; $rv; $ev; $n; "status.admission replaced while held (ClusterQueue \($old.status.admission.clusterQueue) -> \($new.status.admission.clusterQueue))")
     else . end)
  | (if $new != null and (($na and ($oa | not)) or ($nqr and $oqr_not)) then
       (($o | owner) // "") as $j
       | if .wfin[$u] != null then
           viol("iv"; $rv; $ev; $n; "admitted again after it was Finished (at resourceVersion \(.wfin[$u])): \($new | wlsum)")
         # seen only at a relist, the admission happened somewhere in the
         # gap (since, rv]: certainly late only if the Job finished before it
         elif .jfin[$j] != null and ($ev != "SNAPSHOT" or .jfin[$j] <= (.gap_since // 0)) then
           viol("iv"; $rv; $ev; $n; "admitted after its Job \(.jname[$j]) finished (at resourceVersion \(.jfin[$j]))")
         else . end
     else . end)
  | (if $new != null and ($new | ctrue("Finished")) and .wfin[$u] == null then .wfin[$u] = $rv else . end)
  | if $new == null then del(.wl[$u]) else .wl[$u] = $new end;

# a Workload event: (i) on the ClusterQueues it touches, then (ii), (iv)
def wl_event($new; $rv; $ev; $uid):
  .wl[$uid] as $old
  | ((($old // {}) | usage) + (($new // {}) | usage) | map(.k) | unique) as $keys
  | use_add($old; -1) | wl_trans($old; $new; $rv; $ev) | use_add($new; 1)
  | check_quota($keys; $rv; $ev; (($new // $old) | name));

def wl_snapshot($items; $rv; $since):
  ($items | map({key: .metadata.uid, value: .}) | from_entries) as $nw
  | .gap_since = $since
  | reduce (((.wl | keys) + ($nw | keys)) | unique)[] as $u (.; wl_trans(.wl[$u]; $nw[$u]; $rv; "SNAPSHOT"))
  | .use = {} | reduce .wl[] as $w (.; use_add($w; 1))
  | check_quota(.use | keys; $rv; "SNAPSHOT"; "(relist)");

# one Job goes from $old to $new: (iii); a transition inside a gap of the
# Workload recording (between the last event and the relist) cannot be checked
def job_trans($old; $new; $rv; $ev; $gaps):
  ($new // $old) as $o | $o.metadata.uid as $u | ($o | name) as $n
  | .jname[$u] = $n
  | (if $new != null and ($new | jfinished) and .jfin[$u] == null then .jfin[$u] = $rv else . end)
  | (if $new != null and (($new.spec.suspend == true) | not)
        and ($old == null or $old.spec.suspend == true) then
       [.wl[] | select(owner == $u)] as $ws
       # a relist at resourceVersion R holds everything up to R: the gap is
       # (since, R], so an unsuspension at R itself lies in it
       | ([$gaps[] | select(.since < $rv and $rv <= .rv)][0]) as $g
       # from a relist of the Jobs the moment of the unsuspension is unknown
       # (the Job may even have finished since): its Workload must have an admission
       | if any($ws[]; holds) or ($ev == "SNAPSHOT" and any($ws[]; adm)) then .unsuspends += 1
         elif $g == null then
           viol("iii"; $rv; $ev; $n; "Job unsuspended while its Workload holds no quota: "
                + (if $ws == [] then "no Workload" else ($ws | map(wlsum) | join("; ")) end))
         elif $g.adm[$u] == true then .unsuspends += 1 | .ingap += 1
         else viol("iii"; $rv; $ev; $n; "Job unsuspended inside a gap of the Workload recording "
                   + "(resourceVersions \($g.since)..\($g.rv)) and its Workload has no status.admission at the relist")
         end
     else . end)
  | if $new == null then del(.job[$u]) else .job[$u] = $new end;

def job_snapshot($items; $rv; $gaps):
  ($items | map({key: .metadata.uid, value: .}) | from_entries) as $nj
  | reduce (((.job | keys) + ($nj | keys)) | unique)[] as $u (.; job_trans(.job[$u]; $nj[$u]; $rv; "SNAPSHOT"; $gaps));

[inputs | .s as $s | .e
 | if .type == "SNAPSHOT" then
     {s: $s, type, rv: (.rv | tonumber), since: (.since | tonumber), items, k: 1}
   elif (.type == "ADDED" or .type == "MODIFIED" or .type == "DELETED") and .object.metadata.uid != null then
     {s: $s, type, rv: (.object.metadata.resourceVersion | tonumber), obj: .object, k: 0}
   else empty end]
# in resourceVersion order; two relists at one resourceVersion: the Workloads first
| unique_by([.rv, .k, (.s == "Job"), .obj.metadata.uid // ""])
# the gaps of the Workload recording, with which Jobs' Workloads had an
# admission at the relist that ends each (a Job unsuspended inside a gap is
# checked against that)
| ([.[] | select(.s == "Workload" and .type == "SNAPSHOT")
    | {since, rv, adm: (reduce .items[] as $w ({}; ($w | owner) as $o
        | if $o then .[$o] = ((.[$o] // false) or ($w | adm)) else . end))}]) as $gaps
| (reduce .[] as $e ({wl: {}, job: {}, use: {}, max: {}, nadm: {}, evicted: {}, evsig: {},
                      jfin: {}, wfin: {}, jname: {}, v: [], unsuspends: 0, ingap: 0, events: 0};
    .events += 1
    | if $e.s == "Workload" then
        if $e.type == "SNAPSHOT" then wl_snapshot($e.items; $e.rv; $e.since)
        else wl_event(if $e.type == "DELETED" then null else $e.obj end; $e.rv; $e.type; $e.obj.metadata.uid) end
      else
        if $e.type == "SNAPSHOT" then job_snapshot($e.items; $e.rv; $gaps)
        else job_trans(.job[$e.obj.metadata.uid]; if $e.type == "DELETED" then null else $e.obj end;
                       $e.rv; $e.type; $gaps) end
      end)) as $st
| ($final[0] // null) as $fw | ($final[1] // null) as $fj
| {
    violations: $st.v,
    count: ($st.v | group_by(.inv) | map({key: .[0].inv, value: length}) | from_entries),
    events: $st.events,
    snapshots: [.[] | select(.type == "SNAPSHOT") | {s, since, rv}],
    workloads: ($st.nadm | length),
    admissions: ([$st.nadm[]] | add // 0),
    readmitted: [$st.nadm | to_entries[] | select(.value != 1)
                 | "\($st.wl[.key] | if . then name else "uid " + .key end) x\(.value)"],
    never_admitted: [($fw // {items: []}).items[] | select($st.nadm[.metadata.uid] == null) | wlsum],
    unsuspends: $st.unsuspends,
    ingap: $st.ingap,
    max: $st.max,
    final_usage: ($st.use | with_entries(select(.value != 0))),
    recorder_mismatch: (
      if $fw == null then [] else
        ([$fw.items[], $fj.items[]] | map({key: .metadata.uid, value: .metadata.resourceVersion}) | from_entries) as $want
        | ([($st.wl | to_entries[]), ($st.job | to_entries[])]
           | map({key, value: .value.metadata.resourceVersion}) | from_entries) as $got
        | [(($want | keys) + ($got | keys) | unique)[] | select($want[.] != $got[.])
           | "uid \(.): listed at resourceVersion \($want[.] // "absent"), recorded at \($got[.] // "absent")"]
      end)
  }
JQ
}

# check_history OUT QUOTA_JSON FINAL_FILE|"" FILE...: runs the checker on
# records (one per line) from FILEs, writes its JSON to OUT.
check_history() {
    local out=$1 quota=$2 final=$3; shift 3
    local fa=(--argjson final '[]')
    [ -n "$final" ] && fa=(--slurpfile final "$final")
    cat "$@" | jq -n --argjson quota "$quota" "${fa[@]}" -f <(invariants_jq) >"$out"
}

# ---- made-up histories (the checker must catch each violation)
ev_wl() {   # ev_wl TYPE RV UID JOBUID STATE CPU [EVICTED_AT]; STATE pending|admitted|finished
    jq -nc --arg t "$1" --arg rv "$2" --arg u "$3" --arg j "$4" --arg st "$5" --arg cpu "$6" \
           --arg et "${7:-}" '
      def c($t; $s; $r): {type: $t, status: $s, reason: $r, lastTransitionTime: "2025-01-01T00:00:00Z"};
      {s: "Workload", e: {type: $t, object: {kind: "Workload",
        metadata: {name: "wl-\($u)", namespace: "default", uid: $u, resourceVersion: $rv,
                   ownerReferences: [{kind: "Job", name: "job-\($j)", uid: $j, controller: true}]},
        status: ({conditions: (
            if $st == "admitted" then [c("QuotaReserved"; "True"; "QuotaReserved"), c("Admitted"; "True"; "Admitted")]
            elif $st == "finished" then [c("QuotaReserved"; "True"; "QuotaReserved"), c("Finished"; "True"; "Succeeded")]
            else [c("QuotaReserved"; "False"; "Pending")] end
            + (if $et != "" then [c("Evicted"; "True"; "Preempted") | .lastTransitionTime = $et] else [] end))}
          + (if $st == "admitted" or $st == "finished" then {admission: {clusterQueue: "cq",
               podSetAssignments: [{name: "main", flavors: {cpu: "f"}, resourceUsage: {cpu: $cpu}, count: 1}]}}
             else {} end))}}}'
}
ev_job() {  # ev_job TYPE RV UID SUSPEND [complete]
    jq -nc --arg t "$1" --arg rv "$2" --arg u "$3" --argjson s "$4" --arg c "${5:-}" '
      {s: "Job", e: {type: $t, object: {kind: "Job",
        metadata: {name: "job-\($u)", namespace: "default", uid: $u, resourceVersion: $rv},
        spec: {suspend: $s},
        status: {conditions: (if $c == "complete" then [{type: "Complete", status: "True"}] else [] end)}}}}'
}
snap_wl() { # snap_wl SINCE RV RECORD...: a Workload relist holding those objects
    local since=$1 rv=$2; shift 2
    printf '%s\n' "$@" | jq -sc --arg since "$since" --arg rv "$rv" \
        '{s: "Workload", e: {type: "SNAPSHOT", since: $since, rv: $rv, items: map(.e.object)}}'
}
snap_job() { # snap_job SINCE RV RECORD...: a Job relist holding those objects
    local since=$1 rv=$2; shift 2
    printf '%s\n' "$@" | jq -sc --arg since "$since" --arg rv "$rv" \
        '{s: "Job", e: {type: "SNAPSHOT", since: $since, rv: $rv, items: map(.e.object)}}'
}
# selftest DESC EXPECTED: runs the checker on the records read from stdin;
# EXPECTED is the sorted list of "INV OBJECT" it must report ("" for none).
selftest() {
    local desc=$1 want=$2 f=$TMP/selftest.jsonl got
    cat >"$f"
    if ! check_history "$TMP/selftest.json" '{"cq/f/cpu":3000}' "" "$f" 2>"$TMP/selftest.err"; then
        fail "checker: $desc" "jq failed: $(head -c 300 "$TMP/selftest.err")"
        return
    fi
    got=$(jq -r '.violations[] | "\(.inv) \(.object)"' "$TMP/selftest.json" | sort | paste -sd, -)
    if [ "$got" = "$want" ]; then
        pass "checker: $desc${want:+ (reports $want)}"
    else
        fail "checker: $desc" "expected '${want:-nothing}', got '${got:-nothing}': $(jq -c .violations "$TMP/selftest.json" | head -c 400)"
    fi
}

scenario_a() {
    E2E_PREFIX="${BASE_PREFIX}a: "
    local H=$TMP/history
    { ev_job ADDED 1 j1 true; ev_wl ADDED 2 w1 j1 pending 2; ev_wl MODIFIED 3 w1 j1 admitted 2
      ev_job MODIFIED 4 j1 false; ev_job MODIFIED 5 j1 false complete; ev_wl MODIFIED 6 w1 j1 finished 2
      ev_job ADDED 7 j2 true; ev_wl ADDED 8 w2 j2 pending 3; ev_wl MODIFIED 9 w2 j2 admitted 3
      ev_job MODIFIED 10 j2 false; ev_wl DELETED 11 w1 j1 finished 2; } >"$H"
    selftest "a clean history (quota reused after Finished) passes" "" <"$H"
    { ev_wl ADDED 2 w1 j1 admitted 2; ev_wl ADDED 3 w2 j2 admitted 2; } >"$H"
    selftest "(i) 2+2 cpu admitted in a ClusterQueue of 3" "i default/wl-w2" <"$H"
    { ev_wl ADDED 2 w1 j1 admitted 2; ev_wl MODIFIED 3 w1 j1 pending 2; ev_wl MODIFIED 4 w1 j1 admitted 2; } >"$H"
    selftest "(ii) admission dropped and set again without eviction" "ii default/wl-w1" <"$H"
    { ev_wl ADDED 2 w1 j1 admitted 2; ev_wl MODIFIED 3 w1 j1 pending 2 t1; ev_wl MODIFIED 4 w1 j1 admitted 2
      ev_wl MODIFIED 5 w1 j1 pending 2 t2; ev_wl MODIFIED 6 w1 j1 admitted 2; } >"$H"
    selftest "(ii) re-admission after each Evicted=True passes" "" <"$H"
    { ev_wl ADDED 2 w1 j1 admitted 2; ev_wl MODIFIED 3 w1 j1 pending 2 t1; ev_wl MODIFIED 4 w1 j1 admitted 2 t1
      ev_wl MODIFIED 5 w1 j1 pending 2 t1; ev_wl MODIFIED 6 w1 j1 admitted 2 t1; } >"$H"
    selftest "(ii) a stale Evicted condition does not excuse a third admission" "ii default/wl-w1" <"$H"
    { ev_job ADDED 1 j1 true; ev_wl ADDED 2 w1 j1 pending 2; ev_job MODIFIED 3 j1 false; } >"$H"
    selftest "(iii) Job unsuspended while its Workload is pending" "iii default/job-j1" <"$H"
    { ev_job ADDED 1 j1 true; ev_wl ADDED 2 w1 j1 pending 2; ev_job MODIFIED 3 j1 true complete
      ev_wl MODIFIED 4 w1 j1 admitted 2; } >"$H"
    selftest "(iv) Workload admitted after its Job finished" "iv default/wl-w1" <"$H"
    { ev_wl ADDED 2 w1 j1 finished 2; ev_wl MODIFIED 3 w1 j1 pending 2; ev_wl MODIFIED 4 w1 j1 finished 2; } >"$H"
    selftest "(iv) a Finished Workload admitted again" "ii default/wl-w1,iv default/wl-w1" <"$H"
    { ev_job ADDED 1 j1 true; ev_wl ADDED 2 w1 j1 pending 2; ev_job MODIFIED 4 j1 false
      snap_wl 2 6 "$(ev_wl MODIFIED 5 w1 j1 admitted 2)"; } >"$H"
    selftest "a relist after 410 (Workload admitted in the gap) is no violation" "" <"$H"
    { ev_job ADDED 1 j1 true; ev_wl ADDED 2 w1 j1 pending 2; ev_job MODIFIED 4 j1 false
      snap_wl 2 6 "$(ev_wl MODIFIED 5 w1 j1 pending 2)"; } >"$H"
    selftest "(iii) Job unsuspended in a gap, Workload without admission at the relist" "iii default/job-j1" <"$H"
    { ev_job ADDED 1 j1 true; ev_wl ADDED 2 w1 j1 pending 2
      snap_job 2 6 "$(ev_job MODIFIED 4 j1 false complete)"
      snap_wl 2 6 "$(ev_wl MODIFIED 5 w1 j1 finished 2)"; } >"$H"
    selftest "Jobs and Workloads relisted at one resourceVersion, the Job unsuspended and done in the gap" "" <"$H"
    { ev_job ADDED 1 j1 true; ev_wl ADDED 2 w1 j1 pending 2; ev_job MODIFIED 6 j1 false
      snap_wl 2 6 "$(ev_wl MODIFIED 5 w1 j1 admitted 2)"; } >"$H"
    selftest "a Job unsuspended at the very resourceVersion of a Workload relist (admitted in the gap)" "" <"$H"
    { ev_job ADDED 1 j1 true; ev_wl ADDED 2 w1 j1 pending 2; ev_job MODIFIED 6 j1 false
      snap_wl 2 6 "$(ev_wl MODIFIED 2 w1 j1 pending 2)"; } >"$H"
    selftest "(iii) a Job unsuspended at the resourceVersion of a relist that shows no admission" "iii default/job-j1" <"$H"
    { ev_job ADDED 1 j1 true; ev_wl ADDED 2 w1 j1 pending 2; ev_job MODIFIED 4 j1 false
      ev_job MODIFIED 5 j1 false complete; snap_wl 2 6 "$(ev_wl MODIFIED 6 w1 j1 finished 2)"; } >"$H"
    selftest "a Workload admitted and finished in a gap, its Job finished in the gap too, is no violation" "" <"$H"
    { ev_job ADDED 1 j1 true; ev_wl ADDED 2 w1 j1 pending 2; ev_job MODIFIED 3 j1 true complete
      snap_wl 4 6 "$(ev_wl MODIFIED 5 w1 j1 admitted 2)"; } >"$H"
    selftest "(iv) admitted in a gap that began after its Job finished" "iv default/wl-w1" <"$H"
    E2E_PREFIX=$BASE_PREFIX
}

# ---------------------------------------------------------------- recorder

# CURL_AUTH: the arguments that make curl the cluster's admin (the embedded
# cluster takes plain requests; kube-apiserver wants the admin's client
# certificate); an array, not a function, so that `curl ... &` has curl's pid.
CURL_AUTH=()
[ "$E2E_CLUSTER" = k8s ] && CURL_AUTH=(--cacert "$TMP/k8s/pki/ca.crt"
    --cert "$TMP/k8s/pki/admin.crt" --key "$TMP/k8s/pki/admin.key")
api_curl() { curl "${CURL_AUTH[@]}" "$@"; }

# recorder KIND PATH: follows the watch of PATH (a collection) into
# $REC/KIND.NNNNN.seg files, one per connection, from resourceVersion 0 (so
# from the start), re-watching from the last resourceVersion seen (events
# and bookmarks), and relisting into a SNAPSHOT record after 410, until
# $REC/stop exists.
recorder() {
    local kind=$1 path=$2 rv=0 n=0 seg last
    while [ ! -e "$REC/stop" ]; do
        n=$((n + 1))
        seg=$(printf '%s/%s.%05d.seg' "$REC" "$kind" "$n")
        curl "${CURL_AUTH[@]}" -sN --max-time 600 -o "$seg" \
            "$API$path?watch=1&allowWatchBookmarks=true&resourceVersion=$rv" 2>/dev/null &
        echo $! >"$REC/$kind.curl"
        wait $!
        last=$(jq -R -r 'fromjson? | select(.type == "ADDED" or .type == "MODIFIED" or
                 .type == "DELETED" or .type == "BOOKMARK") | .object.metadata.resourceVersion' \
                 "$seg" 2>/dev/null | tail -n 1)
        [ -n "$last" ] && rv=$last
        if jq -R -e 'fromjson? | select((.type == "ERROR" and .object.code == 410) or
                 (.kind == "Status" and .code == 410))' "$seg" >/dev/null 2>&1; then
            while [ ! -e "$REC/stop" ]; do
                if api_curl -sf --max-time 30 -o "$REC/$kind.list" "$API$path"; then
                    n=$((n + 1))
                    seg=$(printf '%s/%s.%05d.seg' "$REC" "$kind" "$n")
                    jq -c --arg since "$rv" '{type: "SNAPSHOT", since: $since,
                        rv: .metadata.resourceVersion, items}' "$REC/$kind.list" >"$seg" &&
                        rv=$(jq -r .metadata.resourceVersion "$REC/$kind.list") && break
                fi
                sleep 0.2
            done
        elif [ -z "$last" ]; then
            sleep 0.2   # the cluster is down (or answered with an error)
        fi
    done
}

# recorded_rv KIND: the highest resourceVersion in KIND's recording so far.
recorded_rv() {
    cat "$REC/$1".*.seg 2>/dev/null | jq -R -r 'fromjson? | .object.metadata.resourceVersion // .rv // empty' \
        | sort -n | tail -n 1
}
caught_up() {   # caught_up WRV JRV: the recordings reached these resourceVersions
    local w j
    w=$(recorded_rv Workload) j=$(recorded_rv Job)
    [ -n "$w" ] && [ -n "$j" ] && [ "$w" -ge "$1" ] && [ "$j" -ge "$2" ]
}

start_recorders() {
    mkdir -p "$REC"
    recorder Workload /apis/kueue.x-k8s.io/v1beta2/workloads &
    REC_W=$!
    recorder Job /apis/batch/v1/jobs &
    REC_J=$!
}

stop_recorders() {
    touch "$REC/stop"
    local _
    for _ in $(seq 1 50); do
        kill "$(cat "$REC/Workload.curl" 2>/dev/null)" "$(cat "$REC/Job.curl" 2>/dev/null)" 2>/dev/null
        kill -0 "$REC_W" 2>/dev/null || kill -0 "$REC_J" 2>/dev/null || break
        sleep 0.1
    done
    stop_pid "$REC_W"
    stop_pid "$REC_J"
}

# records KIND: the recording as checker input records.
records() {
    local f
    for f in "$REC/$1".*.seg; do
        [ -e "$f" ] || continue
        cat "$f"; echo
    done | jq -R -c --arg s "$1" 'fromjson? | {s: $s, e: .}'
}

# ---------------------------------------------------------------- scenarios

# The quota of every scenario: three ClusterQueues (no cohort) in flavor
# "default-flavor" (no nodeLabels: any of the simulated nodes).
CQS=(cq-a:lq-a cq-b:lq-b cq-c:lq-c)
LQS="lq-a lq-b lq-c"

# scenario_start NAME CPU_A CPU_B CPU_C [CLUSTER_ARGS...]: a cluster (with
# -v: every request logged), the CRDs, the recorders, the quota, and a
# controller (-v ${CTRL_V:-1}) that has synced.
scenario_start() {
    SC=$1
    SC_T0=$SECONDS
    E2E_PREFIX="${BASE_PREFIX}$SC: "
    SCD=$TMP/$SC
    REC=$SCD/rec
    mkdir -p "$SCD"
    CL_LOG=$SCD/cluster.log CL_LISTEN=127.0.0.1:0
    [ "$E2E_CLUSTER" = k8s ] && CL_LOG=$TMP/cluster.log   # start_k8s's; logs in $TMP/k8s
    local qa=$2 qb=$3 qc=$4
    shift 4
    start_cluster -v "$@"
    apply_crds
    start_recorders
    quota_setup --flavor default-flavor "${CQS[0]}:$qa" "${CQS[1]}:$qb" "${CQS[2]}:$qc"
    # shellcheck disable=SC2086 # CTRL_EXTRA: more flags, split on spaces
    start_controller "$SC/ctrl" -v "${CTRL_V:-1}" --health-probe-bind-address 127.0.0.1:0 \
        --metrics-bind-address 127.0.0.1:0 ${CTRL_EXTRA:-}
    CTRL_LOG=$SCD/ctrl.log
    wait_for 30 "controller synced" grep -q "all informers synced" "$CTRL_LOG"
}

# scenario_jobs N CPUS RUNTIMES: creates the Jobs in the background (one
# kubectl apply); scenario_jobs_created waits for it.
scenario_jobs() {
    NJOBS=$1
    T0=$SECONDS
    create_jobs "$SC" "$1" "$LQS" "$2" "$3" &
    APPLY_PID=$!
}
scenario_jobs_created() {
    wait "$APPLY_PID"
    local rc=$?
    APPLY_PID=""
    [ "$rc" -eq 0 ] && pass "$NJOBS Jobs created (one kubectl apply)" || fail "create Jobs" "kubectl apply exit $rc"
}

# at S: sleeps until S seconds after the Jobs started being created.
at() { local d=$(($1 - (SECONDS - T0))); [ "$d" -gt 0 ] && sleep "$d"; return 0; }

fault() {   # fault JSON: POSTs a fault command to the cluster
    local out
    out=$(curl -s --max-time 10 -w ' %{http_code}' -X POST -H 'Content-Type: application/json' \
          -d "$1" "$API/cueue/faults")
    case "$out" in *" 200") return 0;; esac
    fail "fault $1" "answered: $out"
    return 1
}

nwl_finished() {   # prints "workloads finished distinct-owners"
    k get workloads -A -o json | jq -r '[.items[]] | "\(length) \(map(select(any(.status.conditions[]?;
        .type == "Finished" and .status == "True"))) | length) \(map(.metadata.ownerReferences[]? |
        select(.kind == "Job") | .uid) | unique | length)"'
}
all_wl_finished() {
    local w f o
    read -r w f o < <(nwl_finished) || return 1
    [ "$w" -eq "$NJOBS" ] && [ "$f" -eq "$NJOBS" ] && [ "$o" -eq "$NJOBS" ]
}

# quota_map: {"CQ/FLAVOR/RESOURCE": nominal milli} from the ClusterQueues.
quota_map() {
    k get clusterqueues -o json | jq -c "$JQ_QTY"'
        [.items[] | .metadata.name as $cq | .spec.resourceGroups[].flavors[] | .name as $f
         | .resources[] | {key: "\($cq)/\($f)/\(.name)", value: (.nominalQuota | qty)}] | from_entries'
}

# scenario_end: waits for every Job, then checks the outcome and the
# recorded history, and stops everything of the scenario.
scenario_end() {
    # all Jobs Complete: FAIL after $TIMEOUT s, or once nothing changed for
    # $STALL s (a stuck Workload need not cost the whole timeout)
    local end=$((T0 + TIMEOUT)) last="" since=$SECONDS c f t
    while :; do
        read -r c f t < <(njobs_done) || c=""
        if [ "$c" = "$NJOBS" ] && [ "$t" = "$NJOBS" ]; then
            pass "all $NJOBS Jobs Complete (the last $(k get jobs -o json | jq -r '[.items[] | .metadata.creationTimestamp, .status.completionTime | select(.) | fromdateiso8601] | max - min') s after the first was created)"
            break
        fi
        [ "$c $f $t" != "$last" ] && last="$c $f $t" since=$SECONDS
        if [ $SECONDS -ge $end ] || [ $((SECONDS - since)) -ge "$STALL" ]; then
            fail "all $NJOBS Jobs Complete" "after $((SECONDS - T0))s (no change for $((SECONDS - since))s): $c complete, $f failed, $t Jobs; not complete: $(k get jobs -o json | jq -r '[.items[] | select(all(.status.conditions[]?; .type != "Complete")) | "\(.metadata.name) (suspend \(.spec.suspend))"][:10] | join(", ")')"
            break
        fi
        sleep 0.5
    done
    local w f o
    read -r w f o < <(nwl_finished)
    [ "$c" = "$NJOBS" ] && ! { [ "${w:-0}" -eq "$NJOBS" ] && [ "${f:-0}" -eq "$NJOBS" ] &&
        [ "${o:-0}" -eq "$NJOBS" ]; } && poll 15 all_wl_finished
    read -r w f o < <(nwl_finished)
    [ "${w:-0}" -eq "$NJOBS" ] && [ "${f:-0}" -eq "$NJOBS" ] && [ "${o:-0}" -eq "$NJOBS" ] &&
        pass "every Workload Finished, one per Job ($f)" ||
        fail "every Workload Finished, one per Job" "$w Workloads, $f Finished, owned by $o distinct Jobs (want $NJOBS); not Finished although their Job is Complete: $({ k get jobs -o json; k get workloads -o json; } | jq -rs '
            [.[0].items[] | select(any(.status.conditions[]?; .type == "Complete" and .status == "True")) | .metadata.uid] as $done
            | [.[1].items[] | select(all(.status.conditions[]?; .type != "Finished" or .status != "True"))
               | select(.metadata.ownerReferences[]?.uid as $u | $done | index($u))
               | "\(.metadata.name) (admission \(.status.admission.clusterQueue // "none"))"]
            | "\(length): \(.[:5] | join(", "))"')"

    [ -n "${SC_BEFORE_END:-}" ] && "$SC_BEFORE_END"
    kill -0 "$CT_PID" 2>/dev/null && pass "the controller is still running" ||
        fail "the controller is still running" "it exited: $(tail -n 3 "$CTRL_LOG" | paste -sd'|' -)"
    stop_pid "$CT_PID"; CT_PID=""
    # the recording must reach the state listed now: every object's
    # resourceVersion (a list's own resourceVersion may be one that no
    # Workload or Job has: kube-apiserver's counts every kind's writes)
    local quota wrv jrv
    { k get workloads -A -o json; k get jobs -A -o json; } >"$SCD/final.json"
    read -r wrv jrv < <(jq -rs 'map([.items[].metadata.resourceVersion | tonumber] | max // 0) | "\(.[0]) \(.[1])"' "$SCD/final.json")
    poll 30 caught_up "${wrv:-0}" "${jrv:-0}" ||
        echo "      (the recording did not reach resourceVersions $wrv (Workloads) and $jrv (Jobs))"
    quota=$(quota_map)
    stop_recorders

    { records Workload; records Job; } >"$SCD/history.jsonl"
    if ! check_history "$SCD/check.json" "$quota" "$SCD/final.json" "$SCD/history.jsonl" 2>"$SCD/check.err"; then
        fail "invariant checker" "jq failed: $(head -c 300 "$SCD/check.err")"
    else
        report_history
    fi
    if [ "$E2E_CLUSTER" = k8s ]; then
        # the whole control plane goes; the next scenario brings up its own
        "$ROOT/e2e/k8s/cluster.sh" down "$TMP/k8s" >>"$CL_LOG" 2>&1
        mv "$TMP/k8s" "$SCD/k8s"
        CL_PID=""
    else
        stop_cluster
    fi
    # under -DCUEUE_SANITIZE=ON: no AddressSanitizer/UBSan/LeakSanitizer report
    local san
    san=$(grep -shE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$CTRL_LOG" "$CL_LOG" | head -n 3)
    [ -z "$san" ] && pass "no sanitizer report in the controller and cluster logs" ||
        fail "no sanitizer report" "$san"
    echo "      (scenario $SC took $((SECONDS - SC_T0))s)"
    E2E_PREFIX=$BASE_PREFIX
}

# report_history: one PASS or FAIL line per invariant, from $SCD/check.json.
report_history() {
    local c=$SCD/check.json inv desc n
    echo "      recorded $(jq .events "$c") events, $(jq '.snapshots | length' "$c") relist(s) after 410, $(jq .admissions "$c") admissions, $(jq .unsuspends "$c") unsuspends ($(jq .ingap "$c") inside a relist gap, checked at the relist)"
    for inv in i ii iii iv; do
        case $inv in
            i) desc="(i) admitted usage never above nominal quota (max $(jq -r '.max | to_entries | map("\(.key | split("/")[0]) \(.value / 1000)") | join(", ")' "$c") of $(jq -r 'to_entries | map("\(.value / 1000)") | join(", ")' <<<"$quota"))";;
            ii) desc="(ii) no Workload admitted twice without an eviction";;
            iii) desc="(iii) no Job unsuspended while its Workload holds no quota";;
            iv) desc="(iv) no Workload admitted again once its Job finished";;
        esac
        n=$(jq -r --arg i "$inv" '.count[$i] // 0' "$c")
        if [ "$n" -eq 0 ]; then
            pass "$desc"
        else
            fail "$desc" "$n violation(s), first: $(jq -r --arg i "$inv" '[.violations[] | select(.inv == $i)][:3][] |
                "\(.object) at resourceVersion \(.rv) (\(.event)): \(.msg)"' "$c" | paste -sd';' - | head -c 1500)"
        fi
    done
    n=$(jq -r '.readmitted | length' "$c")
    [ "$(jq .workloads "$c")" -eq "$NJOBS" ] && [ "$n" -eq 0 ] &&
        pass "every Workload admitted exactly once in the history ($(jq .admissions "$c") admissions)" ||
        fail "every Workload admitted exactly once" "$(jq .workloads "$c") Workloads admitted; more than once: $(jq -r '.readmitted[:10] | join(", ")' "$c"); never: $(jq -r '.never_admitted[:5] | join("; ")' "$c")"
    n=$(jq -r '.recorder_mismatch | length' "$c")
    [ "$n" -eq 0 ] && pass "the recording ends in the final LIST's state" ||
        fail "recording complete" "$n object(s) differ: $(jq -r '.recorder_mismatch[:5] | join("; ")' "$c")"
}

# b: kill -9 of the controller while admissions flow
# admissions_reach N [LOG]: waits (up to 120 s, polling every 0.1 s) until
# LOG (default the scenario's controller log) holds N admissions
admissions_reach() {
    local n=$1 log=${2:-$CTRL_LOG} end=$((SECONDS + 120))
    while [ $SECONDS -lt $end ]; do
        [ "$(grep -c "admitted Workload" "$log")" -ge "$n" ] && return 0
        sleep 0.1
    done
    return 1
}
scenario_b() {
    scenario_start b 30 28 26
    scenario_jobs "$B_JOBS" "1 2 3 4" "2s 5s 3s 6s 4s"
    local t n=0 before
    for t in $KILL_AFTER; do
        admissions_reach "$t" || echo "      (not $t admissions within 120 s: killed anyway)"
        before=$(grep -c "admitted Workload" "$CTRL_LOG")
        kill -9 "$CT_PID"; wait "$CT_PID" 2>/dev/null
        n=$((n + 1))
        echo "      kill -9 #$n at $((SECONDS - T0))s ($before admissions logged so far)"
        # a restart takes a while (a pod's does); one within milliseconds
        # can LIST before the server applied the writes its killed
        # predecessor had sent, and admit past the quota (nothing in the
        # API fences a controller without leader election)
        sleep "$RESTART_DELAY"
        start_controller b/ctrl -v "${CTRL_V:-1}" --health-probe-bind-address 127.0.0.1:0 --metrics-bind-address 127.0.0.1:0
    done
    scenario_jobs_created
    wait_for 60 "the last restarted controller synced" sh -c \
        "[ \$(grep -c 'all informers synced' '$CTRL_LOG') -gt $n ]"
    after_kills() { [ "$(grep -c "admitted Workload" "$CTRL_LOG")" -gt "$before" ]; }
    wait_for 90 "admissions after the last kill -9" after_kills
    scenario_end
}

# metrics_port: the port of the scenario's controller's /metrics (its last start)
metrics_port() { sed -n 's/.*metrics on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$CTRL_LOG" | tail -n 1; }
# wl_rewatches: how often the controller's Workload informer watched again
# (from its last resourceVersion, or after a relist), from its metrics
wl_rewatches() {
    curl -s --max-time 5 "http://127.0.0.1:$(metrics_port)/metrics" | awk '
        /^cueue_watch_(restarts|relists)_total\{resource="Workload"\} / { s += $2; n++ }
        END { if (n) print s; else exit 1 }'
}
nadmitted() { grep -c "admitted Workload" "$CTRL_LOG"; }

# c: the API server restarts (same data, same address) mid-watch
scenario_c() {
    mkdir -p "$TMP/c/data"
    scenario_start c 10 10 10 --data-dir "$TMP/c/data"
    scenario_jobs "$JOBS" "1 2 3 4" "2s 3s 4s 2s"
    scenario_jobs_created
    at 3
    local before mark rw0 rw1
    before=$(nadmitted)
    rw0=$(wl_rewatches) || rw0=""
    stop_cluster; rc=$?
    [ "$rc" -eq 0 ] && pass "API server stopped (SIGTERM, exit 0) at $((SECONDS - T0))s, $before admissions logged" ||
        fail "API server stop" "exit $rc"
    sleep 1
    mark=$(wc -l <"$CL_LOG")
    start_cluster -v --data-dir "$TMP/c/data"
    pass "API server started again on ${API#*://} with the same data"
    after_restart() { [ "$(nadmitted)" -gt "$before" ]; }
    wait_for 90 "the controller admits again after the API server restart" after_restart
    rewatched() { rw1=$(wl_rewatches) && [ -n "$rw0" ] && [ "$rw1" -gt "$rw0" ]; }
    wait_for 30 "the controller watched Workloads again after the restart (cueue_watch_restarts_total + cueue_watch_relists_total: ${rw0:-?} before)" rewatched
    if [ "$E2E_CLUSTER" = embedded ]; then
        # the controller's LIST (?limit=) or WATCH (?watch=true; the recorder's is watch=1)
        relisted() { tail -n +"$mark" "$CL_LOG" | grep -q 'GET /apis/kueue.x-k8s.io/v1beta2/workloads?\(limit\|watch=true\)'; }
        wait_for 10 "the controller re-watched or relisted Workloads from the restarted cluster" relisted
        echo "      the controller's Workload requests after the restart: $(tail -n +"$mark" "$CL_LOG" |
            grep -o 'GET /apis/kueue.x-k8s.io/v1beta2/workloads?\(limit\|watch=true\)[^ ]* -> [0-9]*' | head -n 3 | paste -sd';' -)"
    fi
    scenario_end
}

# g: etcd stopped for a few seconds and started again (the real cluster's
# kube-apiserver loses its storage; its watches and the clients' stay up)
scenario_g() {
    scenario_start g 10 10 10
    scenario_jobs "$JOBS" "1 2 3 4" "2s 3s 4s 2s"
    scenario_jobs_created
    at 3
    local before t
    before=$(nadmitted)
    t=$SECONDS
    "$ROOT/e2e/k8s/cluster.sh" stop "$TMP/k8s" etcd >>"$CL_LOG" 2>&1 &&
        pass "etcd stopped at $((SECONDS - T0))s, $before admissions logged" || fail "etcd stop" "cluster.sh failed"
    sleep 3
    "$ROOT/e2e/k8s/cluster.sh" start "$TMP/k8s" etcd >>"$CL_LOG" 2>&1 &&
        pass "etcd started again (same data) after $((SECONDS - t))s" || fail "etcd start" "cluster.sh failed"
    after_restart() { [ "$(nadmitted)" -gt "$before" ]; }
    wait_for 90 "the controller admits again after the etcd restart" after_restart
    scenario_end
}

# h: leader failover while Jobs flow: replicas with short Lease timings;
# once it has admitted 3 Workloads, the leader is killed (SIGKILL, no
# release) and the standby takes over; once that one has admitted 3, a
# third replica takes over from it while it is paused (SIGSTOP past the
# Lease duration); resumed, the paused one stops leading and
# writes no admission more. The invariants cover the whole history: two
# leaders never admit the same Workload or past the quota.
LE="--leader-elect --leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s --leader-elect-retry-period 500ms"
scenario_h() {
    CTRL_EXTRA=$LE scenario_start h 10 10 10
    local pa=$CT_PID pb pc L LP S SP t
    # shellcheck disable=SC2086
    start_controller h/ctrl-b -v 1 --health-probe-bind-address 127.0.0.1:0 \
        --metrics-bind-address 127.0.0.1:0 $LE
    pb=$CT_PID
    leads() { grep -q "became leader" "$SCD/$1.log"; }
    one_leads() { leads ctrl || leads ctrl-b; }
    wait_for 60 "a replica became leader" one_leads
    if leads ctrl; then L=ctrl LP=$pa S=ctrl-b SP=$pb; else L=ctrl-b LP=$pb S=ctrl SP=$pa; fi
    wait_for 60 "the other replica synced and stands by" grep -q "standing by" "$SCD/$S.log"
    scenario_jobs "${FAULTS_H_JOBS:-90}" "1 2 3 4" "2s 3s 4s 2s"
    # while admissions flow: once the leader has written a few
    admissions_reach 3 "$SCD/$L.log" || echo "      (the leader did not admit 3 within 120 s)"
    kill -9 "$LP"; wait "$LP" 2>/dev/null
    t=$SECONDS
    echo "      leader $L killed (SIGKILL) at $((SECONDS - T0))s, $(grep -c "admitted Workload" "$SCD/$L.log") admissions logged by it"
    wait_for 60 "the standby became leader after the leader was killed" leads "$S" &&
        echo "      took over after ~$((SECONDS - t))s"
    start_controller h/ctrl-c -v 1 --health-probe-bind-address 127.0.0.1:0 \
        --metrics-bind-address 127.0.0.1:0 $LE
    pc=$CT_PID
    wait_for 60 "replica c synced and stands by" grep -q "standing by" "$SCD/ctrl-c.log"
    admissions_reach 3 "$SCD/$S.log" || echo "      (the new leader did not admit 3 within 120 s)"
    kill -STOP "$SP"
    t=$SECONDS
    echo "      leader $S paused (SIGSTOP) at $((SECONDS - T0))s, $(grep -c "admitted Workload" "$SCD/$S.log") admissions logged by it"
    wait_for 60 "replica c became leader while $S was paused" leads ctrl-c &&
        echo "      took over after ~$((SECONDS - t))s"
    kill -CONT "$SP"
    lost() { grep -q "lost leadership" "$SCD/$S.log"; }
    wait_for 30 "the resumed replica $S logged 'lost leadership'" lost
    scenario_jobs_created
    # the scenario's end stops and judges replica c (CT_PID, CTRL_LOG)
    CT_PID=$pc CTRL_LOG=$SCD/ctrl-c.log
    after_lost() { sed -n '/lost leadership/,$p' "$SCD/$S.log" | grep -c "admitted Workload"; }
    scenario_end_h() {
        local n
        n=$(after_lost)
        [ "$n" -eq 0 ] && pass "the resumed replica $S admitted nothing after it lost leadership" ||
            fail "the resumed replica $S wrote on" "$n admissions logged after 'lost leadership'"
        echo "      admissions logged: $(for r in ctrl ctrl-b ctrl-c; do echo "$r $(grep -c "admitted Workload" "$SCD/$r.log")"; done | paste -sd, -)"
        stop_pid "$SP"
    }
    SC_BEFORE_END=scenario_end_h scenario_end
}

# d: 410 Gone (history compacted, watches dropped) while Jobs flow. First as
# is (only an informer behind the compaction point gets 410 on its re-watch:
# none when all had caught up), then with the watches stalled for 1.5 s
# before (so the Workload and Job informers are behind and must relist).
lists_after() {  # lists_after LINE: the LISTs (?limit=) in the cluster log after LINE
    tail -n +"$1" "$CL_LOG" | grep -o 'GET /api[s]*/[^ ]*?limit=[^ ]* -> 200' | sed 's/?.*//; s/^GET //'
}
scenario_d() {
    CTRL_V=3 scenario_start d 10 10 10 --admin
    scenario_jobs "$JOBS" "1 2 3 4" "2s 3s 4s 2s"
    scenario_jobs_created
    at 2
    local mark mark2
    mark=$(wc -l <"$CL_LOG")
    fault '{"compact":true}' && fault '{"dropWatches":true}' &&
        pass "history compacted and watches dropped at $((SECONDS - T0))s"
    at 4
    mark2=$(wc -l <"$CL_LOG")
    echo "      410s answered: $(sed -n "$mark,${mark2}p" "$CL_LOG" | grep -c ' -> 410'), relisted: $(sed -n "$mark,${mark2}p" "$CL_LOG" | grep -o 'GET /api[s]*/[^ ]*?limit=[^ ]* -> 200' | sed 's/?.*//; s/^GET //' | sort | uniq -c | awk '{print $2 " x" $1}' | paste -sd' ' -) (none when every informer had caught up)"
    fault '{"stallWatches":true}' && sleep 1.5 && fault '{"compact":true}' &&
        fault '{"dropWatches":true}' && fault '{"stallWatches":false}' &&
        pass "watches stalled 1.5 s, history compacted, watches dropped at $((SECONDS - T0))s"
    relist_wl() { lists_after "$mark2" | grep -q '/workloads$' && lists_after "$mark2" | grep -q '/jobs$'; }
    wait_for 20 "the controller relisted Workloads and Jobs after 410" relist_wl
    echo "      410s answered: $(tail -n +"$mark2" "$CL_LOG" | grep -c ' -> 410'), relisted: $(lists_after "$mark2" | sort | uniq -c | awk '{print $2 " x" $1}' | paste -sd' ' -)"
    relist_lines() {   # log lines about a relist (not the bodies of -v 2 writes)
        grep -vE '^cueue controller: (GET|PATCH|POST|PUT|DELETE) /' "$CTRL_LOG" |
            grep -iE 'relist|\<410\>|\<gone\>|expired|too old'
    }
    if relist_lines >/dev/null; then
        pass "the controller log shows the relist: $(relist_lines | head -n 1)"
    else
        echo "NOTE  d: the controller logs nothing when an informer relists after 410 (not even at -v 3):" \
             "interface request: one line per relist (resource, reason), at -v 1"
    fi
    scenario_end
}

# e: 409 Conflict on the Workload status writes
scenario_e() {
    scenario_start e 10 10 10 --admin
    scenario_jobs "$JOBS" "1 2 3 4" "2s 3s 4s 2s"
    at 1
    fault '{"respond":{"match":"PATCH .*/workloads/.*/status","code":409,"times":5}}'
    scenario_jobs_created
    at 4
    fault '{"respond":{"match":"PATCH .*/workloads/.*/status","code":409,"times":5}}'
    served() { [ "$(grep -c 'PATCH /apis/kueue.x-k8s.io/v1beta2/namespaces/[^ ]*/status[^ ]* -> 409' "$CL_LOG")" -ge 10 ]; }
    wait_for 60 "the 409 faults were served (10 PATCH .../status -> 409)" served
    echo "      controller log: $(grep -c '409' "$CTRL_LOG") line(s) with 409"
    scenario_end
}

# f: 429 and 503 with Retry-After on writes (set before the Jobs are created,
# so that the first Workload creations, admissions and Job starts get them)
scenario_f() {
    scenario_start f 10 10 10 --admin
    fault '{"respond":{"match":"PATCH .*/workloads/.*/status","code":429,"retryAfter":1,"times":4}}'
    fault '{"respond":{"match":"PATCH /apis/batch/v1/.*/jobs/","code":503,"retryAfter":1,"times":4}}'
    fault '{"respond":{"match":"POST .*/workloads$","code":503,"retryAfter":1,"times":3}}'
    scenario_jobs "$JOBS" "1 2 3 4" "2s 3s 4s 2s"
    scenario_jobs_created
    served() { [ "$(grep -cE '(PATCH|POST) /apis/[^ ]* -> (429|503)' "$CL_LOG")" -ge 11 ]; }
    wait_for 60 "the 429 and 503 faults were served (11 writes)" served
    scenario_end
}

dump() {
    local s
    for s in b c d e f g h; do
        [ -d "$TMP/$s" ] || continue
        show "$TMP/$s/ctrl.log" "$s: controller log" 25
        [ "$s" = h ] && show "$TMP/h/ctrl-b.log" "h: controller b log" 25 &&
            show "$TMP/h/ctrl-c.log" "h: controller c log" 25
        [ -s "$TMP/$s/check.err" ] && show "$TMP/$s/check.err" "$s: checker errors" 10
    done
}

for s in a b c d e f g h; do
    want "$s" || continue
    case $s in
    d) embedded_only "d: 410 Gone (compaction, dropped watches)" || continue ;;
    e) embedded_only "e: 409 Conflict storm on Workload status writes" || continue ;;
    f) embedded_only "f: 429 and 503 with Retry-After on writes" || continue ;;
    g) if [ "$E2E_CLUSTER" != k8s ]; then
           echo "SKIP  ${BASE_PREFIX}g: etcd restart: needs the real cluster (CUEUE_E2E_CLUSTER=k8s)"
           continue
       fi ;;
    esac
    "scenario_$s"
done
e2e_finish
