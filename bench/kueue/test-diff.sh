#!/usr/bin/env bash
# test-diff.sh CUEUE - bench/diff-kueue.sh as CI runs it: a small random
# batch (20 scenarios of bench/kueue/gen.py, seed 1), the
# regression scenarios (bench/kueue/regressions/: each once differed from
# Kueue) and the Topology-Aware Scheduling scenarios of cueue simulate
# (sim/scenarios/3xx-*.yaml made of Jobs and Workloads: their placements
# are compared too) against Kueue's manager, with the cueue binary CUEUE. Fails on any
# difference that bench/kueue/known-differences.txt does not list (each
# one there is explained in docs/kueue-differences.md) and on any scenario
# that could not be run. Exit 77 (skipped) when the control plane or Kueue
# is not built (e2e/k8s/cluster.sh build, bench/kueue/build.sh build).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CUEUE=${1:?usage: test-diff.sh CUEUE-BINARY}
N=${DIFF_KUEUE_N:-20}
SEED=${DIFF_KUEUE_SEED:-1}
"$ROOT/e2e/k8s/cluster.sh" built || { echo "skipped: the control plane is not built"; exit 77; }
"$ROOT/bench/kueue/build.sh" built || { echo "skipped: Kueue is not built"; exit 77; }
OUT=$(mktemp -d /tmp/diff-kueue-test.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# the TAS scenarios, but those with queued Pods: Kueue makes their
# Workloads only behind its pod webhook, which the harness does not run
TAS=()
while IFS= read -r f; do TAS+=(--case "$f"); done < <("$PY" - "$ROOT"/sim/scenarios/3[0-9][0-9]-*.yaml <<'PY'
import sys, yaml
for f in sys.argv[1:]:
    docs = [d for d in yaml.safe_load_all(open(f)) if isinstance(d, dict)]
    docs = [i for d in docs for i in (d.get("items") or [] if d.get("kind") == "List" else [d])]
    if not any(d.get("kind") == "Pod" and "kueue.x-k8s.io/queue-name" in
               ((d.get("metadata") or {}).get("labels") or {}) for d in docs):
        print(f)
PY
)
t0=$SECONDS
CUEUE_BIN=$(cd "$(dirname "$CUEUE")" && pwd)/$(basename "$CUEUE") \
    "$ROOT/bench/diff-kueue.sh" --random "$N" --seed "$SEED" \
    --cases "$ROOT/bench/kueue/regressions" "${TAS[@]}" --known "$ROOT/bench/kueue/known-differences.txt" \
    --out "$OUT/decisions" --json >"$OUT/line.json" 2>"$OUT/log"
rc=$?
cat "$OUT/log"
"$PY" - "$OUT/line.json" "$N" "$ROOT/bench/kueue/regressions" "$OUT/decisions" "$((${#TAS[@]} / 2))" <<'PY' || exit 1
import json, os, sys
doc = json.load(open(sys.argv[1]))
n, regdir, dec = int(sys.argv[2]), sys.argv[3], sys.argv[4]
regs = [e for e in os.listdir(regdir) if os.path.isdir(os.path.join(regdir, e)) or e.endswith(".yaml")]
errs = []
want = n + len(regs) + int(sys.argv[5])
if doc.get("scenarios") != want:
    errs.append("%s scenarios run, not %d" % (doc.get("scenarios"), want))
for f in doc.get("failed", []):
    errs.append("could not run %s: %s" % (f["scenario"], f["error"]))
for d in doc.get("differences", []):
    if not d.get("known") and not d.get("kueueNoAnswer"):
        errs.append("differs from Kueue: %s" % json.dumps(d))
# where Kueue has no answer (a preemption loop, a panic) its final state
# is no decision; a few such scenarios are expected, many mean the
# detection hides real differences
if doc.get("kueueNoAnswer", 0) > max(1, want // 10):
    errs.append("%d scenarios where Kueue had no answer" % doc["kueueNoAnswer"])
# each side's decisions were written, and Kueue admitted something in
# most scenarios (a harness that admits nothing would pass the rest)
admitted = 0
for s in os.listdir(dec):
    for who in ("kueue", "cueue"):
        p = os.path.join(dec, s, who + ".json")
        if not os.path.exists(p):
            errs.append("no %s" % p)
    p = os.path.join(dec, s, "kueue.json")
    if os.path.exists(p) and any(w["admitted"] for w in json.load(open(p))["workloads"]):
        admitted += 1
if admitted < want // 2:
    errs.append("Kueue admitted something in only %d of %d scenarios" % (admitted, want))
if errs:
    print("\n".join("FAIL: " + e for e in errs))
    sys.exit(1)
print("ok: %d scenarios, %d identical, %d with known differences only, %d where Kueue had no answer (%.0f s)" % (
    doc["scenarios"], doc["identical"], doc.get("knownOnly", 0), doc.get("kueueNoAnswer", 0),
    doc.get("seconds", 0)))
PY
[ "$rc" = 0 ] || { echo "FAIL: diff-kueue.sh exited $rc"; exit 1; }
echo "test-diff.sh: $((SECONDS - t0)) s"
