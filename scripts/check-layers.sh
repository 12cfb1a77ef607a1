#!/usr/bin/env bash
# Checks that the scheduler's calls run one way: lists every call from one
# scheduler/ source file to a function defined in another (from the symbols
# of the built objects) and fails when a file calls one that is not below it
# in the order below, or includes an internal header of a layer above it.
# Usage: scripts/check-layers.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
objdir=${1:-build}/CMakeFiles/cueue_scheduler.dir/scheduler
# layer:file, lowest first; a file may call files listed before it only
order="
state:cu_tasstate state:cu_engine state:cu_build state:cu_afs state:cu_workloads state:cu_load
drs:cu_drs
preempt:cu_preempt_policy preempt:cu_fairpreempt preempt:cu_preempt
assign:cu_assign
cycle:cu_tournament cycle:cu_cycle
views:cu_views
explain:cu_explain explain:cu_explain_render
"
# internal header of each layer
hdr_state=cu_state_int.h hdr_drs=cu_drs_int.h hdr_preempt=cu_preempt_int.h
hdr_assign=cu_assign_int.h hdr_cycle=cu_cycle_int.h hdr_views=
hdr_explain=cu_explain_int.h
declare -A rank layer lrank
i=0; li=-1; prev=
for e in $order; do
  l=${e%%:*}; f=${e#*:}
  if [ "$l" != "$prev" ]; then li=$((li + 1)); lrank[$l]=$li; prev=$l; fi
  rank[$f]=$i; layer[$f]=$l; i=$((i + 1))
done
status=0
for src in scheduler/cu_*.c; do
  f=$(basename "$src" .c)
  if [ -z "${rank[$f]+x}" ]; then echo "check-layers: $src has no place in the order"; status=1; fi
done
[ -d "$objdir" ] || { echo "check-layers: no objects in $objdir (build first)"; exit 2; }
declare -A def
for o in "$objdir"/cu_*.c.o; do
  f=$(basename "$o" .c.o)
  [ -f "scheduler/$f.c" ] || continue   # a stale object
  for s in $(nm "$o" | awk '$2 ~ /^[TDBR]$/ {print $3}'); do def[$s]=$f; done
done
echo "calls between files (caller -> callee: functions):"
for o in "$objdir"/cu_*.c.o; do
  f=$(basename "$o" .c.o)
  [ -f "scheduler/$f.c" ] || continue
  declare -A to=()
  for s in $(nm "$o" | awk '$1 == "U" {print $2}'); do
    t=${def[$s]:-}
    [ -n "$t" ] && [ "$t" != "$f" ] && to[$t]="${to[$t]:-} $s"
  done
  for t in "${!to[@]}"; do
    mark=ok
    if [ "${rank[$t]}" -ge "${rank[$f]}" ]; then mark="WRONG WAY"; status=1; fi
    echo "  $f -> $t:${to[$t]}  [$mark]"
  done
  unset to
done
for src in scheduler/cu_*.c; do
  f=$(basename "$src" .c); l=${layer[$f]:-}
  [ -n "$l" ] || continue
  for h in $(sed -n 's/^#include "\(cu_[a-z_]*_int\.h\)"/\1/p' "$src"); do
    for hl in "${!lrank[@]}"; do
      v=hdr_$hl
      if [ "${!v}" = "$h" ] && [ "${lrank[$hl]}" -gt "${lrank[$l]}" ]; then
        echo "check-layers: $src ($l) includes $h of layer $hl above it"; status=1
      fi
    done
  done
done
[ $status -eq 0 ] && echo "check-layers: ok, every call runs down the order"
exit $status
