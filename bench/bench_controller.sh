#!/usr/bin/env bash
# bench_controller.sh - end-to-end figures for `cueue controller` on
# `cueue cluster` (issue 5): N suspended Jobs over C ClusterQueues, created
# as fast as possible, admitted, unsuspended, run and finished. Prints the
# time from Job creation to unsuspend (p50, p99, max), the API requests per
# admission the controller made (counted by the cluster's request log), the
# controller's peak RSS, the wall time, admissions/s and the cluster's RSS.
# See bench/README.md. Runs by hand, not in CI.
#
# Usage: bench/bench_controller.sh PATH_TO_cueue [options]
#   --jobs N         Jobs to create (default 2000)
#   --cqs N          ClusterQueues (default 30)
#   --cohorts N      cohorts the ClusterQueues are spread over (default 5)
#   --namespaces N   namespaces holding the LocalQueues and Jobs (default 5)
#   --fit PCT        nominal quota as a percentage of each ClusterQueue's
#                    total demand (default 50: about half the Jobs fit at once)
#   --timeout S      give up S seconds after the first create (default 900)
#   --stall S        give up when no Job was unsuspended and no Workload
#                    finished for S seconds (default 120)
#   --settle S       seconds to wait after the last Workload finished before
#                    stopping the controller (default 2)
#   --controller-arg A  one more argument for `cueue controller` (repeatable)
#   --keep DIR       keep the generated manifests, logs and event streams in DIR
#   --json           also print one JSON line with every figure
# Needs bash, curl, jq, kubectl, awk, sort. Exit codes: 0 every Job was
# unsuspended and finished, 1 a failure or the timeout, 2 bad usage.
set -euo pipefail
export LC_ALL=C

me=bench_controller.sh
die_usage() { echo "$me: $*" >&2; echo "Run '$me --help' for the options." >&2; exit 2; }
log() { echo "$me: $*" >&2; }

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

[ $# -ge 1 ] || die_usage "needs PATH_TO_cueue"
case "$1" in -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
cueue=$1
shift
jobs=2000 cqs=30 cohorts=5 nss=5 fit=50 timeout=900 stall=120 settle=2 keep="" json=0
ctl_args=()
isnum() { [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge "${3:-1}" ] || die_usage "$1: '$2' is not a whole number >= ${3:-1}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs|--cqs|--cohorts|--namespaces|--fit|--timeout|--stall|--settle|--controller-arg|--keep)
      [ $# -ge 2 ] || die_usage "$1 needs a value" ;;
  esac
  case "$1" in
    --jobs) isnum "$1" "$2"; jobs=$2; shift 2 ;;
    --cqs) isnum "$1" "$2"; cqs=$2; shift 2 ;;
    --cohorts) isnum "$1" "$2"; cohorts=$2; shift 2 ;;
    --namespaces) isnum "$1" "$2"; nss=$2; shift 2 ;;
    --fit) isnum "$1" "$2"; fit=$2; shift 2 ;;
    --timeout) isnum "$1" "$2"; timeout=$2; shift 2 ;;
    --stall) isnum "$1" "$2"; stall=$2; shift 2 ;;
    --settle) isnum "$1" "$2" 0; settle=$2; shift 2 ;;
    --controller-arg) ctl_args+=("$2"); shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --json) json=1; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die_usage "unknown option '$1'" ;;
  esac
done
[ "$cohorts" -le "$cqs" ] || die_usage "--cohorts $cohorts is more than --cqs $cqs"
[ "$nss" -le "$cqs" ] || die_usage "--namespaces $nss is more than --cqs $cqs"
[ -x "$cueue" ] || die_usage "$cueue is not an executable (build the target cueue)"
for t in curl jq kubectl awk sort; do
  command -v "$t" >/dev/null || die_usage "$t is needed and not on PATH"
done

if [ -n "$keep" ]; then
  mkdir -p "$keep"
  tmp=$(cd "$keep" && pwd)
else
  tmp=$(mktemp -d)
