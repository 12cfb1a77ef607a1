#!/usr/bin/env bash
# prometheus.sh - end to end: the real Prometheus (Debian's `prometheus` and
# `promtool`) scrapes `cueue controller` on `cueue cluster` every second,
# and what it recorded is checked with PromQL through its HTTP API against
# what happened, as read from the API objects.
#
# Setup: ClusterQueue cq-a (cpu 4, LocalQueue lq-a) and cq-b (cpu 2, lq-b);
# cq-mem (cpu 1500m, memory 1Ei, no workloads), alone in cohort co-mem.
# Jobs of cpu 1: $NA in lq-a running 2s (4 admitted at once, the others
# wait), $NB in lq-b running 3s (2 at a time: cq-b is over quota for
# several seconds). Our own Prometheus process (its own config, TSDB in
# $TMP, a free port on 127.0.0.1; never the system service) scrapes the
# controller's --metrics-bind-address (port 0, read from its log).
#
# Checks: the target is up on every scrape; `promtool check metrics` on a
# direct scrape taken while Workloads were pending and on the final one;
# admitted and finished counters (total and per ClusterQueue) equal the
# Jobs; Prometheus saw cq-b's pending gauge (and its inadmissible part, at most
# NB-2) above 0, cueue_pending_workloads_by_reason with the quota reason, and
# both are 0 at the end; per ClusterQueue and overall,
# histogram_quantile(0.5 and 0.99) of kueue_admission_wait_time_seconds lies
# in the bucket that holds the true quantile of the waits computed from the
# Workloads (QuotaReserved transition - creationTimestamp of the Workload,
# or of its Job when earlier), the bucket counts
# agree with those waits, _count equals the admissions; nominal quota (cpu
# in cores, memory in bytes),
# the subtree quota of cq-mem's cohort, cueue_leader, and a non-zero rate of cueue_api_requests_total.
#
# Timestamps in the API objects have whole seconds, the controller measures
# with its own clock: a Workload's wait as the controller saw it is in
# [W, W+1) where W is the wait read from the objects. The checks allow for
# exactly that (and no more).
#
# Usage: e2e/prometheus.sh PATH_TO_cueue
# Needs: kubectl, jq, curl, prometheus, promtool, timeout (SKIP without one).
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq curl prometheus promtool

NA=6 NB=6     # the checks assume more Jobs than quota in both queues
N=$((NA + NB))
# the reason of cueue_pending_workloads_by_reason for "no flavor has enough
# unused quota" (docs/metrics.md)
QUOTA_REASON=InsufficientQuota

