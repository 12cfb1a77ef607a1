#!/usr/bin/env bash
# vs-kueue.sh - Kueue's own scheduler performance test, run on Kueue and on
# Cueue in one go, on the same machine, load and client settings.
#
#   bench/vs-kueue.sh [--config baseline|large-scale|small|FILE]
#                     [--qps N --burst N] [--timeout D] [--out DIR]
#                     [--only kueue|cueue] [--profile] [--no-plots] [--json]
#
# Kueue's runner (test/performance/scheduler/runner, built by
# bench/kueue/build.sh) starts an envtest control plane (e2e/k8s/cluster.sh's
# kube-apiserver and etcd), generates the load of a generator config,
# plays the workloads' execution and records every transition. It runs
# twice, each time on a fresh control plane: once with Kueue's minimalkueue
# as the controller under test, once with Cueue (bench/kueue/
# cueue-perf-controller). bench/kueue/report.py then reads the runner's
# summary, CSVs and stats and the API server's audit log, and prints one
# table, Kueue beside Cueue; with --json one line instead.
#
#   --config C    baseline (Kueue's, from its module: 30 ClusterQueues,
#                 15,000 workloads), large-scale (bench/kueue/configs/:
#                 1,000 ClusterQueues, 50,000 workloads), small (60
#                 workloads, for CI) or a generator config FILE
#   --qps N --burst N
#                 the controllers' client limits. Default: minimalkueue's
#                 own, 50 and 100 (Kueue's Makefile passes none). When
#                 either is given (even 50 and 100), Kueue runs as its
#                 full manager (bench/kueue/kueue-perf-manager), the one
#                 Kueue binary whose limits are configurable, and the
#                 runner scrapes no metrics from it (it serves HTTPS
#                 only); --burst defaults to twice --qps; --qps 0 lifts
#                 the limit for both. The runner's own clients keep
#                 envtest's.
#   --timeout D   the runner's recording limit (default: 15m baseline,
#                 35m large-scale, 3m small, 30m a FILE)
#   --out DIR     keep everything there (default: a fresh folder under
#                 /tmp, printed at the end)
#   --only SIDE   run one controller only
#   --profile     profile the controllers: Kueue's runner takes a Go CPU
#                 profile, Cueue runs under `perf record`
#   --no-plots    skip the PNG plots (they need gnuplot)
#   --json        print one JSON line: {"config":..,"kueue":{..},"cueue":{..}}
#
# Exit status: 0 when every run completed, 1 when one failed (its log tail
# is printed), 2 on a bad command line.
set -u
# one compound command, read before it runs: an edit of this file during a
# long run cannot derail it
{
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K="$ROOT/bench/kueue"
CONFIG=baseline QPS= BURST= TIMEOUT= OUT= SIDES="kueue cueue" PROFILE=0 PLOTS=1 JSON=0

usage() { sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() { echo "vs-kueue.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --config) CONFIG=${2:-}; shift 2 ;;
    --qps) QPS=${2:-}; shift 2 ;;
    --burst) BURST=${2:-}; shift 2 ;;
    --timeout) TIMEOUT=${2:-}; shift 2 ;;
    --out) OUT=${2:-}; shift 2 ;;
    --only) SIDES=${2:-}; shift 2 ;;
    --profile) PROFILE=1; shift ;;
    --no-plots) PLOTS=0; shift ;;
    --json) JSON=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
    esac
done
case $SIDES in kueue | cueue | "kueue cueue") ;; *) die "--only takes kueue or cueue" ;; esac
if [ -n "$QPS$BURST" ]; then
    [[ $QPS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--qps takes a number (0 lifts the limit), got '$QPS'"
    [ -z "$BURST" ] && BURST=$(awk -v q="$QPS" 'BEGIN { b = int(q * 2); print b < 1 ? 1 : b }')
    [[ $BURST =~ ^[1-9][0-9]*$ ]] || die "--burst takes a positive integer, got '$BURST'"
fi

# Debian's python3 (python3-yaml, scripts/install-deps.sh), not another on PATH
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
log() { [ "$JSON" = 1 ] && echo "$*" >&2 || echo "$*"; }
if [ "$JSON" = 1 ]; then exec 3>&1 1>&2; else exec 3>&1; fi

# the binaries: the control plane's, Kueue's and ours
"$ROOT/e2e/k8s/cluster.sh" build >/dev/null || die "building the control plane failed (e2e/k8s/cluster.sh build)"
"$K/build.sh" build >/dev/null || die "building Kueue failed (bench/kueue/build.sh build)"
KBIN=$("$K/build.sh" bin)
KSRC=$("$K/build.sh" src) || exit 2
CBIN=$("$ROOT/e2e/k8s/cluster.sh" bin)
CUEUE_BIN=${CUEUE_BIN:-$ROOT/build/cueue}
[ -x "$CUEUE_BIN" ] || die "no cueue binary at $CUEUE_BIN (build it, or set CUEUE_BIN)"
export CUEUE_BIN

case $CONFIG in
baseline) CFG="$KSRC/test/performance/scheduler/configs/baseline/generator.yaml"; T=15m ;;
large-scale) CFG="$K/configs/large-scale.yaml"; T=35m ;;
small) CFG="$K/configs/small.yaml"; T=3m ;;
*) CFG=$CONFIG; T=30m ;;
esac
[ -f "$CFG" ] || die "no generator config at $CFG"
TIMEOUT=${TIMEOUT:-$T}
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/vs-kueue.XXXXXX)
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
cp "$CFG" "$OUT/generator.yaml"