fi
cl_pid="" ctl_pid="" wj_pid="" ww_pid=""
stop_pid() {   # stop_pid PID: SIGTERM, up to 15 s, then SIGKILL
  local p=$1
  [ -n "$p" ] || return 0
  if kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
  fi
  wait "$p" 2>/dev/null || true
}
cleanup() {
  stop_pid "$ctl_pid"; ctl_pid=""
  stop_pid "$cl_pid"; cl_pid=""
  stop_pid "$wj_pid"; wj_pid=""
  stop_pid "$ww_pid"; ww_pid=""
  [ -n "$keep" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- the load
# Three classes in Kueue's baseline proportions (350:100:50 per ClusterQueue,
# performance.md 1.3) and sizes (1, 5, 20 cpu) and priorities (50, 100,
# 200, as WorkloadPriorityClasses); runtimes in whole seconds, since the
# simulated kubelet counts from a second-precision startTime.
cls_name=(small medium large)
cls_cpu=(1 5 20)
cls_prio=(50 100 200)
cls_runtime=(4s 6s 8s)
# job_class IDX: sets c to the class of the IDX-th Job of a ClusterQueue.
job_class() { local r=$(($1 % 10)); if [ $r -lt 7 ]; then c=0; elif [ $r -lt 9 ]; then c=1; else c=2; fi; }

node_cpu=64
declare -a demand
for ((i = 0; i < cqs; i++)); do demand[i]=0; done
mkdir -p "$tmp/jobs"
jobcfg="$tmp/create.curl"
: >"$jobcfg"
# Jobs go round-robin over the ClusterQueues; Job k of CQ i is the k-th
# Job whose index is i modulo cqs, so every CQ gets every class.
for ((k = 0; k < jobs; k++)); do
  i=$((k % cqs))
  job_class $((k / cqs))
  demand[i]=$((demand[i] + cls_cpu[c]))
done

quota="$tmp/quota.yaml"
{
  for ((n = 0; n < nss; n++)); do
    printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bench-ns-%d\n---\n' "$n"
  done
  printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: bench-cpu\nspec:\n  nodeLabels:\n    cueue.dev/bench-pool: cpu\n---\n'
  for c in 0 1 2; do
    printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: bench-%s\nvalue: %d\n---\n' \
      "${cls_name[c]}" "${cls_prio[c]}"
  done
  total_quota=0
  for ((i = 0; i < cqs; i++)); do
    q=$(((demand[i] * fit + 99) / 100))
    [ "$q" -ge 20 ] || q=20   # a large Job must fit in its own ClusterQueue
    total_quota=$((total_quota + q))
    printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: bench-cq-%d\nspec:\n  cohortName: bench-cohort-%d\n  namespaceSelector: {}\n  queueingStrategy: BestEffortFIFO\n  resourceGroups:\n  - coveredResources: ["cpu"]\n    flavors:\n    - name: bench-cpu\n      resources:\n      - name: cpu\n        nominalQuota: %d\n---\n' \
      "$i" $((i % cohorts)) "$q"
    printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: bench-lq-%d\n  namespace: bench-ns-%d\nspec:\n  clusterQueue: bench-cq-%d\n---\n' \
      "$i" $((i % nss)) "$i"
  done
  echo "# total nominal cpu: $total_quota"
} >"$quota"
total_quota=$(sed -n 's/^# total nominal cpu: //p' "$quota")
total_demand=0
for ((i = 0; i < cqs; i++)); do total_demand=$((total_demand + demand[i])); done

# Nodes: room for all the quota at once, plus a quarter for fragmentation
# (a pod pending for want of a node would hold quota without running).
nnodes=$(((total_quota * 5 / 4 + node_cpu - 1) / node_cpu + 1))
nodes="$tmp/nodes.yaml"
for ((n = 0; n < nnodes; n++)); do
  printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: bench-node-%d\n  labels:\n    kubernetes.io/hostname: bench-node-%d\n    cueue.dev/bench-pool: cpu\nstatus:\n  capacity:\n    cpu: "%d"\n    memory: 512Gi\n    pods: "110"\n---\n' \
    "$n" "$n" "$node_cpu"
done >"$nodes"

# The Jobs: one JSON body each, POSTed by one curl process in parallel (the
# query parameter fieldManager=cueue-bench marks the benchmark's own
# requests in the cluster's log).
for ((k = 0; k < jobs; k++)); do
  i=$((k % cqs))
  job_class $((k / cqs))
  ns=$((i % nss))
  name=$(printf 'bench-%s-%05d' "${cls_name[c]}" "$k")
  printf '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"%s","namespace":"bench-ns-%d","labels":{"kueue.x-k8s.io/queue-name":"bench-lq-%d","kueue.x-k8s.io/priority-class":"bench-%s"}},"spec":{"suspend":true,"parallelism":1,"completions":1,"template":{"metadata":{"annotations":{"cueue.dev/simulated-runtime":"%s"}},"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"registry.example.com/bench/sleep:1","resources":{"requests":{"cpu":"%d"}}}]}}}}\n' \
    "$name" "$ns" "$i" "${cls_name[c]}" "${cls_runtime[c]}" "${cls_cpu[c]}" >"$tmp/jobs/$k.json"
done

# ---------------------------------------------------------------- helpers
proc_kib() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status" 2>/dev/null || true; }
proc_cpu_s() {   # utime + stime of PID in seconds
  local tck
  tck=$(getconf CLK_TCK)
  # the command name (field 2) may hold spaces: cut after its ')'
  sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk -v t="$tck" '{printf "%.2f", ($12 + $13) / t}' || true
}
now() { echo "$EPOCHREALTIME"; }
# Prefixes each line of stdin with the time it was read.
stamp() { local l; while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }

# ---------------------------------------------------------------- cluster
kc="$tmp/kubeconfig"
log "$jobs Jobs over $cqs ClusterQueues ($cohorts cohorts, $nss namespaces), $nnodes nodes of $node_cpu cpu; demand $total_demand cpu, nominal quota $total_quota cpu; files in $tmp"
"$cueue" cluster --listen 127.0.0.1:0 --kubeconfig-out "$kc" --nodes "$nodes" -v 2>"$tmp/cluster.log" &
cl_pid=$!
for _ in $(seq 1 200); do
  [ -s "$kc" ] && break
  kill -0 "$cl_pid" 2>/dev/null || break
  sleep 0.05
done
if [ ! -s "$kc" ]; then
  log "cueue cluster did not write $kc; its log:"
  tail -n 20 "$tmp/cluster.log" >&2
  exit 1
fi
url=$(sed -n 's/^[[:space:]]*server:[[:space:]]*"\{0,1\}\([^"]*\)"\{0,1\}[[:space:]]*$/\1/p' "$kc" | head -n 1)
[ -n "$url" ] || { log "no server URL in $kc"; exit 1; }
log "cueue cluster pid $cl_pid at $url"

kcn=0
kctl() { kcn=$((kcn + 1)); kubectl --kubeconfig "$kc" --cache-dir "$tmp/kcache-$kcn" "$@"; }
kctl apply -f "$root/crds/" >"$tmp/setup.log" 2>&1 || { log "applying crds/ failed:"; cat "$tmp/setup.log" >&2; exit 1; }
ok=0
for _ in 1 2 3 4 5; do
  if kctl apply -f "$quota" >>"$tmp/setup.log" 2>&1; then ok=1; break; fi
  sleep 0.5
done
[ "$ok" = 1 ] || { log "applying the quota setup failed:"; tail -n 20 "$tmp/setup.log" >&2; exit 1; }

# ---------------------------------------------------------------- watches
# Each event is stamped with its receipt time by jq's `now`.
curl -sN "$url/apis/batch/v1/jobs?watch=true&timeoutSeconds=7200&fieldManager=cueue-bench" |
  jq -r --unbuffered '[now, .type, ((.object.metadata.namespace // "") + "/" + (.object.metadata.name // "")),
        (.object.spec.suspend // false), (.object.status.succeeded // 0), (.object.status.failed // 0)] | @tsv' \
    >"$tmp/jobs.tsv" 2>"$tmp/jobs-watch.err" &
wj_pid=$!
curl -sN "$url/apis/kueue.x-k8s.io/v1beta2/workloads?watch=true&timeoutSeconds=7200&fieldManager=cueue-bench" |
  jq -r --unbuffered '[now, .type, ((.object.metadata.namespace // "") + "/" + (.object.metadata.name // "")),
        ((.object.metadata.namespace // "") + "/" + ((.object.metadata.ownerReferences // [])[0].name // "")),
        (.object.status.admission != null),
        ([.object.status.conditions[]? | select(.type == "Finished" and .status == "True")] | length > 0)] | @tsv' \
    >"$tmp/workloads.tsv" 2>"$tmp/workloads-watch.err" &
ww_pid=$!
for _ in $(seq 1 200); do
  [ "$(grep -c 'fieldManager=cueue-bench -> 200 (watch)' "$tmp/cluster.log" || true)" -ge 2 ] && break
  sleep 0.05
done
[ "$(grep -c 'fieldManager=cueue-bench -> 200 (watch)' "$tmp/cluster.log" || true)" -ge 2 ] ||
  { log "the benchmark's watches did not start; cluster log:"; tail -n 20 "$tmp/cluster.log" >&2; exit 1; }

# ---------------------------------------------------------------- controller
# Every request the cluster logs from here on, except the benchmark's own
# (fieldManager=cueue-bench), is the controller's.
l0=$(wc -l <"$tmp/cluster.log")
probe=()
ctl_help=$("$cueue" controller --help 2>&1 || true)
case "$ctl_help" in *--health-probe-bind-address*) probe+=(--health-probe-bind-address 0) ;; esac
case "$ctl_help" in *--metrics-bind-address*) probe+=(--metrics-bind-address 0) ;; esac
t_ctl=$(now)
"$cueue" controller --kubeconfig "$kc" ${probe[@]+"${probe[@]}"} ${ctl_args[@]+"${ctl_args[@]}"} \
  2> >(stamp >"$tmp/controller.log") &
ctl_pid=$!
synced=0
for _ in $(seq 1 1200); do
  grep -q 'starting admission cycles' "$tmp/controller.log" 2>/dev/null && { synced=1; break; }
  kill -0 "$ctl_pid" 2>/dev/null || break
  sleep 0.05
done
if [ "$synced" != 1 ]; then
  log "the controller did not start its admission cycles within 60 s; its log:"
  tail -n 20 "$tmp/controller.log" >&2
  exit 1
fi
t_sync=$(now)
log "cueue controller pid $ctl_pid synced after $(awk -v a="$t_ctl" -v b="$t_sync" 'BEGIN {printf "%.2f", b - a}') s"

# ---------------------------------------------------------------- the Jobs
for ((k = 0; k < jobs; k++)); do
  printf 'url = "%s/apis/batch/v1/namespaces/bench-ns-%d/jobs?fieldManager=cueue-bench"\n' \
    "$url" $(((k % cqs) % nss))
  printf 'data-binary = "@%s/jobs/%d.json"\nheader = "Content-Type: application/json"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n' \
    "$tmp" "$k"
  [ "$k" -eq $((jobs - 1)) ] || echo next
done >"$jobcfg"
t0=$(now)
curl -s -Z --parallel-max 8 -K "$jobcfg" >"$tmp/create.codes" 2>"$tmp/create.err" || true
t1=$(now)
created=$(grep -c '^201$' "$tmp/create.codes" || true)
log "created $created of $jobs Jobs in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}') s"
if [ "$created" -ne "$jobs" ]; then
  log "some creates failed: $(sort "$tmp/create.codes" | uniq -c | tr '\n' ' ')"
  exit 1
fi

# ---------------------------------------------------------------- wait
# Until every Job was unsuspended and every Workload is Finished, sampling
# the controller's memory on the way.
max_rss=0 rc=0 last_report=0 progress="" t_progress=$t0
while :; do
  t=$(now)
  r=$(proc_kib "$ctl_pid" VmRSS)
  r=${r:-0}
  [ "$r" -gt "$max_rss" ] && max_rss=$r
  uns=$(awk -F'\t' '$4 == "false" && !s[$3]++ {n++} END {print n + 0}' "$tmp/jobs.tsv")
  fin=$(awk -F'\t' '$6 == "true" && !s[$3]++ {n++} END {print n + 0}' "$tmp/workloads.tsv")
  [ "$uns" -ge "$jobs" ] && [ "$fin" -ge "$jobs" ] && break
  el=$(awk -v a="$t0" -v b="$t" 'BEGIN {printf "%d", b - a}')
  [ "$uns $fin" = "$progress" ] || { progress="$uns $fin"; t_progress=$t; }
  if [ "$(awk -v a="$t_progress" -v b="$t" 'BEGIN {printf "%d", b - a}')" -ge "$stall" ]; then
    log "stalled: nothing unsuspended or finished for $stall s ($uns Jobs unsuspended, $fin Workloads finished)"
    rc=1; break
  fi
  if ! kill -0 "$ctl_pid" 2>/dev/null; then
    log "the controller exited early; its log:"; tail -n 20 "$tmp/controller.log" >&2; rc=1; break
  fi
  if [ "$el" -ge "$timeout" ]; then
    log "timeout after $timeout s: $uns Jobs unsuspended, $fin Workloads finished"; rc=1; break
  fi
  if [ $((el / 10)) -gt "$last_report" ]; then
    last_report=$((el / 10))
    log "${el} s: $uns of $jobs Jobs unsuspended, $fin Workloads finished, controller VmRSS $((r / 1024)) MiB"
  fi
  sleep 0.5
done
[ "$rc" = 0 ] && sleep "$settle"

ctl_hwm=$(proc_kib "$ctl_pid" VmHWM)
r=$(proc_kib "$ctl_pid" VmRSS)
[ -n "$r" ] && [ "$r" -gt "$max_rss" ] && max_rss=$r
ctl_cpu=$(proc_cpu_s "$ctl_pid")
ctl_rc=0
if kill -0 "$ctl_pid" 2>/dev/null; then
  kill -TERM "$ctl_pid"
  for _ in $(seq 1 150); do kill -0 "$ctl_pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$ctl_pid" 2>/dev/null && { log "the controller did not stop within 15 s of SIGTERM"; kill -KILL "$ctl_pid"; rc=1; }
fi
wait "$ctl_pid" || ctl_rc=$?
ctl_pid=""
[ "$ctl_rc" = 0 ] || { log "the controller exited with $ctl_rc"; rc=1; }
sleep 0.2   # the stamping reader drains the controller's last lines
l1=$(wc -l <"$tmp/cluster.log")
cl_hwm=$(proc_kib "$cl_pid" VmHWM)
cl_rss=$(proc_kib "$cl_pid" VmRSS)
cl_cpu=$(proc_cpu_s "$cl_pid")
stop_pid "$cl_pid"; cl_pid=""
stop_pid "$wj_pid"; wj_pid=""
stop_pid "$ww_pid"; ww_pid=""

# ---------------------------------------------------------------- figures
# The controller's requests, from the cluster's log: "METHOD PATH?QUERY ->
# CODE", per method and resource (namespace and name left out).
sed -n "$((l0 + 1)),${l1}p" "$tmp/cluster.log" |
  grep -E '^cueue cluster: [A-Z]+ /[^ ]* -> [0-9]+' | grep -v 'fieldManager=cueue-bench' >"$tmp/controller-requests.log" || true
awk '{
  m = $3; p = $4; sub(/\?.*/, "", p); code = $6
  n = split(p, s, "/"); i = (s[2] == "api") ? 4 : 5
  if (s[i] == "namespaces" && n > i + 1) i += 2
  res = s[i]; if (n > i + 1) res = res "/" s[i + 2]
  if (res == "") res = p   # discovery: /api, /apis, /apis/GROUP/VERSION
  w = ($0 ~ /\(watch\)$/) ? " (watch)" : ""
  k = m " " res w; c[k]++
  if (code !~ /^2/) bad[m " " res " -> " code]++
} END {
  for (k in c) printf "%d\t%s\n", c[k], k > (out "/requests-by-kind.tsv")
  for (k in bad) printf "%d\t%s\n", bad[k], k > (out "/requests-failed.tsv")
}' out="$tmp" "$tmp/controller-requests.log"
touch "$tmp/requests-by-kind.tsv" "$tmp/requests-failed.tsv"
sort -k1,1nr -o "$tmp/requests-by-kind.tsv" "$tmp/requests-by-kind.tsv"
sort -k1,1nr -o "$tmp/requests-failed.tsv" "$tmp/requests-failed.tsv"
nreq=$(wc -l <"$tmp/controller-requests.log")
nwrites=$(awk '$3 != "GET"' "$tmp/controller-requests.log" | wc -l)
nnon2xx=$(awk '$6 !~ /^2/' "$tmp/controller-requests.log" | wc -l)

# The controller's own counts, if it logs them at shutdown.
ctl_req=$(grep -o 'requests=[0-9]*' "$tmp/controller.log" | tail -n 1 | cut -d= -f2 || true)
ctl_adm=$(grep -o 'admissions=[0-9]*' "$tmp/controller.log" | tail -n 1 | cut -d= -f2 || true)
[ -n "$ctl_adm" ] || ctl_adm=$(sed -n 's/.*stopping (\([0-9]*\) admissions).*/\1/p' "$tmp/controller.log" | tail -n 1)
adm_lines=$(grep -c 'admitted Workload' "$tmp/controller.log" || true)
# Its closing summary, if it logs one ("stopped: admissions=... cycles=...").
ctl_summary=$(grep -o 'stopped: [^"]*' "$tmp/controller.log" | tail -n 1 || true)
ctl_cycles=$(echo "$ctl_summary" | grep -o 'cycles=[0-9]*' | cut -d= -f2 || true)

# Per Job: created (ADDED), Workload created, Workload admitted, Job
# unsuspended, Job succeeded.
awk -F'\t' -v wl="$tmp/workloads.tsv" -v out="$tmp" '
  BEGIN {
    while ((getline l < wl) > 0) {
      split(l, f, "\t"); j = f[4]
      if (!(j in wadd)) wadd[j] = f[1]
      if (f[5] == "true" && !(j in wadm)) wadm[j] = f[1]
      if (f[6] == "true" && !(j in wfin)) wfin[j] = f[1]
      if (f[2] == "ERROR") werr++
    }
  }
  $2 == "ERROR" { jerr++; next }
  $2 == "ADDED" && !($3 in add) { add[$3] = $1; order[++n] = $3 }
  $4 == "false" && !($3 in uns) { uns[$3] = $1 }
  $5 + 0 >= 1 && !($3 in done) { done[$3] = $1; if (first_done == "" || $1 < first_done) first_done = $1 }
  END {
    first_add = ""; last_uns = ""; last_fin = ""
    for (i = 1; i <= n; i++) {
      k = order[i]
      if (first_add == "" || add[k] < first_add) first_add = add[k]
      if (k in uns) {
        print uns[k] - add[k] > (out "/lat-all")
        if (first_done == "" || uns[k] < first_done) { print uns[k] - add[k] > (out "/lat-wave1") }
        if (last_uns == "" || uns[k] > last_uns) last_uns = uns[k]
      }
      if ((k in wadd)) print wadd[k] - add[k] > (out "/lat-wlcreate")
      if ((k in wadd) && (k in wadm)) print wadm[k] - wadd[k] > (out "/lat-admit")
      if ((k in wadm) && (k in uns)) print uns[k] - wadm[k] > (out "/lat-unsuspend")
      if ((k in wfin) && (last_fin == "" || wfin[k] > last_fin)) last_fin = wfin[k]
    }
    printf "first_add=%s\nlast_uns=%s\nlast_fin=%s\nfirst_done=%s\nnjobs=%d\nwatch_errors=%d\n",
      first_add, last_uns, last_fin, first_done, n, jerr + werr > (out "/times")
  }' "$tmp/jobs.tsv"
for f in lat-all lat-wave1 lat-wlcreate lat-admit lat-unsuspend; do touch "$tmp/$f"; done
first_add=$(sed -n 's/^first_add=//p' "$tmp/times")
last_uns=$(sed -n 's/^last_uns=//p' "$tmp/times")
last_fin=$(sed -n 's/^last_fin=//p' "$tmp/times")
watch_errors=$(sed -n 's/^watch_errors=//p' "$tmp/times")

# pct FILE: "n p50 p99 max" of the numbers in FILE (nearest rank), in s.
pct() {
  sort -g "$1" | awk '{v[NR] = $1} END {
    if (NR == 0) { print "0 - - -"; exit }
    i50 = int(NR * 0.50); if (i50 < NR * 0.50) i50++; if (i50 < 1) i50 = 1
    i99 = int(NR * 0.99); if (i99 < NR * 0.99) i99++; if (i99 < 1) i99 = 1
    printf "%d %.3f %.3f %.3f\n", NR, v[i50], v[i99], v[NR] }'
}
read -r n_all p50_all p99_all max_all <<<"$(pct "$tmp/lat-all")"
read -r n_w1 p50_w1 p99_w1 max_w1 <<<"$(pct "$tmp/lat-wave1")"
read -r _ p50_wc p99_wc max_wc <<<"$(pct "$tmp/lat-wlcreate")"
read -r _ p50_ad p99_ad max_ad <<<"$(pct "$tmp/lat-admit")"
read -r _ p50_us p99_us max_us <<<"$(pct "$tmp/lat-unsuspend")"

