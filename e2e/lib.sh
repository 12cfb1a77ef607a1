# lib.sh - the shared harness of the e2e scripts that run `cueue cluster` and
# `cueue controller` (sourced, not run). A script does:
#
#   . "$(dirname "$0")/lib.sh"
#   e2e_init "$@" kubectl jq curl     # usage check, SKIP when a tool is missing,
#                                     # $TMP (removed on exit), $CUEUE, $ROOT
#   start_cluster                     # $KC, $API, $CL_PID; log $TMP/cluster.log
#   apply_crds; quota_setup cq:lq:4   # a flavor, ClusterQueues, LocalQueues
#   start_controller ctrl -v 1        # $CT_PID; log $TMP/ctrl.log
#   wait_for 15 "desc" COMMAND...     # PASS or FAIL line
#   e2e_finish                        # dump() on failure, the exit code
#
# Every process started here (and any other background job of the script)
# is stopped on exit: SIGCONT (in case it was paused), SIGTERM, then SIGKILL
# after 5 s; each by its own pid, never by name. $TMP is removed then, unless
# E2E_KEEP is set (for a post-mortem: logs, recordings).
#
# The cluster: CUEUE_E2E_CLUSTER=embedded (the default: `cueue cluster`) or
# k8s (the real control plane of e2e/k8s/cluster.sh: kube-apiserver, etcd,
# the Job controller, kube-scheduler and KWOK; a script run on it without
# the binaries built skips with exit 77). A check that needs the embedded
# cluster alone (its fault injection, its flags) is guarded by
# `embedded_only DESC` and says so in a SKIP line on the real one.
#
# Other projects' controllers (e2e/k8s/addons.sh: jobset, ...) that a
# script needs on the real control plane: E2E_ADDONS="NAME..." set before
# e2e_init; the script skips (77) when one is not built, and start_k8s
# starts them once the cluster is up. The embedded cluster runs none.
#
# Needs bash 4; the tools the script names in e2e_init (timeout is always
# checked).

# e2e_init "$@" TOOL...: $1 must be the cueue binary; the other arguments are
# the tools the script needs (a missing one skips the whole script, exit 0).
e2e_init() {
    if [ $# -lt 1 ] || [ ! -x "$1" ]; then
        echo "usage: $0 PATH_TO_cueue" >&2
        exit 2
    fi
    CUEUE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
    ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    shift
    local tool
    for tool in timeout "$@"; do
        command -v "$tool" >/dev/null 2>&1 || { echo "SKIP  all: $tool is not installed"; exit 0; }
    done
    E2E_CLUSTER=${CUEUE_E2E_CLUSTER:-embedded}
    # the real binaries' cache and Go's module cache (the addons' sources),
    # named before HOME moves into $TMP
    export CUEUE_K8S_CACHE=${CUEUE_K8S_CACHE:-$HOME/.cache/cueue-k8s}
    if command -v go >/dev/null 2>&1; then
        export GOMODCACHE=${GOMODCACHE:-$(go env GOMODCACHE)}
    fi
    case $E2E_CLUSTER in
    embedded) ;;
    k8s)
        "$ROOT/e2e/k8s/cluster.sh" built \
            || { echo "SKIP  all: the real control plane is not built (e2e/k8s/cluster.sh build)"; exit 77; }
        for tool in ${E2E_ADDONS:-}; do
            "$ROOT/e2e/k8s/addons.sh" built "$tool" \
                || { echo "SKIP  all: the $tool addon is not built (e2e/k8s/addons.sh build $tool)"; exit 77; }
        done
        E2E_PREFIX="${E2E_PREFIX:-}[k8s] " ;;
    *) echo "CUEUE_E2E_CLUSTER must be embedded or k8s, not $E2E_CLUSTER" >&2; exit 2 ;;
    esac
    TMP=$(mktemp -d)
    export HOME=$TMP/home
    mkdir -p "$HOME"
    KC=$TMP/kc
    API=""
    CL_PID="" CT_PID=""
    FAILS=0 PASSES=0
    trap e2e_cleanup EXIT
    trap 'exit 130' INT     # so that the EXIT trap cleans up
    trap 'exit 143' TERM
}

