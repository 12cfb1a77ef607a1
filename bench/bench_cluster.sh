#!/usr/bin/env bash
# bench_cluster.sh - starts a fresh `cueue cluster` (memory only, plain HTTP,
# a free port), runs cueue_bench_cluster against it, reads the server's peak
# RSS (VmHWM in /proc/PID/status) and stops it. See bench/README.md.
#
# Usage: bench/bench_cluster.sh [--build DIR] [--kind configmap|workload|both]
#                               [cueue_bench_cluster options...]
#   --build DIR   the build folder holding cueue and cueue_bench_cluster
#                 (default: build next to this script's folder)
#   --kind both   runs configmap, then workload, each on its own server
#   --no-mem-only skips the second server per kind that only receives the
#                 creates (--mem-only) for a clean memory reading
# Every other option goes to cueue_bench_cluster (--objects, --clients,
# --duration, --watchers, --watch-changes, --mem-objects, --payload, --json).
# Exit codes: 0 done, 1 the server or the benchmark failed, 2 bad usage.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build="$root/build"
kinds=(configmap)
pass=()
json=0
mem_only=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) [ $# -ge 2 ] || { echo "bench_cluster.sh: --build needs a folder" >&2; exit 2; }
             build=$2; shift 2 ;;
    --kind)  [ $# -ge 2 ] || { echo "bench_cluster.sh: --kind needs a value" >&2; exit 2; }
             case "$2" in
               configmap|workload) kinds=("$2") ;;
               both) kinds=(configmap workload) ;;
               *) echo "bench_cluster.sh: --kind: '$2' is not configmap, workload or both" >&2; exit 2 ;;
             esac
             shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --json)  json=1; pass+=("$1"); shift ;;
    --no-mem-only) mem_only=0; shift ;;
    --mem-objects) [ $# -ge 2 ] || { echo "bench_cluster.sh: --mem-objects needs a value" >&2; exit 2; }
             [ "$2" = 0 ] && mem_only=0
             pass+=("$1" "$2"); shift 2 ;;
    *)       pass+=("$1"); shift ;;
  esac
done

cueue="$build/cueue"
bench="$build/cueue_bench_cluster"
for b in "$cueue" "$bench"; do
  [ -x "$b" ] || { echo "bench_cluster.sh: $b not found; build the targets cueue and cueue_bench_cluster in $build" >&2; exit 2; }
done

tmp=$(mktemp -d)
pid=""
stop_server() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  pid=""
}
cleanup() { stop_server; rm -rf "$tmp"; }
trap cleanup EXIT

# start_server NAME: starts cueue cluster, sets pid and url.
start_server() {
  local kc="$tmp/kubeconfig-$1"
  "$cueue" cluster --listen 127.0.0.1:0 --kubeconfig-out "$kc" 2>"$tmp/server-$1.log" &
  pid=$!
  for _ in $(seq 1 200); do
    [ -s "$kc" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if [ ! -s "$kc" ]; then
    echo "bench_cluster.sh: cueue cluster did not write $kc; its log:" >&2
    cat "$tmp/server-$1.log" >&2
    exit 1
  fi
  url=$(sed -n 's/^[[:space:]]*server:[[:space:]]*"\{0,1\}\([^"]*\)"\{0,1\}[[:space:]]*$/\1/p' "$kc" | head -n 1)
  if [ -z "$url" ]; then
    echo "bench_cluster.sh: no server URL in $kc" >&2
    exit 1
  fi
  echo "bench_cluster.sh: cueue cluster pid $pid at $url ($1)" >&2
}

# run_one NAME KIND [bench options...]: one fresh server, one benchmark run.
run_one() {
  local name=$1 kind=$2
  shift 2
  start_server "$name"
  local extra=()
  [ "$kind" = workload ] && extra=(--crd "$root/crds/kueue.x-k8s.io_workloads.yaml")
  local brc=0
  "$bench" --server "$url" --pid "$pid" --kind "$kind" ${extra[@]+"${extra[@]}"} "$@" \
    >"$tmp/out-$name" || brc=$?
  local hwm
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  stop_server
  if [ "$json" = 1 ]; then
    # the table, then the JSON line with the server's peak RSS added
    grep -v '^{' "$tmp/out-$name" || true
    local line
    line=$(grep '^{' "$tmp/out-$name" || true)
    [ -n "$line" ] && echo "${line%\}},\"server_vmhwm_kib\":${hwm:-null}}"
  else
    cat "$tmp/out-$name"
  fi
  if [ -n "$hwm" ]; then
    echo "  server peak RSS over the whole run (VmHWM, read by bench_cluster.sh): $(awk -v k="$hwm" 'BEGIN {printf "%.1f MiB", k / 1024}')"
  fi
  if [ "$brc" -ne 0 ]; then
    echo "bench_cluster.sh: cueue_bench_cluster failed ($brc); server log:" >&2
    tail -n 20 "$tmp/server-$name.log" >&2
    rc=1
  fi
}

rc=0
for kind in "${kinds[@]}"; do
  run_one "$kind" "$kind" ${pass[@]+"${pass[@]}"}
  # the memory figure again on a fresh server that only receives creates
  if [ "$mem_only" = 1 ]; then
    run_one "$kind-mem" "$kind" ${pass[@]+"${pass[@]}"} --mem-only
  fi
done
exit $rc