dump() {
    show "$TMP/ctrl.log" "controller log"
    show "$TMP/prometheus.log" "prometheus log"
    [ -n "${PROM:-}" ] && { echo "---- targets"; curl -s "$PROM/api/v1/targets" | jq -c '.data.activeTargets[]? | {scrapeUrl, health, lastError}'; }
    echo "---- workloads"
    k get workloads -o wide 2>&1 | sed 's/^/  | /' | tail -n 40
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on now (the
# caller retries when it is taken before it binds it).
free_port() {
    local p _
    for _ in $(seq 1 50); do
        p=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
    done
    return 1
}

# ---- cluster, quota, controller

start_cluster
apply_crds
quota_setup cq-a:lq-a:4 cq-b:lq-b:2
# cq-mem: no workloads; its quota shows the units of the gauges (cpu in
# cores, memory in bytes: 1Ei is held, as in Kueue)
k apply -f - >/dev/null <<'YAML' || fail "apply cq-mem" "kubectl failed"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-mem}
spec:
  cohortName: co-mem
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: general
      resources: [{name: cpu, nominalQuota: 1500m}, {name: memory, nominalQuota: 1Ei}]
YAML

start_controller ctrl -v 1 --health-probe-bind-address 0 --metrics-bind-address 127.0.0.1:0
wait_for 30 "controller synced" grep -q "all informers synced" "$TMP/ctrl.log"
wait_for 15 "controller logs its metrics address" grep -q "metrics on [^ ]* (/metrics)" "$TMP/ctrl.log"
MADDR=$(sed -n 's/.*metrics on \([^ ]*\) (\/metrics).*/\1/p' "$TMP/ctrl.log" | head -n 1)
METRICS=http://$MADDR/metrics
[ -n "$MADDR" ] || { fail "metrics address" "none in the log"; e2e_finish; }

# ---- our own Prometheus

mkdir -p "$TMP/prom/data"
cat >"$TMP/prom/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: cueue
    static_configs:
      - targets: ['$MADDR']
YAML
PROM_PID="" PROM=""
for _ in 1 2 3; do
    PP=$(free_port) || break
    # started directly (no subshell), so $! is prometheus itself and the
    # harness stops it by that pid
    prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
        --web.listen-address="127.0.0.1:$PP" --storage.tsdb.retention.time=1h \
        --log.level=warn 2>>"$TMP/prometheus.log" &
    PROM_PID=$!
    PROM=http://127.0.0.1:$PP
    ready() { kill -0 "$PROM_PID" 2>/dev/null && curl -sf --max-time 2 "$PROM/-/ready" >/dev/null; }
    if poll 60 ready; then break; fi
    kill -0 "$PROM_PID" 2>/dev/null && { stop_pid "$PROM_PID"; }
    wait "$PROM_PID" 2>/dev/null
    PROM_PID="" PROM=""
    grep -q "address already in use" "$TMP/prometheus.log" || break
done
if [ -z "$PROM" ]; then
    fail "prometheus started" "see its log"
    e2e_finish
fi
pass "prometheus ready on ${PROM#http://} (pid $PROM_PID)"

# q QUERY: Prometheus's JSON answer to an instant query (now).
q() { curl -sfG --max-time 10 "$PROM/api/v1/query" --data-urlencode "query=$1"; }
# qv QUERY: the value of a query with a one-element (or scalar) result; empty otherwise.
qv() {
    q "$1" | jq -r 'select(.status == "success") | .data.result |
        if type == "array" then (if length == 1 then .[0].value[1] else empty end) else .[1] end'
}
# qmap QUERY LABEL: {label value: number} of a vector result.
qmap() {
    q "$1" | jq -c --arg l "$2" 'select(.status == "success") |
        [.data.result[] | {key: .metric[$l], value: (.value[1] | tonumber)}] | from_entries'
}
# num_is QUERY OP NUMBER: the query's single value compares (awk) true.
num_is() {
    local v; v=$(qv "$1")
    [ -n "$v" ] && awk -v a="$v" -v b="$3" "BEGIN { exit !((a + 0) $2 (b + 0)) }"
}
# expect_num DESC QUERY OP NUMBER: PASS/FAIL with what Prometheus answered.
expect_num() {
    local v; v=$(qv "$2")
    if [ -n "$v" ] && awk -v a="$v" -v b="$4" "BEGIN { exit !((a + 0) $3 (b + 0)) }"; then
        pass "$1 ($2 = $v)"
    else
        fail "$1" "query $2: expected $3 $4, got '${v:-no single value}'"
    fi
}

wait_for 30 "Prometheus scrapes the controller: up{job=\"cueue\"} == 1" num_is 'up{job="cueue"}' == 1

# ---- the Jobs

create_jobs a "$NA" lq-a 1 2s || fail "create Jobs a" "kubectl failed"
create_jobs b "$NB" lq-b 1 3s || fail "create Jobs b" "kubectl failed"

# A direct scrape while cq-b has pending Workloads (the controller is busy
# admitting, starting and finishing): text format, checked by promtool.
busy_scrape() {
    curl -sf --max-time 5 "$METRICS" >"$TMP/busy.prom" || return 1
    awk '/^kueue_pending_workloads\{/ && /cluster_queue="cq-b"/ { s += $NF } END { exit !(s > 0) }' "$TMP/busy.prom"
}
if wait_for 60 "direct scrape with cq-b Workloads pending" busy_scrape; then
    if promtool check metrics <"$TMP/busy.prom" >"$TMP/promtool-busy.out" 2>&1; then
        pass "promtool check metrics passes on the busy scrape ($(grep -vc '^#' "$TMP/busy.prom") samples)"
    else
        fail "promtool check metrics (busy scrape)" "$(head -n 20 "$TMP/promtool-busy.out" | tr '\n' ';')"
    fi
fi

wait_for 120 "all $N Jobs complete" all_jobs_complete "$N"
all_finished() {
    k get workloads -o json | jq -e --argjson n "$N" '[.items[] |
        select(any(.status.conditions[]?; .type == "Finished" and .status == "True"))] | length == $n'
}
wait_for 60 "all $N Workloads Finished" all_finished
wait_for 30 "Prometheus saw all finishes" num_is 'sum(kueue_finished_workloads_total)' == "$N"
# a few more scrapes after that
T=$(date +%s)
wait_for 30 "three more scrapes" num_is 'timestamp(up{job="cueue"})' '>=' $((T + 3))