# stop_pid PID [SIGNAL]: signals (default TERM) one child and waits for it,
# SIGKILL after 5 s. Returns the child's exit status.
stop_pid() {
    local p=$1 sig=${2:-TERM} i
    [ -n "$p" ] || return 0
    kill -CONT "$p" 2>/dev/null
    kill "-$sig" "$p" 2>/dev/null || { wait "$p" 2>/dev/null; return $?; }
    for i in $(seq 1 50); do
        kill -0 "$p" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
}

e2e_cleanup() {
    local pids=() p i
    # newest first: controllers stop before the cluster they talk to
    for p in $(jobs -p); do pids=("$p" "${pids[@]}"); done
    for p in "${pids[@]}"; do stop_pid "$p"; done
    [ "${E2E_CLUSTER:-}" = k8s ] && [ -n "${TMP:-}" ] && "$ROOT/e2e/k8s/cluster.sh" down "$TMP/k8s"
    if [ -n "${E2E_KEEP:-}" ]; then
        echo "(kept $TMP)"
    elif [ -n "${TMP:-}" ]; then
        rm -rf "$TMP"
    fi
}

# PASS and FAIL lines; $E2E_PREFIX (e.g. "b: ") is put before each.
pass() { echo "PASS  ${E2E_PREFIX:-}$1"; PASSES=$((PASSES + 1)); }
fail() { echo "FAIL  ${E2E_PREFIX:-}$1: $2"; FAILS=$((FAILS + 1)); }

# check DESC DETAIL COMMAND...: PASS when COMMAND succeeds, else FAIL with DETAIL.
check() {
    local desc=$1 detail=$2; shift 2
    if "$@"; then pass "$desc"; else fail "$desc" "$detail"; fi
}

# e2e_finish: on failure calls the script's dump() (when it defines one);
# exits 1 when a check failed, 0 otherwise.
e2e_finish() {
    echo "$PASSES passed, $FAILS failed"
    if [ "$FAILS" -ne 0 ]; then
        if declare -F dump >/dev/null; then
            dump
        else
            # no dump of its own: the logs' last lines, for a post-mortem
            # of a failure seen only in CI
            local l
            for l in "$TMP"/*.log; do [ -e "$l" ] && show "$l" "${l##*/}" 30; done
        fi
        echo "$FAILS check(s) failed"
        exit 1
    fi
    echo "all checks passed"
    exit 0
}

# show FILE TITLE [LINES]: the last lines of FILE, indented (for dump()).
show() {
    echo "---- $2"
    if [ -e "$1" ]; then sed 's/^/  | /' "$1" | tail -n "${3:-40}"; else echo "  | (no $1)"; fi
}

k() { kubectl --kubeconfig "$KC" --request-timeout=15s "$@"; }

# wait_for SECONDS DESC COMMAND...: polls until COMMAND succeeds (PASS), or
# FAIL after SECONDS. Returns COMMAND's last status.
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

