#!/usr/bin/python3
"""Shrink a differential-test case to a minimal one that is still interesting.

Usage: shrink.py --case CASE --out OUTCASE --test CMD [--max-runs N]
                 [--timeout S] [--keep-temp] [-v]

CASE is a case folder (input.yaml, optional config.yaml; see gen.py). CMD is
a shell command; every `{}` in it is replaced by a candidate case folder (or
the folder is appended when CMD has no `{}`), and a candidate is "still
interesting" when CMD exits 0. The original must be interesting.

Reductions, tried in this order and repeated until none applies:
  drop ClusterQueues (halves, then one at a time) with their LocalQueues and
  Workloads; drop Workloads (halves, then one at a time); drop a LocalQueue
  with its Workloads; remove a Cohort (its children move to its parent),
  take a ClusterQueue or Cohort out of its parent; drop a pod set; turn a
  pre-admitted Workload into a pending one; drop a resource from every
  object; drop a flavor from a quota holder; drop unused Cohorts, flavors,
  Namespaces, priority classes and LocalQueues; drop optional fields
  (borrowingLimit, lendingLimit, preemption policies, flavorFungibility,
  namespaceSelector -> {}, queueingStrategy, fair-sharing weights, minCount,
  nodeSelector, tolerations, priorities (a class becomes a plain priority),
  flavor labels and taints, Namespace
  labels, the Configuration's preemptionStrategies, the Configuration);
  halve quantities (one resource everywhere, then each value; >= 1) and pod
  counts (all, then each; >= 1).
Each candidate is made consistent (a pre-admitted Workload's
status.admission follows its pod sets; limits go when there is no parent;
lendingLimit <= nominalQuota; minCount <= count) and is skipped, without
running CMD, when it breaks a reference the original had resolved, when its
pre-admitted Workloads no longer fit Kueue's quota (if the original's did),
or when `cueue simulate` (CUEUE_BIN, else build/cueue) rejects it or warns
more than on the original.

Options:
  --case CASE     the case to shrink
  --out OUTCASE   where to write the smallest interesting case (a folder)
  --test CMD      the interestingness test (exit 0 = interesting)
  --max-runs N    at most N runs of CMD (default 300); the smallest case
                  found so far is written when the budget runs out
  --timeout S     a run of CMD that takes longer than S seconds counts as
                  not interesting (default: no limit)
  --keep-temp     keep the candidate folders (printed at the end)
  -v, --verbose   print each accepted reduction, and CMD's output
  -h, --help      this text
Prints one line: runs, objects before and after, where the case went.
Exit codes: 0 done, 1 the original case is not interesting, 2 bad usage.
"""

import argparse
import copy
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import casekit  # noqa: E402
from casekit import kind, name, ns, of_kind, spec, podsets  # noqa: E402

MEMORYISH = ("memory", "ephemeral-storage", "storage")


