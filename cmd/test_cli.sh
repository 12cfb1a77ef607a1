#!/usr/bin/env bash
# test_cli.sh - runs the real `cueue` binary on good and bad inputs and
# checks exit codes, stdout and stderr.
#
# Usage: cmd/test_cli.sh PATH_TO_cueue   (from the repository root)
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 PATH_TO_cueue" >&2
    exit 2
fi
CUEUE=$1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TD=$ROOT/cmd/testdata
SAMPLES=$ROOT/config/samples
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

HAVE_PY=0
command -v python3 >/dev/null 2>&1 && HAVE_PY=1

FAILS=0
PASSES=0
pass() { echo "PASS  $1"; PASSES=$((PASSES + 1)); }
fail() {
    echo "FAIL  $1: $2"
    FAILS=$((FAILS + 1))
    if [ -s "$TMP/err" ]; then sed 's/^/      stderr: /' "$TMP/err" | head -n 20; fi
}

# run ARGS...: runs cueue, leaving stdout in $TMP/out, stderr in $TMP/err
# and the exit code in $RC.
run() {
    "$CUEUE" "$@" >"$TMP/out" 2>"$TMP/err"
    RC=$?
}

# check NAME WANT_RC [grep -E patterns that stdout must match...]
check_rc() {
    local name=$1 want=$2
    if [ "$RC" -ne "$want" ]; then
        fail "$name" "exit code $RC, want $want"
        return 1
    fi
    return 0
}

out_has() { grep -Eq -- "$1" "$TMP/out"; }
err_has() { grep -Eq -- "$1" "$TMP/err"; }

valid_json() {
    if [ "$HAVE_PY" = 1 ]; then
        python3 -c 'import json,sys; json.load(sys.stdin)' <"$TMP/out" 2>/dev/null
    else
        head -c1 "$TMP/out" | grep -q '{' && grep -q '"workloads"' "$TMP/out" &&
            grep -q '"clusterQueues"' "$TMP/out"
    fi
}

# ---- top level ----
run --version
if check_rc "version" 0; then
    if out_has '^cueue 0\.1\.0$'; then pass "version"; else fail "version" "unexpected output"; fi
fi

for h in --help -h help; do
    run $h
    if check_rc "main help ($h)" 0; then
        missing=""
        for w in simulate convert cluster controller dev explain queue help --version --help; do
            out_has "$w" || missing="$missing $w"
        done
        if [ -z "$missing" ]; then pass "main help ($h)"; else fail "main help ($h)" "missing:$missing"; fi
    fi
done

run
if check_rc "no command is a usage error" 2; then
    if [ -s "$TMP/out" ]; then fail "no command is a usage error" "stdout not empty"
    else pass "no command is a usage error"; fi
fi

run frobnicate
if check_rc "unknown command" 2; then
    if err_has "unknown command 'frobnicate'" && [ ! -s "$TMP/out" ]; then pass "unknown command"
    else fail "unknown command" "no usage message on stderr"; fi
fi

run --frobnicate
if check_rc "unknown top-level flag" 2; then
    if err_has "unknown option" && [ ! -s "$TMP/out" ]; then pass "unknown top-level flag"
    else fail "unknown top-level flag" "no usage message on stderr"; fi
fi

run cluster --help
if check_rc "cluster --help" 0; then
    if out_has "--listen" || err_has "--listen"; then pass "cluster --help"
    else fail "cluster --help" "--listen not documented"; fi
fi
run cluster --bogus
check_rc "cluster --bogus" 2 && pass "cluster --bogus"

run controller --bogus
if check_rc "controller --bogus" 2; then
    if err_has "unknown option '--bogus'"; then pass "controller --bogus"
    else fail "controller --bogus" "no usage message on stderr"; fi
fi
run controller --help
if check_rc "controller --help" 0; then
    if out_has "--kubeconfig"; then pass "controller --help"
    else fail "controller --help" "--kubeconfig not documented"; fi
fi

run dev --help
if check_rc "dev --help" 0; then
    missing=""
    for w in --dir --samples --crds --duration --quiet --help kubeconfig; do
        out_has "$w" || missing="$missing $w"
    done
    [ -z "$missing" ] && pass "dev --help" || fail "dev --help" "not documented:$missing"
fi
run dev --bogus
if check_rc "dev --bogus" 2; then
    if err_has "unknown option '--bogus'"; then pass "dev --bogus"
    else fail "dev --bogus" "no usage message on stderr"; fi
fi
run dev --duration 0
check_rc "dev --duration 0" 2 && pass "dev --duration 0"

# ---- simulate: help and usage ----
for args in "simulate --help" "simulate -h" "help simulate"; do
    run $args
    if check_rc "$args" 0; then
        missing=""
        for w in --output -o table json yaml --one-head-per-cycle --max-cycles --now --help \
                 --config --fair-sharing "Configuration" weightedShare cohorts \
                 "Exit codes" FILE:LINE:COLUMN ClusterQueue LocalQueue Workload Job; do
            out_has "$w" || missing="$missing $w"
        done
        if [ -z "$missing" ]; then pass "$args mentions every flag"
        else fail "$args mentions every flag" "missing:$missing"; fi
    fi