fsub() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "-"; else printf "%.2f", b - a }'; }
wall_uns=$(fsub "$first_add" "$last_uns")
wall_fin=$(fsub "$first_add" "$last_fin")
create_s=$(fsub "$t0" "$t1")
# Admissions: the Workloads seen admitted by the benchmark's watch (one per
# Job); the controller's own count can be higher when it re-admits after a
# failed write.
adm=$(awk -F'\t' '$5 == "true" && !s[$3]++ {n++} END {print n + 0}' "$tmp/workloads.tsv")
rate=$(awk -v n="$n_all" -v w="$wall_uns" 'BEGIN { if (w == "-" || w <= 0) print "-"; else printf "%.1f", n / w }')
rpa=$(awk -v r="$nreq" -v a="$adm" 'BEGIN { if (a <= 0) print "-"; else printf "%.2f", r / a }')
wpa=$(awk -v r="$nwrites" -v a="$adm" 'BEGIN { if (a <= 0) print "-"; else printf "%.2f", r / a }')
mib() { awk -v k="${1:-}" 'BEGIN { if (k == "") print "-"; else printf "%.1f", k / 1024 }'; }

# Gaps between consecutive admission log lines: a long gap while Jobs are
# pending shows a slow cycle (the log has no cycle times of its own).
gaps=$(grep 'admitted Workload' "$tmp/controller.log" | awk '{print $1}' |
  awk 'NR > 1 {d = $1 - p; if (d > m) m = d; if (d > 0.2) big++} {p = $1} END {printf "%.3f %d", m, big + 0}')
