#!/bin/sh
# The differential test's scenario generator and shrinker (bench/kueue/gen.py,
# bench/kueue/shrink.py), without a cluster:
#  - gen.py is reproducible (same seed: identical tree; scenario i does not
#    depend on --count) and seeds differ (another seed: other scenarios);
#  - every scenario of a batch passes `cueue simulate` (exit 0, nothing on
#    stderr), also as `cat config.yaml input.yaml`;
#  - shrink.py, with a fake test that is interesting while one Workload and
#    one ClusterQueue are present, ends with just those and what they need;
#    with a test that asks `cueue simulate` for a preemption, ends with a
#    small case that still preempts.
# Usage: test-gen-shrink.sh CUEUE_BIN
set -eu
CUEUE_BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
export CUEUE_BIN
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cueue-genshrink.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- determinism
$py "$here/gen.py" --seed 5 --count 25 --out "$tmp/a" >/dev/null
$py "$here/gen.py" --seed 5 --count 25 --out "$tmp/b" >/dev/null
diff -r "$tmp/a" "$tmp/b" >/dev/null || fail "gen.py --seed 5 twice gave different files"
$py "$here/gen.py" --seed 5 --count 3 --out "$tmp/c" >/dev/null
for i in 0 1 2; do
  diff -r "$tmp/a/r5-$i" "$tmp/c/r5-$i" >/dev/null || fail "scenario $i depends on --count"
done
$py "$here/gen.py" --seed 6 --count 25 --out "$tmp/d" >/dev/null
[ "$(ls "$tmp/a" | wc -l)" -eq 25 ] || fail "gen.py --count 25 did not write 25 scenarios"
i=0
while [ $i -lt 25 ]; do
  # the first header line names the seed; compare the rest
  tail -n +2 "$tmp/d/r6-$i/input.yaml" >"$tmp/body6"
  tail -n +2 "$tmp/a/r5-$i/input.yaml" | cmp -s - "$tmp/body6" && fail "seeds 5 and 6 gave the same scenario $i"
  i=$((i + 1))
done
echo "ok: gen.py is reproducible and seeds differ"