done

run simulate
if check_rc "simulate without PATH" 2; then
    if err_has "no PATH" && [ ! -s "$TMP/out" ]; then pass "simulate without PATH"
    else fail "simulate without PATH" "no message"; fi
fi

run simulate --bogus "$SAMPLES"
if check_rc "simulate unknown flag" 2; then
    if err_has "unknown option '--bogus'" && [ ! -s "$TMP/out" ]; then pass "simulate unknown flag"
    else fail "simulate unknown flag" "no message"; fi
fi

run simulate -o xml "$SAMPLES"
if check_rc "simulate bad -o" 2; then
    if err_has "xml" && [ ! -s "$TMP/out" ]; then pass "simulate bad -o"
    else fail "simulate bad -o" "no message naming the format"; fi
fi

for bad in 0 -3 abc 12x; do
    run simulate --max-cycles "$bad" "$SAMPLES"
    if check_rc "simulate --max-cycles $bad" 2; then
        if err_has "max-cycles"; then pass "simulate --max-cycles $bad"
        else fail "simulate --max-cycles $bad" "no message"; fi
    fi
done

run simulate --now yesterday "$SAMPLES"
if check_rc "simulate bad --now" 2; then
    if err_has "RFC 3339"; then pass "simulate bad --now"; else fail "simulate bad --now" "no message"; fi
fi

run simulate --max-cycles
if check_rc "simulate flag without value" 2; then
    if err_has "needs a value"; then pass "simulate flag without value"
    else fail "simulate flag without value" "no message"; fi
fi

run simulate "$TMP/does-not-exist.yaml"
if check_rc "simulate missing path" 2; then
    if [ ! -s "$TMP/out" ] && [ -s "$TMP/err" ]; then pass "simulate missing path"
    else fail "simulate missing path" "want a message and empty stdout"; fi
fi

# ---- simulate on the samples ----
run simulate -o json "$SAMPLES"
if check_rc "simulate samples json" 0; then
    if valid_json; then pass "simulate samples json is valid JSON"
    else fail "simulate samples json is valid JSON" "invalid JSON"; fi
    if [ -s "$TMP/err" ]; then fail "simulate samples: no warnings" "stderr not empty"
    else pass "simulate samples: no warnings"; fi
    if [ "$HAVE_PY" = 1 ]; then
        cp "$TMP/out" "$TMP/samples.json"
        if python3 - "$TMP/samples.json" >"$TMP/py" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert list(doc) == ["workloads", "clusterQueues"], list(doc)
wls, cqs = doc["workloads"], doc["clusterQueues"]
names = [w["name"] for w in wls]
assert names == sorted(names), "workloads not sorted"
assert [c["name"] for c in cqs] == sorted(c["name"] for c in cqs), "clusterQueues not sorted"
for w in wls:
    assert list(w) == ["name", "admitted", "clusterQueue", "podSets", "evictions", "reason"], list(w)
    assert isinstance(w["admitted"], bool) and isinstance(w["evictions"], int)
    if w["admitted"]:
        assert w["reason"] is None and w["podSets"], w
        for ps in w["podSets"]:
            assert list(ps) == ["name", "count", "flavors"], list(ps)
            assert list(ps["flavors"]) == sorted(ps["flavors"]), ps
    else:
        assert w["podSets"] == [] and isinstance(w["reason"], str) and w["reason"], w
for c in cqs:
    assert list(c) == ["name", "cohort", "pending", "admitted", "usage"], list(c)
    for u in c["usage"]:
        assert list(u) == ["flavor", "resource", "total", "borrowed", "nominal"], list(u)
        assert all(isinstance(u[k], str) for k in ("total", "borrowed", "nominal")), u
by = {w["name"]: w for w in wls}
def find(ns, prefix):
    m = [w for n, w in by.items() if n.startswith(ns + "/" + prefix)]
    assert len(m) == 1, (prefix, list(by))
    return m[0]
srv = by["ml-prod/llm-inference-server"]
assert srv["admitted"] and srv["clusterQueue"] == "production-gpu", srv
assert srv["podSets"][0]["flavors"]["nvidia.com/gpu"] == "a100", srv
typo = find("ml-research", "job-notebook-export-")
assert not typo["admitted"] and typo["clusterQueue"] is None, typo
huge = find("ml-research", "job-pretrain-70b-")
assert not huge["admitted"] and huge["clusterQueue"] == "research-gpu", huge
notol = find("ml-research", "job-eval-on-spot-")
assert not notol["admitted"], notol
spot = find("ml-research", "job-rl-spot-rollouts-")
assert spot["admitted"] and spot["podSets"][0]["flavors"]["nvidia.com/gpu"] == "spot-a100", spot
intern = by["sandbox/intern-notebook"]
assert not intern["admitted"], intern
cq = {c["name"]: c for c in cqs}
assert cq["research-gpu"]["cohort"] == "research" and cq["cpu-batch"]["cohort"] is None
assert [(u["flavor"], u["resource"]) for u in cq["cpu-batch"]["usage"]] == \
    [("cpu-general", "cpu"), ("cpu-general", "memory")], cq["cpu-batch"]["usage"]