read -r max_gap big_gaps <<<"$gaps"

echo "bench_controller.sh: $jobs Jobs over $cqs ClusterQueues ($cohorts cohorts, $nss namespaces, fit $fit%), $nnodes nodes; $cueue"
printf '  %-46s %s\n' "figure" "value"
printf '  %-46s %s / %s / %s s  (%d Jobs)\n' "creation -> unsuspend p50 / p99 / max" "$p50_all" "$p99_all" "$max_all" "$n_all"
printf '  %-46s %s / %s / %s s  (%d Jobs)\n' "  unsuspended before any Job finished" "$p50_w1" "$p99_w1" "$max_w1" "$n_w1"
printf '  %-46s %s / %s / %s s\n' "  Job created -> Workload created" "$p50_wc" "$p99_wc" "$max_wc"
printf '  %-46s %s / %s / %s s\n' "  Workload created -> admitted" "$p50_ad" "$p99_ad" "$max_ad"
printf '  %-46s %s / %s / %s s\n' "  Workload admitted -> Job unsuspended" "$p50_us" "$p99_us" "$max_us"
printf '  %-46s %s  (%d requests, %d writes, %d non-2xx; %s Workloads admitted, %s by the controller'"'"'s count)\n' \
  "API requests per admission (cluster log)" "$rpa" "$nreq" "$nwrites" "$nnon2xx" "$adm" "${ctl_adm:--}"