if curl -sf --max-time 5 "$METRICS" >"$TMP/final.prom" \
        && promtool check metrics <"$TMP/final.prom" >"$TMP/promtool-final.out" 2>&1; then
    pass "promtool check metrics passes on the final scrape"
else
    fail "promtool check metrics (final scrape)" "$(head -n 20 "$TMP/promtool-final.out" 2>/dev/null | tr '\n' ';')"
fi

# ---- PromQL checks

expect_num "target up" 'up{job="cueue"}' == 1
expect_num "no failed scrape" 'min_over_time(up{job="cueue"}[5m])' == 1

expect_num "admitted total equals the Jobs" 'sum(kueue_admitted_workloads_total)' == "$N"
want=$(jq -cn --argjson a "$NA" --argjson b "$NB" '{"cq-a": $a, "cq-b": $b}')
got=$(qmap 'sum by (cluster_queue) (kueue_admitted_workloads_total)' cluster_queue)
[ "$got" = "$want" ] && pass "admitted per ClusterQueue $got" \
    || fail "admitted per ClusterQueue" "sum by (cluster_queue) (kueue_admitted_workloads_total): expected $want, got '$got'"
expect_num "finished total equals the Jobs" 'sum(kueue_finished_workloads_total)' == "$N"
got=$(qmap 'sum by (cluster_queue) (kueue_finished_workloads_total)' cluster_queue)
[ "$got" = "$want" ] && pass "finished per ClusterQueue $got" \
    || fail "finished per ClusterQueue" "sum by (cluster_queue) (kueue_finished_workloads_total): expected $want, got '$got'"

# pending: before the first cycle all of a queue's Workloads can be pending
# (active); once tried, at most NB-2 of cq-b (NA-4 of cq-a) wait inadmissible
# while the others hold the quota. Prometheus must have seen cq-b waiting.
maxpend='max_over_time(sum by (cluster_queue) (kueue_pending_workloads)[5m:1s])'
got=$(qmap "$maxpend" cluster_queue)
if jq -e --argjson b "$NB" --argjson a "$NA" \
        '.["cq-b"] > 0 and .["cq-b"] <= $b and (.["cq-a"] // 0) <= $a' <<<"$got" >/dev/null 2>&1; then
    pass "pending seen while cq-b was over quota: max $got"
else
    fail "pending while over quota" "$maxpend: expected cq-b in 1..$NB, cq-a <= $NA, got '$got'"
fi
maxinad='max_over_time(sum by (cluster_queue) (kueue_pending_workloads{status="inadmissible"})[5m:1s])'
got=$(qmap "$maxinad" cluster_queue)
if jq -e --argjson b $((NB - 2)) --argjson a $((NA - 4)) \
        '.["cq-b"] > 0 and .["cq-b"] <= $b and (.["cq-a"] // 0) <= $a' <<<"$got" >/dev/null 2>&1; then
    pass "inadmissible seen for cq-b, never more than could wait: max $got"
else
    fail "inadmissible pending" "$maxinad: expected cq-b in 1..$((NB - 2)), cq-a <= $((NA - 4)), got '$got'"