PY
        then pass "simulate samples json: shape and expected outcomes"
        else fail "simulate samples json: shape and expected outcomes" "$(tail -n 3 "$TMP/py")"; fi
    fi
fi

run simulate "$SAMPLES"
if check_rc "simulate samples table" 0; then
    missing=""
    for w in "^ClusterQueue cpu-batch \(no cohort\)" "^ClusterQueue research-gpu \(cohort research\)" \
             "FLAVOR +RESOURCE +NOMINAL +USED +BORROWED" "admitted: +ml-prod/llm-inference-server" \
             "pending: +ml-research/job-pretrain-70b-" "LocalQueue or ClusterQueue is missing"; do
        out_has "$w" || missing="$missing [$w]"
    done
    if [ -z "$missing" ]; then pass "simulate samples table"
    else fail "simulate samples table" "missing:$missing"; fi
fi

run simulate -o yaml --now 2026-02-01T10:00:00Z "$SAMPLES"
if check_rc "simulate samples yaml" 0; then
    ncq=$(grep -c '^kind: ClusterQueue$' "$TMP/out")
    nlq=$(grep -c '^kind: LocalQueue$' "$TMP/out")
    nsep=$(grep -c '^---$' "$TMP/out")
    nwl=$(grep -c '^kind: Workload$' "$TMP/out")
    first_kind=$(grep -m1 '^kind:' "$TMP/out")
    if [ "$ncq" = 3 ] && [ "$nlq" = 6 ] && [ "$nwl" = 17 ] &&
        [ "$nsep" = $((ncq + nlq + nwl - 1)) ] && [ "$first_kind" = "kind: ClusterQueue" ] &&
        out_has "Can admit new workloads" && out_has "2026-02-01T10:00:00Z"; then
        pass "simulate samples yaml"
    else
        fail "simulate samples yaml" "cq=$ncq lq=$nlq wl=$nwl sep=$nsep first=$first_kind"
    fi
fi

run simulate --one-head-per-cycle -o json "$SAMPLES"
if check_rc "simulate --one-head-per-cycle" 0; then
    if [ -f "$TMP/samples.json" ] && ! cmp -s "$TMP/out" "$TMP/samples.json"; then
        fail "simulate --one-head-per-cycle" "result differs from the default loop"
    else pass "simulate --one-head-per-cycle gives the same result"; fi
fi

# ---- simulate: fair sharing and the controller Configuration ----
cat >"$TMP/fs-config.yaml" <<'EOF'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing:
  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
admissionFairSharing:
  usageHalfLifeTime: 168h
  usageSamplingInterval: 5m
EOF
cat >"$TMP/plain-config.yaml" <<'EOF'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
manageJobsWithoutQueueName: false
EOF
cat >"$TMP/bad-strategies.yaml" <<'EOF'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing:
  preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]
EOF
cat >"$TMP/bad-duration.yaml" <<'EOF'
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
admissionFairSharing:
  usageHalfLifeTime: 7days
EOF

# check_fs_json NAME WANT(1|0): stdout is the samples' JSON with (1) or
# without (0) the fair-sharing fields.
check_fs_json() {
    local name=$1 want=$2
    if [ "$HAVE_PY" != 1 ]; then
        if [ "$want" = 1 ] && out_has '"weightedShare"' && out_has '"cohorts"'; then pass "$name"
        elif [ "$want" = 0 ] && ! out_has '"weightedShare"'; then pass "$name"
        else fail "$name" "fair-sharing fields wrong"; fi
        return
    fi
    if python3 - "$want" "$TMP/out" >"$TMP/py" 2>&1 <<'PY'
import json, sys
want = sys.argv[1] == "1"
doc = json.load(open(sys.argv[2]))
if not want:
    assert list(doc) == ["workloads", "clusterQueues"], list(doc)
    assert all("weightedShare" not in c for c in doc["clusterQueues"])
    sys.exit(0)
assert list(doc) == ["workloads", "clusterQueues", "cohorts"], list(doc)
for c in doc["clusterQueues"]:
    assert list(c) == ["name", "cohort", "pending", "admitted", "usage", "weightedShare"], list(c)
    assert isinstance(c["weightedShare"], int) and c["weightedShare"] >= 0, c
    if c["cohort"] is None:
        assert c["weightedShare"] == 0, c
cos = doc["cohorts"]
assert [h["name"] for h in cos] == sorted(h["name"] for h in cos), "cohorts not sorted"
names = {h["name"] for h in cos}
for h in cos:
    assert list(h) == ["name", "parent", "weightedShare"], list(h)
    assert isinstance(h["weightedShare"], int), h
    assert h["parent"] is None or h["parent"] in names, h
    if h["parent"] is None:
        assert h["weightedShare"] == 0, h     # a root never borrows
for c in doc["clusterQueues"]:
    assert c["cohort"] is None or c["cohort"] in names, c
# the samples borrow GPUs across the org: someone has a share
assert any(c["weightedShare"] > 0 for c in doc["clusterQueues"]), doc["clusterQueues"]
PY
    then pass "$name"
    else fail "$name" "$(tail -n 3 "$TMP/py")"; fi
}