def fmt_total(r, v):
    """A quantity string for the Fraction v of resource r."""
    if v.denominator == 1:
        n = int(v)
        if r in MEMORYISH or r.startswith("hugepages-"):
            for suf, k in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
                if n and n % k == 0:
                    return "%d%s" % (n // k, suf)
        return "%d" % n
    m = v * 1000
    if m.denominator == 1:
        return "%dm" % int(m)
    return "%dm" % (int(m) + 1)


def quota_holders(docs):
    return of_kind(docs, "ClusterQueue") + of_kind(docs, "Cohort")


def all_rqs(docs):
    for d in quota_holders(docs):
        for rg in spec(d).get("resourceGroups") or []:
            for fq in rg.get("flavors") or []:
                for rq in fq.get("resources") or []:
                    yield d, rq


def requests_of(docs):
    for wl in of_kind(docs, "Workload"):
        for ps in podsets(wl):
            for c in casekit.containers(ps):
                req = (c.get("resources") or {}).get("requests")
                if isinstance(req, dict):
                    yield req


# ---------------------------------------------------------------- consistency


def fixup(docs, config):
    """Make a candidate consistent after a reduction (in place)."""
    for d in quota_holders(docs):
        s = spec(d)
        parent = s.get("cohortName") if kind(d) == "ClusterQueue" else s.get("parentName")
        for rg in s.get("resourceGroups") or []:
            for fq in rg.get("flavors") or []:
                for rq in fq.get("resources") or []:
                    if not parent:
                        rq.pop("borrowingLimit", None)
                        rq.pop("lendingLimit", None)
                    ll = casekit.parse_qty(rq.get("lendingLimit")) if "lendingLimit" in rq else None
                    nom = casekit.parse_qty(rq.get("nominalQuota", 0))
                    if ll is not None and nom is not None and ll > nom:
                        rq["lendingLimit"] = rq.get("nominalQuota", 0)
        if kind(d) == "ClusterQueue":
            p = s.get("preemption")
            if isinstance(p, dict):
                b = p.get("borrowWithinCohort")
                if b and b.get("policy", "Never") != "Never" and p.get("reclaimWithinCohort", "Never") == "Never":
                    p.pop("borrowWithinCohort")
                if not p:
                    s.pop("preemption")
            f = s.get("flavorFungibility")
            if isinstance(f, dict):
                if "preference" in f and not (
                    f.get("whenCanBorrow") == "TryNextFlavor" and f.get("whenCanPreempt") == "TryNextFlavor"
                ):
                    f.pop("preference")
                if not f:
                    s.pop("flavorFungibility")
            if "resourceGroups" in s and not s["resourceGroups"]:
                s.pop("resourceGroups")
        else:
            if "resourceGroups" in s and not s["resourceGroups"]:
                s.pop("resourceGroups")
    for f in of_kind(docs, "ResourceFlavor"):
        if "spec" in f and not f["spec"]:
            f.pop("spec")
    for wl in of_kind(docs, "Workload"):
        for ps in podsets(wl):
            if "minCount" in ps and ps["minCount"] > ps.get("count", 1):
                ps["minCount"] = ps.get("count", 1)
        adm = casekit.admission(wl)
        if not adm:
            continue
        pss = {ps.get("name"): ps for ps in podsets(wl)}
        psas = []
        for psa in adm.get("podSetAssignments") or []:
            ps = pss.get(psa.get("name"))
            if ps is None:
                continue
            cnt = min(psa.get("count", ps.get("count", 1)), ps.get("count", 1))
            if "count" in psa:
                psa["count"] = cnt
            req = casekit.podset_requests(ps)
            fl = {r: f for r, f in (psa.get("flavors") or {}).items() if r in req}
            psa["flavors"] = fl
            psa["resourceUsage"] = {r: fmt_total(r, q * cnt) for r, q in req.items()}
            psas.append(psa)
        if psas:
            adm["podSetAssignments"] = psas
        else:
            wl.pop("status")
    if config is not None and isinstance(config.get("fairSharing"), dict):
        if config["fairSharing"].get("preemptionStrategies") == []:
            config["fairSharing"].pop("preemptionStrategies")
    return docs, config


# ---------------------------------------------------------------- reductions
# Each yields (description, docs, config) candidates from the current state;
# the candidates are copies.


def _copy(state):
    return copy.deepcopy(state[0]), copy.deepcopy(state[1])


def _chunks(items):
    """Halves, quarters, ... then single items (for ddmin-like removal)."""
    n = len(items)
    size = n // 2
    seen = set()
    while size >= 1:
        for i in range(0, n, size):
            ch = tuple(items[i : i + size])
            if ch and ch not in seen and len(ch) < n:
                seen.add(ch)
                yield list(ch)
        if size == 1:
            break
        size //= 2
    if n == 1:
        yield list(items)


def _drop_cqs(docs, cqnames):
    lqs = {casekit.lq_key(lq) for lq in of_kind(docs, "LocalQueue") if spec(lq).get("clusterQueue") in cqnames}
    out = []
    for d in docs:
        if kind(d) == "ClusterQueue" and name(d) in cqnames:
            continue
        if kind(d) == "LocalQueue" and casekit.lq_key(d) in lqs:
            continue
        if kind(d) == "Workload" and casekit.wl_lq_key(d) in lqs:
            continue
        out.append(d)
    return out


def red_cqs(state):
    docs, config = state
    names = [name(d) for d in of_kind(docs, "ClusterQueue")]
    for ch in _chunks(names):
        d, c = _copy(state)
        yield "drop ClusterQueue(s) %s" % ",".join(ch), _drop_cqs(d, set(ch)), c


def red_workloads(state):
    docs, config = state
    keys = [(ns(d), name(d)) for d in of_kind(docs, "Workload")]
    for ch in _chunks(keys):
        drop = set(ch)
        d, c = _copy(state)
        d = [x for x in d if not (kind(x) == "Workload" and (ns(x), name(x)) in drop)]
        yield "drop Workload(s) %s" % ",".join("%s/%s" % k for k in ch), d, c


def red_lqs(state):
    docs, _ = state
    for lq in of_kind(docs, "LocalQueue"):
        key = casekit.lq_key(lq)
        d, c = _copy(state)
        d = [
            x
            for x in d
            if not (kind(x) == "LocalQueue" and casekit.lq_key(x) == key)
            and not (kind(x) == "Workload" and casekit.wl_lq_key(x) == key)
        ]
        yield "drop LocalQueue %s/%s with its Workloads" % key, d, c


def red_cohorts(state):
    docs, _ = state
    for co in of_kind(docs, "Cohort"):
        cn = name(co)
        parent = spec(co).get("parentName")
        d, c = _copy(state)
        out = []
        for x in d:
            if kind(x) == "Cohort" and name(x) == cn:
                continue
            s = spec(x)
            for field in ("cohortName", "parentName"):
                if kind(x) in ("ClusterQueue", "Cohort") and s.get(field) == cn:
                    if parent:
                        s[field] = parent
                    else:
                        s.pop(field)
            out.append(x)
        yield "remove Cohort %s (children to %s)" % (cn, parent or "none"), out, c
    for i, x in enumerate(docs):
        field = {"ClusterQueue": "cohortName", "Cohort": "parentName"}.get(kind(x))
        if field and spec(x).get(field):
            d, c = _copy(state)
            d[i]["spec"].pop(field)
            yield "take %s %s out of %s" % (kind(x), name(x), spec(x)[field]), d, c


def red_podsets(state):
    docs, _ = state
    for i, x in enumerate(docs):
        if kind(x) != "Workload":
            continue
        pss = podsets(x)
        if len(pss) > 1:
            for j in range(len(pss)):
                d, c = _copy(state)
                del d[i]["spec"]["podSets"][j]
                yield "drop pod set %s of %s" % (pss[j].get("name"), name(x)), d, c
        if "status" in x:
            d, c = _copy(state)
            d[i].pop("status")
            yield "make %s pending" % name(x), d, c


def scenario_resources(docs):
    out = []
    for _, rq in all_rqs(docs):
        if rq.get("name") not in out:
            out.append(rq.get("name"))
    for req in requests_of(docs):
        for r in req:
            if r not in out:
                out.append(r)
    return out


def red_resources(state):
    docs, _ = state
    res = scenario_resources(docs)
    if len(res) < 2:
        return
    for r in res:
        d, c = _copy(state)
        for x in quota_holders(d):
            s = spec(x)
            rgs = []
            for rg in s.get("resourceGroups") or []:
                rg["coveredResources"] = [y for y in rg.get("coveredResources") or [] if y != r]
                for fq in rg.get("flavors") or []:
                    fq["resources"] = [rq for rq in fq.get("resources") or [] if rq.get("name") != r]
                if rg["coveredResources"]:
                    rgs.append(rg)
            if "resourceGroups" in s:
                s["resourceGroups"] = rgs
        for req in requests_of(d):
            req.pop(r, None)
        for wl in of_kind(d, "Workload"):
            for psa in (casekit.admission(wl) or {}).get("podSetAssignments") or []:
                (psa.get("flavors") or {}).pop(r, None)
        yield "drop resource %s everywhere" % r, d, c


def red_flavor_refs(state):
    docs, _ = state
    for i, x in enumerate(docs):
        if kind(x) not in ("ClusterQueue", "Cohort"):
            continue
        for gi, rg in enumerate(spec(x).get("resourceGroups") or []):
            fqs = rg.get("flavors") or []
            if len(fqs) < 2 and kind(x) == "ClusterQueue":
                continue
            for fi, fq in enumerate(fqs):
                d, c = _copy(state)
                g = d[i]["spec"]["resourceGroups"]
                del g[gi]["flavors"][fi]
                if not g[gi]["flavors"]:
                    del g[gi]
                yield "drop flavor %s from %s %s" % (fq.get("name"), kind(x), name(x)), d, c


def used_names(docs):
    flavors, nss, wpcs, cohorts = set(), set(), set(), set()
    for x in quota_holders(docs):
        for rg in spec(x).get("resourceGroups") or []:
            for fq in rg.get("flavors") or []:
                flavors.add(fq.get("name"))
        cohorts.add(spec(x).get("cohortName") if kind(x) == "ClusterQueue" else spec(x).get("parentName"))
    for x in docs:
        if ns(x):
            nss.add(ns(x))
    for wl in of_kind(docs, "Workload"):
        pcr = spec(wl).get("priorityClassRef") or {}
        if pcr.get("group") == casekit.WPC_REF_GROUP:
            wpcs.add(pcr.get("name"))
        for psa in (casekit.admission(wl) or {}).get("podSetAssignments") or []:
            flavors.update((psa.get("flavors") or {}).values())
    return flavors, nss, wpcs, cohorts


def red_unused(state):
    docs, _ = state
    flavors, nss, wpcs, cohorts = used_names(docs)
    wl_lqs = {casekit.wl_lq_key(w) for w in of_kind(docs, "Workload")}
    for i, x in enumerate(docs):
        k = kind(x)
        unused = (
            (k == "ResourceFlavor" and name(x) not in flavors)
            or (k == "Namespace" and name(x) not in nss)
            or (k == "WorkloadPriorityClass" and name(x) not in wpcs)
            or (k == "Cohort" and name(x) not in cohorts)
            or (k == "LocalQueue" and casekit.lq_key(x) not in wl_lqs)
        )
        if unused:
            d, c = _copy(state)
            del d[i]
            yield "drop unused %s %s" % (k, name(x)), d, c


def _field_drops(x):
    """(description, path) of the optional fields of object x, a path being a
    list of keys below the object (the last one is removed, or emptied when
    it is ("namespaceSelector", {}))."""
    k = kind(x)
    s = spec(x)
    out = []
    if k == "ClusterQueue":
        p = s.get("preemption") or {}
        if p:
            out.append(["spec", "preemption"])
            for f in ("borrowWithinCohort", "withinClusterQueue", "reclaimWithinCohort"):
                if f in p:
                    out.append(["spec", "preemption", f])
            if "maxPriorityThreshold" in (p.get("borrowWithinCohort") or {}):
                out.append(["spec", "preemption", "borrowWithinCohort", "maxPriorityThreshold"])
        f = s.get("flavorFungibility") or {}
        if f:
            out.append(["spec", "flavorFungibility"])
            for g in ("preference", "whenCanBorrow", "whenCanPreempt"):
                if g in f:
                    out.append(["spec", "flavorFungibility", g])
        if s.get("namespaceSelector"):
            out.append(["spec", "namespaceSelector", {}])
        for g in ("queueingStrategy", "fairSharing"):
            if g in s:
                out.append(["spec", g])
    elif k == "Cohort":
        for g in ("fairSharing", "resourceGroups"):
            if g in s:
                out.append(["spec", g])
    elif k == "ResourceFlavor":
        for g in ("nodeTaints", "nodeLabels"):
            if g in s:
                out.append(["spec", g])
    elif k == "Namespace":
        if (x.get("metadata") or {}).get("labels"):
            out.append(["metadata", "labels"])
    elif k == "Workload":
        if "priorityClassRef" in s:
            out.append(["spec", "priorityClassRef"])
        elif "priority" in s:
            out.append(["spec", "priority"])
        for j, ps in enumerate(podsets(x)):
            if "minCount" in ps:
                out.append(["spec", "podSets", j, "minCount"])
            pod = (ps.get("template") or {}).get("spec") or {}
            for g in ("nodeSelector", "tolerations", "affinity"):
                if g in pod:
                    out.append(["spec", "podSets", j, "template", "spec", g])
    return out


def _apply_drop(x, path):
    if isinstance(path[-1], dict):
        node = x
        for p in path[:-2]:
            node = node[p]
        node[path[-2]] = {}
        return
    node = x
    for p in path[:-1]:
        node = node[p]
    node.pop(path[-1])
    # a priorityClassRef goes with the priority Kueue's API requires beside it
    if path == ["spec", "priorityClassRef"]:
        x["spec"].pop("priority", None)


def red_limits_all(state):
    docs, _ = state
    for lim in ("borrowingLimit", "lendingLimit"):
        if any(lim in rq for _, rq in all_rqs(docs)):
            d, c = _copy(state)
            for _, rq in all_rqs(d):
                rq.pop(lim, None)
            yield "drop every %s" % lim, d, c


def red_limits(state):
    docs, _ = state
    n = 0
    for x, rq in all_rqs(docs):
        for lim in ("borrowingLimit", "lendingLimit"):
            if lim in rq:
                d, c = _copy(state)
                m = 0
                for _, rq2 in all_rqs(d):
                    if m == n:
                        rq2.pop(lim)
                    m += 1
                yield "drop %s of %s in %s %s" % (lim, rq.get("name"), kind(x), name(x)), d, c
        n += 1


def red_fields(state):
    docs, config = state
    for i, x in enumerate(docs):
        for path in _field_drops(x):
            d, c = _copy(state)
            _apply_drop(d[i], path)
            label = ".".join(str(p) for p in path if not isinstance(p, dict))
            yield "drop %s of %s %s" % (label, kind(x), name(x)), d, c
    for i, x in enumerate(docs):
        if kind(x) == "Workload" and "priorityClassRef" in spec(x) and "priority" in spec(x):
            d, c = _copy(state)
            d[i]["spec"].pop("priorityClassRef")
            yield "give %s a plain priority instead of its class" % name(x), d, c
    for i, x in enumerate(docs):
        if kind(x) == "Configuration":
            d, c = _copy(state)
            del d[i]
            yield "drop the Configuration in input.yaml", d, c
    if config is not None:
        fs = config.get("fairSharing")
        if isinstance(fs, dict) and "preemptionStrategies" in fs:
            d, c = _copy(state)
            c["fairSharing"].pop("preemptionStrategies")
            yield "drop the Configuration's preemptionStrategies", d, c
        d, c = _copy(state)
        yield "drop the Configuration", d, None


def _qty_slots(docs):
    """Every halvable quantity: (resource, container dict, key)."""
    for _, rq in all_rqs(docs):
        for k in ("nominalQuota", "borrowingLimit", "lendingLimit"):
            if k in rq:
                yield rq.get("name"), rq, k
    for req in requests_of(docs):
        for r in list(req):
            yield r, req, r


def red_halve_resource(state):
    docs, _ = state
    for r in scenario_resources(docs):
        d, c = _copy(state)
        changed = False
        for res, holder, k in _qty_slots(d):
            if res == r:
                h = casekit.halve_qty(holder[k])
                if h is not None:
                    holder[k] = h
                    changed = True
        if changed:
            yield "halve every %s quantity" % r, d, c


def red_halve_counts(state):
    docs, _ = state
    d, c = _copy(state)
    changed = False
    for wl in of_kind(d, "Workload"):
        for ps in podsets(wl):
            h = casekit.halve_qty(ps.get("count", 1))
            if h is not None:
                ps["count"] = h
                changed = True
            if "minCount" in ps:
                h = casekit.halve_qty(ps["minCount"])
                if h is not None:
                    ps["minCount"] = h
    if changed:
        yield "halve every pod count", d, c


def red_halve_each(state):
    docs, _ = state
    slots = list(_qty_slots(docs))
    for n, (r, holder, k) in enumerate(slots):
        if casekit.halve_qty(holder[k]) is None:
            continue
        d, c = _copy(state)
        res, h2, k2 = list(_qty_slots(d))[n]
        h2[k2] = casekit.halve_qty(h2[k2])
        yield "halve %s %s (%s)" % (k, r, holder[k]), d, c
    for i, x in enumerate(docs):
        if kind(x) != "Workload":
            continue
        for j, ps in enumerate(podsets(x)):
            for k in ("count", "minCount"):
                if k in ps and casekit.halve_qty(ps[k]) is not None:
                    d, c = _copy(state)
                    p2 = d[i]["spec"]["podSets"][j]
                    p2[k] = casekit.halve_qty(p2[k])
                    yield "halve %s of %s/%s" % (k, name(x), ps.get("name")), d, c


REDUCTIONS = [
    red_cqs,
    red_workloads,
    red_lqs,
    red_cohorts,
    red_podsets,
    red_resources,
    red_flavor_refs,
    red_unused,
    red_limits_all,
    red_fields,
    red_limits,
    red_halve_resource,
    red_halve_counts,
    red_halve_each,
]


# ---------------------------------------------------------------- the search


class Shrinker:
    def __init__(self, docs, config, test, max_runs, timeout, tmp, verbose):
        self.test, self.max_runs, self.timeout = test, max_runs, timeout
        self.tmp, self.verbose = tmp, verbose
        self.runs = self.interesting_runs = self.invalid = 0
        self.seen = {}
        self.orig_refs = casekit.broken_refs(docs)
        self.orig_fit = casekit.preadmitted_fit(docs)
        rc, _, err = casekit.simulate(docs, config)
        self.orig_rc = rc
        self.orig_err = set(err.splitlines())
        self.n = 0

    def valid(self, docs, config):
        if not casekit.broken_refs(docs) <= self.orig_refs:
            return False
        if self.orig_fit and not casekit.preadmitted_fit(docs):
            return False
        for wl in of_kind(docs, "Workload"):
            if not podsets(wl) or sum(1 for ps in podsets(wl) if "minCount" in ps) > 1:
                return False
        if self.orig_rc == 0:
            rc, _, err = casekit.simulate(docs, config)
            if rc != 0 or not set(err.splitlines()) <= self.orig_err:
                return False
        return True

    def run_test(self, docs, config, header=None):
        self.n += 1
        path = os.path.join(self.tmp, "cand-%04d" % self.n)
        casekit.write_case(path, docs, config, header)
        if "{}" in self.test:
            cmd = self.test.replace("{}", shlex.quote(path))
        else:
            cmd = self.test + " " + shlex.quote(path)
        self.runs += 1
        out = None if self.verbose else subprocess.DEVNULL
        try:
            rc = subprocess.run(cmd, shell=True, stdout=out, stderr=out, timeout=self.timeout).returncode
        except subprocess.TimeoutExpired:
            rc = -1
        if rc == 0:
            self.interesting_runs += 1
        return rc == 0

    def check(self, docs, config):
        key = casekit.case_text(docs, config)
        if key in self.seen:
            return self.seen[key]
        if not self.valid(docs, config):
            self.invalid += 1
            self.seen[key] = False
            return False
        ok = self.run_test(docs, config)
        self.seen[key] = ok
        return ok

    def shrink(self, state):
        cur_key = casekit.case_text(*state)
        progress = True
        while progress and self.runs < self.max_runs:
            progress = False
            for red in REDUCTIONS:
                i = 0
                while self.runs < self.max_runs:
                    cands = list(red(state))
                    if i >= len(cands):
                        break
                    desc, d, c = cands[i]
                    d, c = fixup(d, c)
                    key = casekit.case_text(d, c)
                    if key == cur_key or not self.check(d, c):
                        i += 1
                        continue
                    if self.verbose:
                        print("shrink.py: %s (%d objects)" % (desc, casekit.count_objects(d, c)), file=sys.stderr)
                    state, cur_key = (d, c), key
                    progress = True
        return state


def read_header(path):
    lines = []
    with open(os.path.join(path, "input.yaml")) as f:
        for line in f:
            if not line.startswith("#"):
                break
            lines.append(line[1:].strip())
    return lines


def describe(docs):
    return "%d Workloads, %d ClusterQueues" % (len(of_kind(docs, "Workload")), len(of_kind(docs, "ClusterQueue")))


def main(argv):
    ap = argparse.ArgumentParser(prog="shrink.py", add_help=False)
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("--case")
    ap.add_argument("--out")
    ap.add_argument("--test")
    ap.add_argument("--max-runs", type=int, default=300)
    ap.add_argument("--timeout", type=float)
    ap.add_argument("--keep-temp", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    try:
        a = ap.parse_args(argv)
    except SystemExit:
        return 2
    if a.help:
        print(__doc__.strip())
        return 0
    if not a.case or not a.out or not a.test:
        print("usage: shrink.py --case CASE --out OUTCASE --test CMD [--max-runs N] (-h for help)", file=sys.stderr)
        return 2
    if not os.path.exists(os.path.join(a.case, "input.yaml")):
        print("shrink.py: %s/input.yaml: not found" % a.case, file=sys.stderr)
        return 2
    docs, config = casekit.load_case(a.case)
    tmp = tempfile.mkdtemp(prefix="cueue-shrink-")
    try:
        sh = Shrinker(docs, config, a.test, a.max_runs, a.timeout, tmp, a.verbose)
        if sh.orig_rc != 0:
            print("shrink.py: note: cueue simulate rejects the original case; candidates are not checked with it",
                  file=sys.stderr)
        if not sh.run_test(docs, config):
            print("shrink.py: the original case is not interesting (the test did not exit 0)", file=sys.stderr)
            return 1
        before = casekit.count_objects(docs, config)
        bdesc = describe(docs)
        state = sh.shrink(fixup(*copy.deepcopy((docs, config))))
        d, c = state
        header = ["shrunk by bench/kueue/shrink.py from %s (%d runs)" % (os.path.abspath(a.case), sh.runs)]
        header += ["original: " + h for h in read_header(a.case)]
        if os.path.isdir(a.out):
            for f in ("input.yaml", "config.yaml"):
                if os.path.exists(os.path.join(a.out, f)):
                    os.unlink(os.path.join(a.out, f))
        casekit.write_case(a.out, d, c, "\n".join(header))
        print(
            "shrink.py: %d runs (%d interesting, %d candidates skipped as invalid)%s; objects %d -> %d (%s -> %s); "
            "wrote %s"
            % (
                sh.runs,
                sh.interesting_runs,
                sh.invalid,
                ", run budget spent" if sh.runs >= a.max_runs else "",
                before,
                casekit.count_objects(d, c),
                bdesc,
                describe(d),
                a.out,
            )
        )
        return 0
    finally:
        if a.keep_temp:
            print("shrink.py: candidates kept in %s" % tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