fi
expect_num "cueue_pending_workloads_by_reason saw cq-b waiting with reason=\"$QUOTA_REASON\"" \
    "max_over_time(sum(cueue_pending_workloads_by_reason{cluster_queue=\"cq-b\",reason=\"$QUOTA_REASON\"})[5m:1s])" '>' 0
expect_num "no pending workloads at the end" 'sum(kueue_pending_workloads)' == 0
expect_num "no pending by reason at the end" 'sum(cueue_pending_workloads_by_reason) or vector(0)' == 0

# quota and controller state
expect_num "nominal quota cq-a cpu" 'sum(kueue_cluster_queue_nominal_quota{cluster_queue="cq-a",flavor="general",resource="cpu"})' == 4
expect_num "nominal quota cq-mem cpu in cores" 'sum(kueue_cluster_queue_nominal_quota{cluster_queue="cq-mem",flavor="general",resource="cpu"})' == 1.5
expect_num "nominal quota cq-mem memory 1Ei in bytes" 'sum(kueue_cluster_queue_nominal_quota{cluster_queue="cq-mem",flavor="general",resource="memory"})' == 1152921504606846976
# a cohort's subtree quota is what its ClusterQueues put in, in Kueue's
# internal amounts (millicores; bytes); nothing reserved, no series
expect_num "cohort co-mem subtree quota cpu in millicores" 'sum(kueue_cohort_subtree_quota{cohort="co-mem",flavor="general",resource="cpu"})' == 1500
expect_num "cohort co-mem subtree quota memory in bytes" 'sum(kueue_cohort_subtree_quota{cohort="co-mem",flavor="general",resource="memory"})' == 1152921504606846976
expect_num "cohort co-mem reserves nothing: no reservation series" 'absent(kueue_cohort_subtree_resource_reservations{cohort="co-mem"})' == 1
expect_num "nominal quota cq-b cpu" 'sum(kueue_cluster_queue_nominal_quota{cluster_queue="cq-b",flavor="general",resource="cpu"})' == 2
expect_num "leader" 'cueue_leader' == 1
expect_num "API requests have a rate" 'max_over_time(sum(rate(cueue_api_requests_total[1m]))[5m:1s])' '>' 0

# ---- the admission wait histogram against the Workloads