# poll SECONDS COMMAND...: like wait_for without a PASS or FAIL line.
poll() {
    local secs=$1; shift
    local end=$((SECONDS + secs))
    while [ $SECONDS -lt $end ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}

# start_cluster [ARGS...]: starts `cueue cluster` (listening on $CL_LISTEN,
# default 127.0.0.1:0, kubeconfig $KC, log appended to $CL_LOG, default
# $TMP/cluster.log)
# and waits up to $CL_START_S (default 20) s for its kubeconfig. Sets
# CL_PID, API (the server URL) and CL_LISTEN to the address it serves on,
# so that a second start_cluster after stop_cluster reuses the address.
# Exits the script when the cluster does not start.
start_cluster() {
    [ "$E2E_CLUSTER" = k8s ] && { start_k8s; return; }
    rm -f "$KC"
    "$CUEUE" cluster --listen "${CL_LISTEN:-127.0.0.1:0}" --kubeconfig-out "$KC" "$@" \
        2>>"${CL_LOG:-$TMP/cluster.log}" &
    CL_PID=$!
    local i
    for i in $(seq 1 $((${CL_START_S:-20} * 10))); do
        [ -s "$KC" ] && break
        kill -0 "$CL_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ ! -s "$KC" ]; then
        echo "FAIL  ${E2E_PREFIX:-}cluster did not start"
        cat "${CL_LOG:-$TMP/cluster.log}"
        FAILS=$((FAILS + 1))
        exit 1
    fi
    API=$(sed -n 's/^ *server: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$KC" | head -n 1)
    CL_LISTEN=${API#*://}
}

# start_k8s: start_cluster on the real control plane ($TMP/k8s; logs there).
# The first call brings it up (the nodes of $K8S_NODES, default the embedded
# cluster's built-in set); after stop_cluster, the next one starts the API
# server again over the same etcd, as a restart of the embedded cluster
# with --data-dir keeps its objects; the addons of $E2E_ADDONS are started
# after the first. CL_PID is the API server's pid.
start_k8s() {
    local d=$TMP/k8s
    if [ -s "$d/env" ]; then
        "$ROOT/e2e/k8s/cluster.sh" start "$d" kube-apiserver >>"$TMP/cluster.log" 2>&1
    else
        "$ROOT/e2e/k8s/cluster.sh" up "$d" ${K8S_NODES:+--nodes "$K8S_NODES"} \
            >>"$TMP/cluster.log" 2>&1 &&
            { [ -z "${E2E_ADDONS:-}" ] ||
                "$ROOT/e2e/k8s/addons.sh" up "$d" $E2E_ADDONS >>"$TMP/cluster.log" 2>&1; }
    fi || {
        echo "FAIL  ${E2E_PREFIX:-}cluster did not start"
        cat "$TMP/cluster.log"
        FAILS=$((FAILS + 1))
        exit 1
    }
    cp "$d/kubeconfig" "$KC"
    API=$(sed -n 's/^SERVER=//p' "$d/env")
    CL_PID=$(sed -n 's/^kube-apiserver //p' "$d/pids")
}

# embedded_only DESC: true on the embedded cluster; on the real one prints
# a SKIP line for DESC and is false (`embedded_only "x" && check ...`).
embedded_only() {
    [ "$E2E_CLUSTER" = embedded ] && return 0
    echo "SKIP  ${E2E_PREFIX:-}$1: needs the embedded cluster"
    return 1
}

# stop_cluster: SIGTERM and wait; returns its exit status.
stop_cluster() {
    local rc=0
    if [ "$E2E_CLUSTER" = k8s ]; then
        "$ROOT/e2e/k8s/cluster.sh" stop "$TMP/k8s" kube-apiserver >>"$TMP/cluster.log" 2>&1
        CL_PID=""
        return 0
    fi
    stop_pid "$CL_PID" || rc=$?
    CL_PID=""
    return $rc
}

apply_crds() {
    k apply -f "$ROOT/crds/" >/dev/null \
        || { echo "FAIL  ${E2E_PREFIX:-}apply crds"; FAILS=$((FAILS + 1)); exit 1; }
    # a real API server serves a new CRD a moment after it is created
    [ "$E2E_CLUSTER" = embedded ] || k wait --for condition=established --timeout=60s \
        -f "$ROOT/crds/" >/dev/null \
        || { echo "FAIL  ${E2E_PREFIX:-}crds not established"; FAILS=$((FAILS + 1)); exit 1; }
}

# quota_yaml [--labels '{K: V}'] [--flavor NAME] [--topology T] [--resource R]
#            [--namespace NS] CQ:LQ:QUOTA...:
# one ResourceFlavor (default "general", with the given nodeLabels and
# topologyName), and per argument a ClusterQueue CQ (namespaceSelector {},
# nominalQuota QUOTA of resource R, default cpu, in that flavor, no cohort so
# nothing is borrowed) and a LocalQueue LQ in NS (default "default")
# pointing at it.
quota_yaml() {
    local labels="" flavor=general topology="" res=cpu ns=default a cq lq quota
    while [ $# -gt 0 ]; do
        case "$1" in
            --labels) labels=$2; shift 2;;
            --flavor) flavor=$2; shift 2;;
            --topology) topology=$2; shift 2;;
            --resource) res=$2; shift 2;;
            --namespace) ns=$2; shift 2;;
            *) break;;
        esac
    done
    echo "apiVersion: kueue.x-k8s.io/v1beta2"
    echo "kind: ResourceFlavor"
    echo "metadata: {name: $flavor}"
    [ -n "$labels$topology" ] && echo "spec:"
    [ -n "$labels" ] && echo "  nodeLabels: $labels"
    [ -n "$topology" ] && echo "  topologyName: $topology"
    for a in "$@"; do
        IFS=: read -r cq lq quota <<<"$a"
        cat <<YAML
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [$res]
    flavors:
    - name: $flavor
      resources:
      - {name: $res, nominalQuota: "$quota"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: $lq, namespace: $ns}
spec: {clusterQueue: $cq}
YAML
    done
}