# every API request, one line each, with its client's user agent
cat >"$OUT/audit-policy.yaml" <<'POL'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
POL

# peak_rss NAME FILE: the peak RSS (VmHWM, KiB) of the newest process
# called NAME, sampled until the runner ends. The runner's own figure
# (ru_maxrss) is not the controller's alone: Go starts it with vfork, and
# Linux carries the runner's peak across the exec into the child's.
peak_rss() {
    local p v=0 x
    while kill -0 "$RUNNER_PID" 2>/dev/null; do
        p=$(pgrep -x -n "$1")
        if [ -n "$p" ]; then
            x=$(awk '/^VmHWM:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
            [ -n "$x" ] && [ "$x" -gt "$v" ] && { v=$x; echo "$v" >"$2"; }
        fi
        sleep 0.5
    done
}

failed=0
run_side() { # run_side NAME
    local side=$1 dir="$OUT/$1" ctl proc args rc t0
    rm -rf "$dir"
    mkdir -p "$dir/assets"
    # envtest takes kube-apiserver and etcd from KUBEBUILDER_ASSETS: ours,
    # the apiserver wrapped to write the audit log
    ln -s "$CBIN/etcd" "$dir/assets/etcd"
    cat >"$dir/assets/kube-apiserver" <<WRAP
#!/bin/sh
exec "$CBIN/kube-apiserver" --audit-policy-file="$OUT/audit-policy.yaml" \\
    --audit-log-path="$dir/audit.log" --audit-log-format=json --audit-log-mode=batch \\
    --audit-log-maxsize=0 --audit-log-maxbackup=0 "\$@"
WRAP
    chmod +x "$dir/assets/kube-apiserver"
    args=(-o "$dir" -crds "$KSRC/config/components/crd/bases" -generatorConfig "$CFG"
        -timeout "$TIMEOUT" -withLogs=true -logToFile=true)
    if [ "$side" = kueue ]; then
        if [ -n "$QPS" ]; then
            # no metrics scraping: the manager serves its metrics over
            # HTTPS only (the runner scrapes plain HTTP), and it listens
            # only seconds after its start, while a refused scrape (the
            # first comes 1 s in) aborts the run
            ctl="$K/kueue-perf-manager" proc=kueue
            export KUEUE_BIN="$KBIN/kueue" KUEUE_PERF_QPS=$QPS KUEUE_PERF_BURST=$BURST
        else
            ctl="$KBIN/minimalkueue" proc=minimalkueue
            args+=(-metricsScrapeInterval 1s)
        fi
        [ "$PROFILE" = 1 ] && args+=(-withCPUProfile=true)
    else
        ctl="$K/cueue-perf-controller" proc=$(basename "$CUEUE_BIN")
        args+=(-metricsScrapeInterval 1s)
        export CUEUE_PERF_QPS=${QPS:-50} CUEUE_PERF_BURST=${BURST:-100}
        [ "$PROFILE" = 1 ] && export CUEUE_PERF_PROFILE="$dir/perf.data"
    fi
    log "== $side: $(basename "$ctl") under Kueue's runner, config $CONFIG (log: $dir/runner.log)"
    t0=$SECONDS
    # the runner needs Kueue's source tree (PROJECT_DIR names its Makefile)
    PROJECT_DIR="$KSRC/Makefile" KUBEBUILDER_ASSETS="$dir/assets" \
        "$KBIN/runner" "${args[@]}" -minimalKueue "$ctl" >"$dir/runner.log" 2>&1 &
    RUNNER_PID=$!
    peak_rss "$proc" "$dir/peak_rss_kib" &
    wait "$RUNNER_PID"
    rc=$?
    wait
    # a runner that died (killed, timed out) leaves envtest's etcd and
    # kube-apiserver behind: both name this run's folder in their flags
    pkill -f -- "$dir/" 2>/dev/null
    unset CUEUE_PERF_PROFILE
    echo "$ctl" >"$dir/controller"
    echo "$proc" >"$dir/agent" # its user agent in the audit log starts so
    if [ $rc -ne 0 ] || [ ! -f "$dir/summary.yaml" ]; then
        log "== $side: the runner failed (exit $rc) after $((SECONDS - t0)) s; its log ends:"
        tail -n 25 "$dir/runner.log" >&2
        for f in "$dir"/*.err.log; do [ -f "$f" ] && { echo "-- $f" >&2; tail -n 15 "$f" >&2; }; done
        failed=1
        return 1
    fi
    log "== $side: done in $((SECONDS - t0)) s"
}

for s in $SIDES; do run_side "$s"; done

rargs=(--config-name "$CONFIG" --generator "$CFG" --out "$OUT")
[ -n "$QPS" ] && rargs+=(--qps "$QPS" --burst "$BURST")
[ "$PLOTS" = 1 ] && rargs+=(--plots)
[ "$JSON" = 1 ] && rargs+=(--json)
for s in $SIDES; do [ -f "$OUT/$s/summary.yaml" ] && rargs+=("$s=$OUT/$s"); done
"$PY" "$K/report.py" "${rargs[@]}" >&3 || failed=1
log "results: $OUT"
exit $failed
}