# {cq, w} per Workload: w = QuotaReserved=True transition minus the start of
# the wait: the creation of the Workload, or of its Job when earlier (the
# wait a team sees starts when it submits the Job; Cueue's Workload may be
# created a moment later, or much later after a controller outage).
k get jobs -o json >"$TMP/jobs.json"
k get workloads -o json | jq -c --slurpfile jobs "$TMP/jobs.json" '
    def ts: sub("\\.[0-9]+"; "") | fromdateiso8601;
    ($jobs[0].items | map({key: .metadata.uid, value: (.metadata.creationTimestamp | ts)}) | from_entries) as $jc
    | [.items[] | select(.status.admission != null) |
    ([(.metadata.ownerReferences // [])[] | select(.kind == "Job") | $jc[.uid] // empty]) as $j
    | {cq: .status.admission.clusterQueue,
     w: (((.status.conditions[] | select(.type == "QuotaReserved" and .status == "True")
           | .lastTransitionTime | ts)
          - ([(.metadata.creationTimestamp | ts)] + $j | min)))}]' \
    >"$TMP/waits.json"
for cq in cq-a cq-b ""; do
    echo "      waits from the Workloads${cq:+ of $cq} (s): $(jq -c --arg cq "$cq" \
        '[.[] | select($cq == "" or .cq == $cq) | .w] | sort' "$TMP/waits.json")"
done
jq -e --argjson n "$N" 'length == $n' "$TMP/waits.json" >/dev/null \
    && pass "$N admitted Workloads read back" || fail "Workloads read back" "$(jq length "$TMP/waits.json") of $N"
expect_num "wait histogram _count equals the admissions" 'sum(kueue_admission_wait_time_seconds_count)' == "$N"
expect_num "wait histogram _count of cq-b" 'sum(kueue_admission_wait_time_seconds_count{cluster_queue="cq-b"})' == "$NB"

# hist_check [CQ]: the histogram of kueue_admission_wait_time_seconds (all
# ClusterQueues, or CQ's) against the waits of the Workloads:
#  - each cumulative bucket count lies between the Workloads with W+1 <= le
#    (surely in it) and those with W <= le (possibly in it);
#  - histogram_quantile(0.5 and 0.99) lies within the bucket holding the true
#    quantile (rank ceil(q*n), as Prometheus ranks; the true value is in
#    [W_k, W_k+1), so the range runs from the lower bound of W_k's bucket to
#    the upper bound of W_k+1's: one bucket unless W_k+1 crosses a bound).
# The bucket bounds are the le labels Prometheus stored.
hist_check() {
    local cq=${1:-} sel="" name qq query v verdict
    [ -n "$cq" ] && sel="{cluster_queue=\"$cq\"}"
    name="admission wait${cq:+ of $cq}"
    jq -c --arg cq "$cq" '[.[] | select($cq == "" or .cq == $cq) | .w] | sort' "$TMP/waits.json" >"$TMP/w.json"
    query="sum by (le) (kueue_admission_wait_time_seconds_bucket$sel)"
    q "$query" | jq -c '[.data.result[] | {le: .metric.le, n: (.value[1] | tonumber)}
        | .x = (if .le == "+Inf" then infinite else (.le | tonumber) end)] | sort_by(.x)' >"$TMP/buckets.json"
    echo "      $name, buckets: $(jq -r 'map("\(.le):\(.n)") | join(" ")' "$TMP/buckets.json")"
    if jq -e --slurpfile w "$TMP/w.json" 'length > 0 and all(.[];
            .x as $le | .n >= ([$w[0][] | select(. + 1 <= $le)] | length)
                      and .n <= ([$w[0][] | select(. <= $le)] | length))' "$TMP/buckets.json" >/dev/null; then
        pass "$name: bucket counts agree with the Workloads"
    else
        fail "$name: bucket counts" "$query = $(jq -c 'map({le, n})' "$TMP/buckets.json"), waits $(cat "$TMP/w.json")"
    fi
    for qq in 0.5 0.99; do
        query="histogram_quantile($qq, sum by (le) (kueue_admission_wait_time_seconds_bucket$sel))"
        v=$(qv "$query")
        verdict=$(jq -rn --slurpfile w "$TMP/w.json" --slurpfile b "$TMP/buckets.json" \
            --argjson q "$qq" --arg v "${v:-NaN}" '
            $w[0] as $ws | ($ws | length) as $n |
            [$b[0][] | .x | select(. != infinite)] as $les |
            (($q * $n) | ceil) as $k |
            $ws[$k - 1] as $lo | ($lo + 1) as $hi |
            (([$les[] | select(. < $lo)] | last) // 0) as $from |
            (([$les[] | select(. >= $hi)] | first) // infinite) as $to |
            ($v | tonumber? // null) as $got |
            if $n > 0 and $got != null and $got >= $from and $got <= $to
            then "ok true in [\($lo), \($hi)) (rank \($k) of \($n)): bucket range [\($from), \($to)]"
            else "bad expected in [\($from), \($to)] (true in [\($lo), \($hi)), rank \($k) of \($n))" end')
        case "$verdict" in
            ok*) pass "$name: p$(awk -v q="$qq" 'BEGIN { print q * 100 }') = $v s, ${verdict#ok }";;
            *) fail "$name: p$(awk -v q="$qq" 'BEGIN { print q * 100 }')" \
                    "query $query: ${verdict#bad }, got '${v:-no value}'";;
        esac
    done
}
hist_check
hist_check cq-a
hist_check cq-b

stop_pid "$PROM_PID"; rc=$?
[ "$rc" -eq 0 ] && pass "prometheus stopped (exit 0)" || fail "prometheus stopped" "exit $rc"
PROM=""

e2e_finish