# topology_yaml NAME LEVEL...: a Topology whose levels are the node labels
# LEVEL, highest first.
topology_yaml() {
    local name=$1 l sep=""; shift
    printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: %s}\n' "$name"
    printf 'spec:\n  levels: ['
    for l in "$@"; do printf '%s{nodeLabel: %s}' "$sep" "$l"; sep=", "; done
    printf ']\n'
}

# gpu_node_yaml NAME GPUS LABELS: a Node NAME (for --nodes) with GPUS
# nvidia.com/gpu, 32 cpu and 110 pods allocatable, and the labels LABELS
# ('K: V, ...'), followed by a document separator.
gpu_node_yaml() {
    cat <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $1
  labels: {$3}
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "$2"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "$2"}
---
YAML
}

# fillers_running N: exactly N filler pods (app=filler) run.
fillers_running() {
    [ "$(k get pods -n default -l app=filler --field-selector status.phase=Running -o name | wc -l)" -eq "$1" ]
}

# filler_pods_yaml NODE N: N pods fill-NODE-1..N in namespace default
# (label app=filler), not Kueue's, bound to NODE by nodeName, each asking
# for one nvidia.com/gpu: the GPUs other workloads already hold.
filler_pods_yaml() {
    local i
    for ((i = 1; i <= $2; i++)); do
        cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: fill-$1-$i, namespace: default, labels: {app: filler}}
spec:
  nodeName: $1
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
---
YAML
    done
}

# quota_setup ARGS...: applies quota_yaml ARGS (PASS "quota setup applied";
# exits the script when kubectl fails).
quota_setup() {
    quota_yaml "$@" | k apply -f - >/dev/null \
        || { echo "FAIL  ${E2E_PREFIX:-}apply quota setup"; FAILS=$((FAILS + 1)); exit 1; }
    pass "quota setup applied"
}

# start_controller NAME [ARGS...]: starts `cueue controller --kubeconfig $KC
# ARGS` with its stderr appended to $TMP/NAME.log. Sets CT_PID.
start_controller() {
    local name=$1; shift
    "$CUEUE" controller --kubeconfig "$KC" "$@" 2>>"$TMP/$name.log" &
    CT_PID=$!
}

# metric NAME [LABEL="VALUE"...]: the value of the first sample of NAME in the
# last scrape ($TMP/metrics) that has all these labels (others may be there
# too, such as replica_role), or empty.
metric() {
    local name=$1; shift
    awk -v m="$name" -v want="$*" '
        index($1, m "{") == 1 || $1 == m {
            n = split(want, w, " "); ok = 1
            for (i = 1; i <= n; i++) if (!index($1, "{" w[i]) && !index($1, "," w[i])) ok = 0
            if (ok) { print $2; exit }
        }' "$TMP/metrics"
}
# scrape: GET $METRICS (the controller's /metrics URL) into $TMP/metrics
scrape() { curl -sf --max-time 10 "$METRICS" -o "$TMP/metrics"; }

# metrics_url LOG: the controller's /metrics URL from its log line
# "metrics on ADDR (/metrics)" (plain HTTP), into METRICS
metrics_url() {
    METRICS=http://$(sed -n 's/.*metrics on \([^ ]*\) (\/metrics).*/\1/p' "$1" | head -n 1)/metrics
}

# use_controller LOG: `cueue explain` and `cueue queue` run by the script
# ask the API server of $KC and the controller that logs to LOG (its
# plain-HTTP metrics address serves them), never another suite's on the
# default address: exports KUBECONFIG and CUEUE_CONTROLLER
use_controller() {
    metrics_url "$1"
    export KUBECONFIG=$KC CUEUE_CONTROLLER=${METRICS%/metrics}
}