run simulate --fair-sharing -o json "$SAMPLES"
if check_rc "simulate --fair-sharing json" 0; then
    check_fs_json "simulate --fair-sharing json: weightedShare and cohorts" 1
    cp "$TMP/out" "$TMP/fs.json"
fi

run simulate --config "$TMP/fs-config.yaml" -o json "$SAMPLES"
if check_rc "simulate --config with fairSharing" 0; then
    check_fs_json "simulate --config with fairSharing: weightedShare and cohorts" 1
    if [ -s "$TMP/err" ]; then fail "simulate --config: no warnings" "stderr not empty"
    else pass "simulate --config: no warnings"; fi
    if cmp -s "$TMP/out" "$TMP/fs.json"; then pass "--config fairSharing = --fair-sharing"
    else fail "--config fairSharing = --fair-sharing" "results differ"; fi
fi

run simulate --config "$TMP/plain-config.yaml" -o json "$SAMPLES"
if check_rc "simulate --config without fairSharing" 0; then
    check_fs_json "simulate --config without fairSharing: classic shape" 0
fi

run simulate --config "$TMP/plain-config.yaml" --fair-sharing -o json "$SAMPLES"
if check_rc "simulate --fair-sharing overrides the Configuration" 0; then
    check_fs_json "simulate --fair-sharing overrides the Configuration" 1
fi