# --- every scenario is a valid input of cueue simulate
$py "$here/gen.py" --seed 11 --count 40 --out "$tmp/v" --check --stats || fail "gen.py --check"
for d in "$tmp"/v/*/; do
  if [ -f "$d"config.yaml ]; then cat "$d"config.yaml "$d"input.yaml; else cat "$d"input.yaml; fi >"$tmp/cat.yaml"
  "$CUEUE_BIN" simulate -o json "$tmp/cat.yaml" >/dev/null 2>"$tmp/err" || fail "cueue simulate rejects $d"
  [ ! -s "$tmp/err" ] || fail "cueue simulate warns on $d: $(cat "$tmp/err")"
done
echo "ok: 40 generated scenarios pass cueue simulate"

# --- shrink with a fake test: interesting while Workload W and ClusterQueue Q are present
cat >"$tmp/fake.py" <<'EOF'
import sys, yaml
wl, cq, case = sys.argv[1:4]
docs = [d for d in yaml.safe_load_all(open(case + "/input.yaml")) if d]
have = {(d["kind"], d["metadata"]["name"]) for d in docs}
sys.exit(0 if ("Workload", wl) in have and ("ClusterQueue", cq) in have else 1)
EOF
# the case: the first scenario of the batch with >= 5 Workloads and >= 3 ClusterQueues;
# W its last Workload, Q a ClusterQueue other than W's
set -- $($py - "$tmp/v" <<'EOF'
import os, sys, yaml
root = sys.argv[1]
for d in sorted(os.listdir(root)):
    docs = [x for x in yaml.safe_load_all(open(os.path.join(root, d, "input.yaml"))) if x]
    wls = [x for x in docs if x["kind"] == "Workload"]
    cqs = [x["metadata"]["name"] for x in docs if x["kind"] == "ClusterQueue"]
    if len(wls) < 5 or len(cqs) < 3:
        continue
    w = wls[-1]
    lq = [x for x in docs if x["kind"] == "LocalQueue" and x["metadata"]["name"] == w["spec"]["queueName"]
          and x["metadata"]["namespace"] == w["metadata"]["namespace"]][0]
    q = [c for c in cqs if c != lq["spec"]["clusterQueue"]][-1]
    print(os.path.join(root, d), w["metadata"]["name"], q)
    break
EOF
)
[ $# -eq 3 ] || fail "no generated scenario with >= 5 Workloads and >= 3 ClusterQueues"
case=$1 W=$2 Q=$3
out=$($py "$here/shrink.py" --case "$case" --out "$tmp/min" --test "$py $tmp/fake.py $W $Q {}" --max-runs 200) ||
  fail "shrink.py failed"
echo "$out"
echo "$out" | grep -q '^shrink.py: [0-9]* runs .*objects [0-9]* -> [0-9]*' || fail "no summary line"
$py "$tmp/fake.py" "$W" "$Q" "$tmp/min" || fail "the shrunk case is not interesting"
$py - "$tmp/min" "$W" "$Q" <<'EOF' || fail "the shrunk case is not minimal"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1] + "/input.yaml")) if d]
kinds = [d["kind"] for d in docs]
assert kinds.count("Workload") == 1, kinds
assert kinds.count("ClusterQueue") <= 2, kinds
assert kinds.count("LocalQueue") == 1, kinds
assert "Cohort" not in kinds and "WorkloadPriorityClass" not in kinds, kinds
assert kinds.count("ResourceFlavor") <= 2 and len(docs) <= 7, kinds
EOF
"$CUEUE_BIN" simulate -o json "$tmp/min/input.yaml" >/dev/null || fail "cueue simulate rejects the shrunk case"
echo "ok: shrink.py with a fake test keeps $W and $Q and little else"

# --- shrink with a test that asks cueue simulate for a preemption
cat >"$tmp/preempts.sh" <<EOF
#!/bin/sh
cat "\$1"/config.yaml "\$1"/input.yaml 2>/dev/null | "$CUEUE_BIN" simulate -o json /dev/stdin 2>/dev/null |
  $py -c 'import json,sys; r=json.load(sys.stdin); sys.exit(0 if any(w["evictions"] for w in r["workloads"]) else 1)'
EOF
chmod +x "$tmp/preempts.sh"
case=
for d in "$tmp"/v/*/; do
  if "$tmp/preempts.sh" "$d" && [ "$(grep -c '^kind: Workload' "$d/input.yaml")" -ge 4 ]; then case=$d; break; fi
done
[ -n "$case" ] || fail "no generated scenario with a preemption"
out=$($py "$here/shrink.py" --case "$case" --out "$tmp/min2" --test "$tmp/preempts.sh {}" --max-runs 150) ||
  fail "shrink.py failed"
echo "$out"
"$tmp/preempts.sh" "$tmp/min2" || fail "the shrunk case does not preempt"
n=$(grep -c '^kind: ' "$tmp/min2/input.yaml")
[ "$n" -le 9 ] || fail "the shrunk preemption case has $n objects"
echo "ok: shrink.py keeps a preemption in $n objects"

# --- usage
$py "$here/gen.py" -h >"$tmp/help" && grep -q '^Usage: gen.py' "$tmp/help" || fail "gen.py -h"
$py "$here/shrink.py" -h >"$tmp/help" && grep -q '^Usage: shrink.py' "$tmp/help" || fail "shrink.py -h"
rc=0; $py "$here/gen.py" --seed 1 >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "gen.py without --count/--out: exit $rc, want 2"
rc=0; $py "$here/shrink.py" --case "$tmp/min" --out "$tmp/x" --test false >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "shrink.py on an uninteresting case: exit $rc, want 1"
echo "ok: usage and exit codes"
