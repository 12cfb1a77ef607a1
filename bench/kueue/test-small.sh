#!/usr/bin/env bash
# test-small.sh CUEUE - bench/vs-kueue.sh end to end on its small config
# (60 workloads), as CI runs it: Kueue's runner on minimalkueue and on the
# cueue binary CUEUE, then checks on the figures both runs must give and on
# the table and plots. Exit 77 (skipped) when the control plane or Kueue is
# not built (e2e/k8s/cluster.sh build, bench/kueue/build.sh build).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CUEUE=${1:?usage: test-small.sh CUEUE-BINARY}
"$ROOT/e2e/k8s/cluster.sh" built || { echo "skipped: the control plane is not built"; exit 77; }
"$ROOT/bench/kueue/build.sh" built || { echo "skipped: Kueue is not built"; exit 77; }
OUT=$(mktemp -d /tmp/vs-kueue-test.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
# Debian's python3 (python3-yaml, scripts/install-deps.sh), not another on PATH
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
fail() { echo "FAIL: $*" >&2; exit 1; }

CUEUE_BIN=$(cd "$(dirname "$CUEUE")" && pwd)/$(basename "$CUEUE") \
    "$ROOT/bench/vs-kueue.sh" --config small --out "$OUT" --json >"$OUT/line.json" \
    || fail "vs-kueue.sh failed"
"$PY" - "$OUT/line.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
errs = []
if doc.get("config") != "small":
    errs.append("config is %r" % doc.get("config"))
for side in ("kueue", "cueue"):
    r = doc.get(side)
    if not r:
        errs.append("no figures for " + side)
        continue
    def need(ok, what):
        if not ok:
            errs.append("%s: %s (%s)" % (side, what, json.dumps({k: v for k, v in r.items() if not isinstance(v, dict)})))
    for k in ("wall_s", "cq_usage_pct", "cpu_s", "maxrss_mib", "requests_per_admission"):
        need(isinstance(r.get(k), (int, float)), "no number " + k)
    need(r.get("workloads") == 60, "the runner saw %s workloads, not 60" % r.get("workloads"))
    need(r.get("never_admitted") == 0, "%s workloads never admitted" % r.get("never_admitted"))
    need(r.get("admissions", 0) >= 60, "%s admissions for 60 workloads" % r.get("admissions"))
    need(0 < r.get("cq_usage_pct", 0) <= 100, "ClusterQueue usage %s%%" % r.get("cq_usage_pct"))
    # an admission is one Workload status write at least
    need(r.get("object_writes_per_admission", 0) >= 1, "fewer object writes than admissions")
    need(r.get("last_finish_s", 0) >= r.get("last_admission_s", 0) > 0, "admission and finish times out of order")
    need(0 < r.get("maxrss_mib", 0) < 4096, "peak RSS %s MiB" % r.get("maxrss_mib"))
    need(set(r.get("time_to_admission_ms", {})) == {"small", "medium", "large"}, "workload classes missing")
if errs:
    print("\n".join("FAIL: " + e for e in errs))
    sys.exit(1)
print("ok: both controllers ran the small config: Kueue %.1f s, Cueue %.1f s" % (doc["kueue"]["wall_s"], doc["cueue"]["wall_s"]))
PY
# the table and the plots from the same runs
"$PY" "$ROOT/bench/kueue/report.py" --config-name small --generator "$OUT/generator.yaml" \
    --out "$OUT" --plots kueue="$OUT/kueue" cueue="$OUT/cueue" >"$OUT/table.md" || fail "report.py failed"
grep -q "^| | Kueue (minimalkueue) | Cueue | Cueue / Kueue |" "$OUT/table.md" || fail "no table: $(head -5 "$OUT/table.md")"
grep -q "^| ClusterQueue usage |" "$OUT/table.md" || fail "no usage row in the table"
if command -v gnuplot >/dev/null; then
    for p in running usage; do
        [ "$(head -c 4 "$OUT/$p.png" | tail -c 3)" = PNG ] || fail "no plot $p.png"
    done
fi
echo "ok: table and plots"
# Kueue's gauges, read off both controllers: the cohort-subtree reservation
# is in Kueue's internal amounts (millicores for cpu), and its peak is
# within the cohort's quota (2 x 20 CPU) on both
"$PY" - "$OUT" <<'PY' || exit 1
import os, sys, tarfile
out = sys.argv[1]
peaks = {}
for side in ("kueue", "cueue"):
    peak = 0.0
    with tarfile.open(os.path.join(out, side, "metricsDump.tgz")) as tf:
        for m in tf.getmembers():
            if not m.name.endswith(".prometheus"):
                continue
            v = sum(float(l.rsplit(" ", 1)[1]) for l in tf.extractfile(m).read().decode().splitlines()
                    if l.startswith("kueue_cohort_subtree_resource_reservations{") and 'resource="cpu"' in l)
            peak = max(peak, v)
    peaks[side] = peak
bad = [s for s, v in peaks.items() if not 1000 <= v <= 40000]
if bad:
    print("FAIL: peak cohort cpu reservation (millicores, 1000..40000 expected): %s" % peaks)
    sys.exit(1)
print("ok: cohort reservations in millicores on both: %s" % peaks)
PY