# A Configuration among the inputs is honoured without --config ...
mkdir -p "$TMP/with-config"
cp "$SAMPLES"/*.yaml "$TMP/with-config/"
cp "$TMP/fs-config.yaml" "$TMP/with-config/99-config.yaml"
run simulate -o json "$TMP/with-config"
if check_rc "Configuration among the inputs" 0; then
    check_fs_json "Configuration among the inputs turns fair sharing on" 1
fi
# ... and ignored, with a warning, when --config is given.
run simulate --config "$TMP/plain-config.yaml" -o json "$TMP/with-config"
if check_rc "--config wins over an input Configuration" 0; then
    check_fs_json "--config wins over an input Configuration" 0
    if err_has '^cueue: warning: .*99-config\.yaml:[0-9]+: Configuration ignored: --config'; then
        pass "--config: the input Configuration is ignored with a warning"
    else fail "--config: the input Configuration is ignored with a warning" "no warning"; fi
fi
cp "$TMP/plain-config.yaml" "$TMP/with-config/98-config.yaml"
run simulate -o json "$TMP/with-config"
if check_rc "two Configurations among the inputs" 2; then
    if err_has '2 Configurations among the inputs' && [ ! -s "$TMP/out" ]; then
        pass "two Configurations among the inputs"
    else fail "two Configurations among the inputs" "want an error and empty stdout"; fi
fi

run simulate --fair-sharing -o yaml "$SAMPLES"
if check_rc "simulate --fair-sharing yaml" 0; then
    nfs=$(grep -c '^  fairSharing:$' "$TMP/out")
    ncq=$(grep -c '^kind: ClusterQueue$' "$TMP/out")
    nco=$(grep -c '^kind: Cohort$' "$TMP/out")
    if [ "$nfs" = $((ncq + nco)) ] && out_has '^    weightedShare: [0-9]+$'; then
        pass "simulate --fair-sharing yaml: status.fairSharing.weightedShare"
    else fail "simulate --fair-sharing yaml: status.fairSharing.weightedShare" "fairSharing=$nfs cq=$ncq cohort=$nco"; fi
fi

run simulate --fair-sharing "$SAMPLES"
if check_rc "simulate --fair-sharing table" 0; then
    if out_has '^  weighted share: [0-9]+$'; then pass "simulate --fair-sharing table"
    else fail "simulate --fair-sharing table" "no weighted share line"; fi
fi

run simulate --config "$TMP/bad-strategies.yaml" "$SAMPLES"
if check_rc "bad --config: strategies" 2; then
    if [ ! -s "$TMP/out" ] && err_has 'bad-strategies\.yaml' &&
        err_has 'fairSharing\.preemptionStrategies' && err_has 'allowed lists'; then
        pass "bad --config: strategies"
    else fail "bad --config: strategies" "want the file, the field and the problem"; fi
fi

run simulate --config "$TMP/bad-duration.yaml" "$SAMPLES"
if check_rc "bad --config: duration" 2; then
    if [ ! -s "$TMP/out" ] && err_has 'bad-duration\.yaml' &&
        err_has 'admissionFairSharing\.usageHalfLifeTime' && err_has '7days'; then
        pass "bad --config: duration"
    else fail "bad --config: duration" "want the file, the field and the value"; fi
fi

run simulate --config "$SAMPLES/20-clusterqueues.yaml" "$SAMPLES"
if check_rc "--config with no Configuration" 2; then
    if err_has '20-clusterqueues\.yaml: --config needs a file holding one Kueue Configuration'; then
        pass "--config with no Configuration"
    else fail "--config with no Configuration" "no message"; fi
fi

run simulate --config "$TMP/nope.yaml" "$SAMPLES"
if check_rc "--config missing file" 2; then
    if err_has 'nope\.yaml' && [ ! -s "$TMP/out" ]; then pass "--config missing file"
    else fail "--config missing file" "want a message naming the file"; fi
fi

run simulate --config "$TD/syntax-error.yaml" "$SAMPLES"
if check_rc "--config syntax error" 2; then
    if err_has 'syntax-error\.yaml:[0-9]+:[0-9]+: '; then pass "--config syntax error"
    else fail "--config syntax error" "want FILE:LINE:COLUMN:"; fi
fi

run simulate --config "$TMP/fs-config.yaml" --config "$TMP/plain-config.yaml" "$SAMPLES"
if check_rc "--config twice" 2; then
    if err_has 'given twice'; then pass "--config twice"; else fail "--config twice" "no message"; fi
fi

# ---- bad inputs ----
run simulate "$TD/syntax-error.yaml"
if check_rc "syntax error" 2; then
    if err_has 'syntax-error\.yaml:[0-9]+:[0-9]+: ' && [ ! -s "$TMP/out" ]; then pass "syntax error"
    else fail "syntax error" "want FILE:LINE:COLUMN: on stderr and empty stdout"; fi
fi

run simulate -o json "$TD/invalid-object.yaml"
if check_rc "invalid object" 2; then
    if [ -s "$TMP/out" ]; then fail "invalid object" "stdout not empty"
    elif err_has 'ClusterQueue' && err_has 'bad-cq' && err_has 'nominalQuota'; then
        pass "invalid object"
    else fail "invalid object" "error must name kind, name and field"; fi
fi

run simulate -o json "$TD/quota-too-large.yaml"
if check_rc "quota too large" 2; then
    if [ -s "$TMP/out" ]; then fail "quota too large" "stdout not empty"
    elif err_has 'ClusterQueue big-cq: spec\.resourceGroups\[0\]\.flavors\[0\]\.resources\[1\]\.nominalQuota: Invalid value: "1e400": too large: Cueue holds an amount of memory up to 9223372036854775807, as Kueue' &&
        err_has 'resources\[0\]\.nominalQuota: Invalid value: "9Pi": too large: Cueue holds an amount of cpu up to 9223372036854775807m'; then
        pass "quota too large"
    else fail "quota too large" "error must name the object, the field, the value and the limit"; fi
fi

run simulate -o json "$TD/unknown-kind.yaml"
if check_rc "unknown kind is a warning" 0; then
    if err_has '^cueue: warning: .*ConfigMap' && valid_json; then pass "unknown kind is a warning"
    else fail "unknown kind is a warning" "want a warning naming ConfigMap and JSON output"; fi
fi

# A folder mixing good and bad files reports the bad one.
mkdir -p "$TMP/mixed"
cp "$TD/unknown-kind.yaml" "$TMP/mixed/a.yaml"
cp "$TD/syntax-error.yaml" "$TMP/mixed/b.yml"
echo "not yaml: [" >"$TMP/mixed/ignored.txt"
run simulate "$TMP/mixed"
if check_rc "folder with a bad file" 2; then
    if err_has 'b\.yml:[0-9]+:[0-9]+: ' && ! err_has 'ignored\.txt'; then pass "folder with a bad file"
    else fail "folder with a bad file" "want the .yml error and the .txt file ignored"; fi
fi

# ---- convert ----
for args in "convert --help" "help convert"; do
    run $args
    if check_rc "$args" 0; then
        if out_has "--help" && out_has "[Cc]omments" && out_has "cohortName"; then pass "$args"
        else fail "$args" "must mention --help, lost comments and the renames"; fi
    fi
done

run convert "$TD/v1beta1-clusterqueue.yaml"
if check_rc "convert v1beta1" 0; then
    if out_has '^  cohortName: team-ab$' && ! out_has '^  cohort:' &&
        out_has 'kueue.x-k8s.io/v1beta2' && out_has 'whenCanBorrow: MayStopSearch' &&
        ! out_has '^#'; then
        pass "convert v1beta1"
    else fail "convert v1beta1" "$(head -c 300 "$TMP/out")"; fi
fi

run convert "$TD/v1beta1-clusterqueue.yaml" "$TD/unknown-kind.yaml"
if check_rc "convert several files" 0; then
    n=$(grep -c '^---$' "$TMP/out")
    if [ "$n" = 4 ] && out_has '^kind: ConfigMap$'; then pass "convert several files"
    else fail "convert several files" "want 5 documents, got $((n + 1))"; fi
fi

# a Kueue version convert does not know: printed unchanged, with the warning
# simulate gives for it (one wording), and exit 0 as simulate
run convert "$TD/v1alpha1-cohort.yaml" "$TD/unknown-kind.yaml"
if check_rc "convert v1alpha1" 0; then
    want='v1alpha1-cohort\.yaml:3: passing through unknown kind Cohort \(apiVersion kueue\.x-k8s\.io/v1alpha1\) old$'
    if err_has "^cueue: warning: .*$want" && out_has '^apiVersion: kueue.x-k8s.io/v1alpha1$' &&
        out_has '^  parent: org$' && [ "$(grep -c warning "$TMP/err")" = 1 ]; then
        pass "convert v1alpha1"
    else fail "convert v1alpha1" "$(cat "$TMP/err")"; fi
fi
run simulate "$TD/v1alpha1-cohort.yaml"
if check_rc "simulate v1alpha1" 0; then
    if err_has 'v1alpha1-cohort\.yaml:3: skipping unknown kind Cohort \(apiVersion kueue\.x-k8s\.io/v1alpha1\) old$'; then
        pass "simulate v1alpha1"
    else fail "simulate v1alpha1" "$(cat "$TMP/err")"; fi
fi

run convert "$TD/syntax-error.yaml"
if check_rc "convert syntax error" 2; then
    if err_has 'syntax-error\.yaml:[0-9]+:[0-9]+: ' && [ ! -s "$TMP/out" ]; then pass "convert syntax error"
    else fail "convert syntax error" "want FILE:LINE:COLUMN: and empty stdout"; fi
fi

run convert
if check_rc "convert without PATH" 2; then pass "convert without PATH"; fi

# ---- explain and queue (no cluster needed: usage, help, runtime errors) ----
for args in "explain --help" "help explain" "queue --help" "help queue" "queue pending --help"; do
    run $args
    if check_rc "$args" 0; then
        missing=""
        for w in --controller CUEUE_CONTROLLER --kubeconfig --context --config --output --help \
                 "computed" "Exit codes"; do
            out_has "$w" || missing="$missing $w"
        done
        [ -z "$missing" ] && pass "$args" || fail "$args" "not documented:$missing"
    fi
done
run queue --help
if out_has "queue list" && out_has "queue pending" && out_has "POSITION" && out_has "AGE"; then
    pass "queue --help names both subcommands and the columns"
else fail "queue --help" "subcommands or columns missing"; fi

# usage errors: exit 2, nothing on stdout, a message naming the problem
usage_case() {   # NAME PATTERN ARGS...
    local name=$1 pat=$2; shift 2
    run "$@"
    if check_rc "$name" 2; then
        if err_has "$pat" && [ ! -s "$TMP/out" ]; then pass "$name"
        else fail "$name" "want '$pat' on stderr and empty stdout"; fi
    fi
}
usage_case "explain without a name" "no workload given" explain
usage_case "explain with two names" "one workload at a time, got extra 'b'" explain a b
usage_case "explain a/b/c" "unknown kind 'b' \(workload, job, jobset, leaderworkerset, pod\)" explain a/b/c
usage_case "explain a/jobset/c/d" "expected \[NAMESPACE/\]\[KIND/\]NAME, got 'a/jobset/c/d'" \
    explain a/jobset/c/d
usage_case "explain of an invalid name" "'Bad_Name' is not a valid name" explain default/Bad_Name
usage_case "explain --bogus" "unknown option '--bogus'" explain --bogus x
usage_case "explain -o yaml" "unknown output format 'yaml' \(use text or json\)" explain -o yaml x
usage_case "explain --controller needs a URL" "--controller: expected an http:// or https:// URL" \
    explain --controller ftp://host x
usage_case "explain --controller without a value" "option '--controller' needs a value" explain --controller
CUEUE_CONTROLLER=bogus "$CUEUE" explain x >"$TMP/out" 2>"$TMP/err"; RC=$?
if check_rc "bad \$CUEUE_CONTROLLER" 2; then
    if err_has '\$CUEUE_CONTROLLER: expected an http'; then pass "bad \$CUEUE_CONTROLLER"
    else fail "bad \$CUEUE_CONTROLLER" "the variable is not named"; fi
fi
usage_case "queue without a subcommand" "no subcommand given \(list or pending\)" queue
usage_case "queue frob" "unknown subcommand 'frob'" queue frob
usage_case "queue list with an argument" "list takes no arguments, got 'x'" queue list x
usage_case "queue pending with two queues" "got extra 'b'" queue pending a b
usage_case "queue pending of an invalid ClusterQueue" "'CQ!' is not a valid ClusterQueue name" queue pending 'CQ!'
usage_case "queue -o text" "unknown output format 'text' \(use table, wide or json\)" queue list -o text

# runtime errors: no controller and no API server -> exit 1, both named
cat >"$TMP/kc-closed" <<'YAML'
apiVersion: v1
kind: Config
clusters:
- {name: c, cluster: {server: "http://127.0.0.1:1"}}
contexts:
- {name: c, context: {cluster: c, user: u}}
current-context: c
users:
- {name: u, user: {}}
YAML
for args in "explain default/x" "queue list" "queue pending cq"; do
    run $args --controller http://127.0.0.1:1 --kubeconfig "$TMP/kc-closed"
    if check_rc "$args, nothing reachable" 1; then
        if err_has "cannot reach the API server at http://127.0.0.1:1" &&
            err_has "the controller at http://127.0.0.1:1 did not answer either" && [ ! -s "$TMP/out" ]; then
            pass "$args, nothing reachable"
        else fail "$args, nothing reachable" "want both the API server and the controller named"; fi
    fi
done
HOME=$TMP/nohome KUBECONFIG= KUBERNETES_SERVICE_HOST= run explain default/x --controller http://127.0.0.1:1
if check_rc "explain without a kubeconfig" 1; then
    if err_has "without a kubeconfig"; then pass "explain without a kubeconfig"
    else fail "explain without a kubeconfig" "no kubeconfig message"; fi
fi

# ---- simulate --explain ----
FIFO=$ROOT/sim/scenarios/019-strict-fifo-blocks.yaml
JOBS=$ROOT/sim/scenarios/058-job-workload.yaml
run simulate --help
if out_has '--explain \[NS/\]NAME' && out_has "cueue explain -o" && out_has "an --explain name"; then
    pass "simulate --help documents --explain"
else fail "simulate --help" "--explain not documented"; fi

run simulate --explain team-a/w-small "$FIFO"
if check_rc "simulate --explain (text)" 0; then
    if [ "$(head -n 1 "$TMP/out")" = "Workload team-a/w-small: pending" ] &&
        out_has "waits behind the head team-a/w-big, which does not fit \(StrictFIFO\)" &&
        out_has "position 1 in ClusterQueue cq \(1 ahead of it\)" &&
        ! out_has "^ClusterQueue cq \(no cohort\)"; then
        pass "simulate --explain (text): the explanation instead of the table"
    else fail "simulate --explain (text)" "unexpected output"; fi
fi

run simulate --explain team-a/w-big --explain team-a/w-small "$FIFO"
if check_rc "simulate --explain twice" 0; then
    first=$(grep -n '^Workload ' "$TMP/out" | cut -d: -f2- | tr '\n' '|')
    if [ "$first" = "Workload team-a/w-big: pending (WaitingForQuota)|Workload team-a/w-small: pending|" ] &&
        out_has "nvidia.com/gpu: requested 4, available 2: 2 more needed"; then
        pass "simulate --explain twice: both, in the order given"
    else fail "simulate --explain twice" "got headers: $first"; fi
fi

run simulate -o table --explain team-a/w1 "$FIFO"
if check_rc "simulate -o table --explain" 0; then
    if [ "$(head -n 1 "$TMP/out")" = "ClusterQueue cq (no cohort)  1 admitted, 2 pending" ] &&
        grep -q -x "Workload team-a/w1: admitted" "$TMP/out" &&
        [ "$(grep -n -x "Workload team-a/w1: admitted" "$TMP/out" | cut -d: -f1)" -gt \
          "$(grep -n "pending:  team-a/w-small" "$TMP/out" | cut -d: -f1)" ]; then
        pass "simulate -o table --explain: the table, then the explanation"
    else fail "simulate -o table --explain" "unexpected output"; fi
fi

run simulate -o json --explain team-a/w-small --explain team-a/w-big "$FIFO"
if check_rc "simulate -o json --explain" 0; then
    if ! command -v jq >/dev/null 2>&1; then
        echo "SKIP  simulate -o json --explain: jq is not installed"
    elif [ "$(jq -r 'length, .[0].workload, .[0].queue.blockedBy, .[0].queue.position,
                     .[1].workload, .[1].reason' "$TMP/out" 2>/dev/null | tr '\n' ' ')" = \
           "2 team-a/w-small team-a/w-big 1 team-a/w-big WaitingForQuota " ]; then
        pass "simulate -o json --explain: an array of explanation documents"
    else fail "simulate -o json --explain" "unexpected JSON"; fi
fi

run simulate -o yaml --explain team-a/w-small --explain team-a/w1 "$FIFO"
if check_rc "simulate -o yaml --explain" 0; then
    if [ "$(grep -c -x -- '---' "$TMP/out")" = 1 ] && out_has "^workload: team-a/w-small$" &&
        out_has "^workload: team-a/w1$" && out_has "^status: admitted$"; then
        pass "simulate -o yaml --explain: a YAML stream of the documents"
    else fail "simulate -o yaml --explain" "unexpected YAML"; fi
fi

run simulate --explain sample-job "$JOBS"
if check_rc "simulate --explain of a Job" 0; then
    if [ "$(head -n 1 "$TMP/out")" = "(Job default/sample-job: its Workload is default/job-sample-job-19a77)" ] &&
        out_has "^Workload default/job-sample-job-19a77: admitted$"; then
        pass "simulate --explain of a Job (no namespace: default) explains its Workload"
    else fail "simulate --explain of a Job" "unexpected output"; fi
fi
run simulate -o json --explain default/sample-job "$JOBS"
if check_rc "simulate -o json --explain of a Job" 0; then
    if ! command -v jq >/dev/null 2>&1; then
        echo "SKIP  simulate -o json --explain of a Job: jq is not installed"
    elif [ "$(jq -r '.[0] | keys_unsorted[0:2] | join(",")' "$TMP/out" 2>/dev/null),$(jq -r '.[0].job' "$TMP/out" 2>/dev/null)" = \
           "workload,job,default/sample-job" ]; then
        pass "simulate -o json --explain of a Job: \"job\" after \"workload\""
    else fail "simulate -o json --explain of a Job" "no job key"; fi
fi

# unknown names: exit 2 like other input errors, nothing on stdout, the namespace named
usage_case "simulate --explain of an unknown Workload" \
    "--explain team-a/nope: no Workload or Job nope in namespace team-a \(namespace team-a has Workload w1, Workload w-big, Workload w-small\)" \
    simulate --explain team-a/nope "$FIFO"
usage_case "simulate --explain in an unknown namespace" \
    "no Workload or Job w1 in namespace team-b \(the inputs have no Workload or Job in namespace team-b\)" \
    simulate --explain team-b/w1 "$FIFO"
usage_case "simulate --explain of an unknown name in default" \
    "no Workload or Job in namespace default" simulate --explain w1 "$FIFO"
run simulate --explain team-a/nope --explain team-b/x --explain team-a/w1 "$FIFO"
if check_rc "simulate --explain: every unknown name reported" 2; then
    if [ "$(grep -c "no Workload or Job" "$TMP/err")" = 2 ] && [ ! -s "$TMP/out" ]; then
        pass "simulate --explain: every unknown name reported in one run"
    else fail "simulate --explain: every unknown name reported" "want 2 errors"; fi
fi
usage_case "simulate --explain ''" "--explain needs NAMESPACE/NAME" simulate --explain '' "$FIFO"
usage_case "simulate --explain a/" "--explain 'a/': expected NAMESPACE/NAME" simulate --explain a/ "$FIFO"
usage_case "simulate --explain a/b/c" "--explain 'a/b/c': expected NAMESPACE/NAME" simulate --explain a/b/c "$FIFO"
usage_case "simulate --explain without a value" "option '--explain' needs a value" simulate --explain

# ---- hardening (issue 10) ----
# a file over the 64 MiB input bound is bad input (2), not an internal error
truncate -s $(( (64 << 20) + 1 )) "$TMP/huge.yaml"
run simulate "$TMP/huge.yaml"
if check_rc "simulate of a file over 64 MiB" 2; then
    if err_has "huge.yaml: file is larger than 64 MiB"; then pass "simulate of a file over 64 MiB"
    else fail "simulate of a file over 64 MiB" "no message naming the file"; fi
fi
rm -f "$TMP/huge.yaml"

# a cycle of two Cohorts is one warning, naming the cycle once
cat >"$TMP/cycle.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: a}
spec: {parentName: b}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: b}
spec: {parentName: a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: c}
spec: {parentName: a}
YAML
run simulate "$TMP/cycle.yaml"
if check_rc "simulate: cohort cycle" 0; then
    if [ "$(grep -c "cycle" "$TMP/err")" = 1 ] && err_has "Cohort a: spec.parentName: .*a -> b -> a"; then
        pass "simulate: a cohort cycle is warned about once"
    else fail "simulate: cohort cycle" "want one warning naming a -> b -> a"; fi
fi

# duplicate mapping keys: a warning naming the file, the line and the key
# (the later value wins, as in kubectl's YAML to JSON conversion)
cat >"$TMP/dupkey.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: f
  name: g
spec: {namespaceSelector: {}}
YAML
run simulate -o json "$TMP/dupkey.yaml"
if check_rc "simulate: duplicate key" 0; then
    if err_has "warning: .*dupkey.yaml:5:3: mapping key \"name\" already defined at line 4" &&
        out_has '"g"'; then
        pass "simulate: duplicate key warned with file, line and key; the later value used"
    else fail "simulate: duplicate key" "no warning naming dupkey.yaml:5:3 and line 4"; fi
fi

# cueue dev's loader warns the same way (a malformed file then stops it
# before anything starts)
mkdir -p "$TMP/devs"
cp "$TMP/dupkey.yaml" "$TMP/devs/a.yaml"
printf 'x: [\n' >"$TMP/devs/b.yaml"
run dev --crds "$ROOT/crds" --samples "$TMP/devs" --dir "$TMP/devdir" --duration 1
if check_rc "dev: duplicate key" 2; then
    if err_has "dev: warning: .*a.yaml:5:3: mapping key \"name\" already defined at line 4"; then
        pass "dev: duplicate key warned with file, line and key"
    else fail "dev: duplicate key" "no warning"; fi
fi

echo "$PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