# check_v1beta1_workload NS LQ: a v1beta1 client creates a Workload in
# LocalQueue LQ (v1beta2 is stored), reads it back in v1beta1 with its
# v1beta1 fields, a v1beta2 reader sees them converted (through the CRD's
# conversion webhook), and a v1beta1 update reaches the stored object
check_v1beta1_workload() {
    local ns=$1 lq=$2 v1 v2
    k create -f - >/dev/null 2>"$TMP/wl1.err" <<YAML
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: old-client, namespace: $ns}
spec:
  queueName: $lq
  priorityClassName: low
  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
  podSets:
  - name: main
    count: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
    check "a v1beta1 client creates a Workload" "$(cat "$TMP/wl1.err")" \
        k get workloads.v1beta1.kueue.x-k8s.io -n "$ns" old-client
    v1=$(k get workloads.v1beta1.kueue.x-k8s.io -n "$ns" old-client -o json 2>"$TMP/v1.err")
    check "... and reads it back in v1beta1 (priorityClassName and Source)" "$(cat "$TMP/v1.err") $v1" \
        jq -e '.apiVersion == "kueue.x-k8s.io/v1beta1" and .spec.priorityClassName == "low" and
               .spec.priorityClassSource == "kueue.x-k8s.io/workloadpriorityclass"' <<<"$v1"
    v2=$(k get workloads.v1beta2.kueue.x-k8s.io -n "$ns" old-client -o json 2>/dev/null)
    check "a v1beta2 reader sees it converted (priorityClassRef)" "$v2" \
        jq -e '.spec.priorityClassRef.name == "low" and
               .spec.priorityClassRef.kind == "WorkloadPriorityClass" and
               (.spec | has("priorityClassName") | not)' <<<"$v2"
    k patch workloads.v1beta1.kueue.x-k8s.io -n "$ns" old-client --type merge \
        -p '{"metadata":{"labels":{"edited":"by-v1beta1"}}}' >/dev/null 2>"$TMP/wl2.err"
    check "a v1beta1 client updates it" "$(cat "$TMP/wl2.err")" \
        test "$(k get workloads.v1beta2.kueue.x-k8s.io -n "$ns" old-client -o jsonpath='{.metadata.labels.edited}')" = by-v1beta1
}

# job_yaml NAME CPU RUNTIME [LQ] [NS]: one suspended batch/v1 Job (one pod of
# CPU cpu) in LocalQueue LQ (default lq) of NS (default default), whose
# simulated pod runs RUNTIME (a Go duration: the cueue.dev/simulated-runtime
# annotation that `cueue cluster`'s simulated kubelet honours).
job_yaml() {
    cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: ${5:-default}
  labels: {kueue.x-k8s.io/queue-name: ${4:-lq}}
spec:
  suspend: true
  parallelism: 1
  completions: 1
  template:
    metadata:
      annotations: {cueue.dev/simulated-runtime: "$3"}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: "$2"}}
YAML
}

# jobs_yaml PREFIX N LQS CPUS RUNTIMES [NS]: N Jobs PREFIX-0..PREFIX-(N-1) as
# one multi-document YAML; job i goes to the i-th (cyclically) of the
# space-separated LocalQueues LQS, with the i-th of CPUS and of RUNTIMES (lists
# of co-prime lengths give varied combinations).
jobs_yaml() {
    local prefix=$1 n=$2 ns=${6:-default} i
    local -a lqs cpus rts
    read -r -a lqs <<<"$3"
    read -r -a cpus <<<"$4"
    read -r -a rts <<<"$5"
    for ((i = 0; i < n; i++)); do
        [ "$i" -gt 0 ] && echo "---"
        job_yaml "$prefix-$i" "${cpus[i % ${#cpus[@]}]}" "${rts[i % ${#rts[@]}]}" \
            "${lqs[i % ${#lqs[@]}]}" "$ns"
    done
}

# create_jobs PREFIX N LQS CPUS RUNTIMES [NS]: writes jobs_yaml to
# $TMP/jobs-PREFIX.yaml and creates them with one `kubectl apply -f`.
create_jobs() {
    local f=$TMP/jobs-$1.yaml
    jobs_yaml "$@" >"$f"
    kubectl --kubeconfig "$KC" --request-timeout=60s apply -f "$f" >/dev/null
}

# njobs_done [NS]: prints "complete failed total" for the Jobs of NS.
njobs_done() {
    k get jobs -n "${1:-default}" -o json | jq -r '[.items[] | .status.conditions // [] |
        [any(.[]; .type == "Complete" and .status == "True"),
         any(.[]; .type == "Failed" and .status == "True")]] |
        "\(map(select(.[0])) | length) \(map(select(.[1])) | length) \(length)"'
}

# all_jobs_complete N [NS]: true when N Jobs of NS exist and all are Complete.
all_jobs_complete() {
    local c f t
    read -r c f t < <(njobs_done "${2:-default}") || return 1
    [ "$t" -eq "$1" ] && [ "$c" -eq "$1" ]
}