printf '  %-46s %s\n' "  writes per admission" "$wpa"
if [ -n "$ctl_req" ]; then
  printf '  %-46s %s  (requests=%s in its log)\n' "  as the controller counts them" \
    "$(awk -v r="$ctl_req" -v a="$adm" 'BEGIN { printf "%.2f", r / a }')" "$ctl_req"
fi
printf '  %-46s %s MiB  (max VmRSS sampled %s MiB)\n' "controller peak RSS (VmHWM)" "$(mib "$ctl_hwm")" "$(mib "$max_rss")"
printf '  %-46s %s s  (to all Workloads Finished: %s s)\n' "wall time, first create -> last unsuspend" "$wall_uns" "$wall_fin"
printf '  %-46s %s\n' "admissions/s over that time" "$rate"
printf '  %-46s %s s  (cluster: %s s)\n' "controller CPU over its life" "${ctl_cpu:--}" "${cl_cpu:--}"
printf '  %-46s %s MiB  (VmRSS at the end %s MiB)\n' "cluster peak RSS (VmHWM)" "$(mib "$cl_hwm")" "$(mib "$cl_rss")"
printf '  %-46s %s s for %d Jobs; controller synced in %s s\n' "creating the Jobs (curl, 8 in parallel)" "$create_s" "$jobs" "$(fsub "$t_ctl" "$t_sync")"
printf '  %-46s %s admission lines, largest gap %s s, %s gaps > 0.2 s; exit %s\n' "controller log" \
  "$adm_lines" "${max_gap:--}" "${big_gaps:-0}" "$ctl_rc"
if [ -n "$ctl_cycles" ] && [ "$ctl_cycles" -gt 0 ] && [ -n "$ctl_cpu" ]; then
  printf '  %-46s %s cycles, %s ms of controller CPU per cycle on average\n' "controller cycles" "$ctl_cycles" \
    "$(awk -v c="$ctl_cpu" -v n="$ctl_cycles" 'BEGIN {printf "%.1f", c * 1000 / n}')"
fi
[ -z "$ctl_summary" ] || echo "  controller summary: $ctl_summary"
echo "  controller requests by method and resource:"
awk -F'\t' '{printf "    %7d  %s\n", $1, $2}' "$tmp/requests-by-kind.tsv"
if [ -s "$tmp/requests-failed.tsv" ]; then
  echo "  of which not 2xx:"
  awk -F'\t' '{printf "    %7d  %s\n", $1, $2}' "$tmp/requests-failed.tsv"
fi
[ "${watch_errors:-0}" = 0 ] || echo "  the benchmark's watches got $watch_errors ERROR events: figures may be incomplete"

if [ "$json" = 1 ]; then
  jn() { [ "$1" = "-" ] || [ -z "$1" ] && echo null || echo "$1"; }
  tsv_obj() { jq -R -s -c 'split("\n") | map(select(length > 0) | split("\t") | {(.[1]): (.[0] | tonumber)}) | add // {}' "$1"; }
  bykind=$(tsv_obj "$tmp/requests-by-kind.tsv")
  failed=$(tsv_obj "$tmp/requests-failed.tsv")
  jq -n -c \
    --argjson jobs "$jobs" --argjson cqs "$cqs" --argjson cohorts "$cohorts" --argjson namespaces "$nss" \
    --argjson fit "$fit" --argjson nodes "$nnodes" \
    --argjson n "$n_all" --argjson p50 "$(jn "$p50_all")" --argjson p99 "$(jn "$p99_all")" --argjson max "$(jn "$max_all")" \
    --argjson w1n "$n_w1" --argjson w1p50 "$(jn "$p50_w1")" --argjson w1p99 "$(jn "$p99_w1")" \
    --argjson wcp50 "$(jn "$p50_wc")" --argjson wcp99 "$(jn "$p99_wc")" \
    --argjson adp50 "$(jn "$p50_ad")" --argjson adp99 "$(jn "$p99_ad")" \
    --argjson usp50 "$(jn "$p50_us")" --argjson usp99 "$(jn "$p99_us")" \
    --argjson req "$nreq" --argjson writes "$nwrites" --argjson non2xx "$nnon2xx" --argjson adm "$adm" \
    --argjson rpa "$(jn "$rpa")" --argjson ctlreq "$(jn "${ctl_req:-}")" --argjson ctladm "$(jn "${ctl_adm:-}")" \
    --argjson bykind "$bykind" --argjson failed "$failed" \
    --argjson hwm "$(jn "${ctl_hwm:-}")" --argjson maxrss "$max_rss" \
    --argjson wall "$(jn "$wall_uns")" --argjson wallfin "$(jn "$wall_fin")" --argjson rate "$(jn "$rate")" \
    --argjson ctlcpu "$(jn "${ctl_cpu:-}")" --argjson cycles "$(jn "${ctl_cycles:-}")" --argjson clcpu "$(jn "${cl_cpu:-}")" \
    --argjson clhwm "$(jn "${cl_hwm:-}")" --argjson ok "$([ "$rc" = 0 ] && echo true || echo false)" \
    '{jobs: $jobs, cqs: $cqs, cohorts: $cohorts, namespaces: $namespaces, fit_pct: $fit, nodes: $nodes,
      unsuspended: $n, create_to_unsuspend_s: {p50: $p50, p99: $p99, max: $max},
      before_first_finish: {jobs: $w1n, p50: $w1p50, p99: $w1p99},
      job_to_workload_s: {p50: $wcp50, p99: $wcp99}, workload_to_admitted_s: {p50: $adp50, p99: $adp99},
      admitted_to_unsuspend_s: {p50: $usp50, p99: $usp99},
      controller_requests: $req, controller_writes: $writes, controller_non2xx: $non2xx, admissions: $adm,
      requests_per_admission: $rpa, controller_counted_requests: $ctlreq, controller_counted_admissions: $ctladm,
      requests_by_kind: $bykind, requests_failed: $failed,
      controller_vmhwm_kib: $hwm, controller_max_vmrss_kib: $maxrss,
      wall_to_last_unsuspend_s: $wall, wall_to_all_finished_s: $wallfin, admissions_per_s: $rate,
      controller_cpu_s: $ctlcpu, controller_cycles: $cycles, cluster_cpu_s: $clcpu, cluster_vmhwm_kib: $clhwm, ok: $ok}'
fi
exit "$rc"
