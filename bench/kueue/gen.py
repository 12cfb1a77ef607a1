#!/usr/bin/python3
"""Random scenarios for the differential test against Kueue (bench/diff-kueue.sh).

Usage: gen.py --seed S --count N --out DIR [--fair-share-ratio R] [--check] [--stats]

Writes DIR/r<S>-<i>/ for i in 0..N-1, each a case folder of the harness:
  input.yaml   Namespaces, WorkloadPriorityClasses, ResourceFlavors, Cohorts
               (parents first), ClusterQueues, LocalQueues and Workloads
               (kueue.x-k8s.io/v1beta2) in creation order; every Workload has
               a distinct metadata.creationTimestamp, 1 s apart in file order;
               pre-admitted ones carry status.admission and the QuotaReserved
               and Admitted conditions and come first
  config.yaml  only when fair sharing is on: a config.kueue.x-k8s.io/v1beta2
               Configuration with fairSharing (sometimes preemptionStrategies)
Scenario i depends only on S and i: the same seed and count give
byte-identical files, and a larger count only adds scenarios.

Options:
  --seed S              the seed (an integer)
  --count N             how many scenarios
  --out DIR             where to write them (created; existing r<S>-<i>
                        folders are overwritten)
  --fair-share-ratio R  the probability that a scenario has fair sharing on
                        (default 1/3; a fraction like 1/3 or a decimal)
  --check               run `cueue simulate -o json` on each scenario
                        (CUEUE_BIN or build/cueue): fail on a non-zero exit
                        or any message on stderr
  --stats               with --check: print what happened across the batch
                        (admitted, pending, preempted, borrowing)
  -h, --help            this text
Exit codes: 0 done, 1 a --check failed, 2 bad command line.
"""

import argparse
import datetime
import json
import os
import random
import sys
from fractions import Fraction

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import casekit  # noqa: E402

API = "kueue.x-k8s.io/v1beta2"
CONFIG_API = "config.kueue.x-k8s.io/v1beta2"
GPU = "nvidia.com/gpu"
T0 = datetime.datetime(2025, 6, 1, 10, 0, 0)

# per resource: per-pod request range, nominal quota choices (per flavor)
PER_POD = {"cpu": [(1, 5), (2, 3), (3, 1)], "memory": [(1, 3), (2, 3), (4, 1)], GPU: [(1, 3), (2, 1)]}
NOMINAL = {"cpu": [0, 2, 3, 4, 4, 5, 6, 8], "memory": [0, 2, 4, 6, 8, 8, 12], GPU: [0, 1, 2, 2, 3, 4, 4]}
LIMIT = {"cpu": [0, 1, 2, 4], "memory": [0, 2, 4, 8], GPU: [0, 1, 2]}
COHORT_NOMINAL = {"cpu": [1, 2, 4], "memory": [2, 4, 8], GPU: [1, 2]}


def qty(r, n):
    return "%dGi" % n if r == "memory" else "%d" % n


def stamp(k):
    return (T0 + datetime.timedelta(seconds=k)).strftime("%Y-%m-%dT%H:%M:%SZ")


def obj(k, n, namespace=None, **fields):
    md = {"name": n}
    if namespace:
        md["namespace"] = namespace
    d = {"apiVersion": "v1" if k == "Namespace" else API, "kind": k, "metadata": md}
    d.update(fields)
    return d


def weighted(rng, pairs):
    total = sum(w for _, w in pairs)
    x = rng.random() * total
    for v, w in pairs:
        x -= w
        if x < 0:
            return v
    return pairs[-1][0]


def selector_matches(sel, labels):
    if not sel:
        return True
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        k, op, vals = e["key"], e["operator"], e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


class Gen:
    def __init__(self, seed, index, fs_ratio):
        self.rng = random.Random("cueue-gen/%d/%d" % (seed, index))
        self.seed, self.index, self.fs_ratio = seed, index, fs_ratio

    # ------------------------------------------------------------ pieces

    def resources(self):
        return weighted(
            self.rng,
            [
                (["cpu"], 3),
                (["cpu", "memory"], 3),
                (["cpu", GPU], 2),
                (["cpu", "memory", GPU], 3),
                ([GPU], 1),
            ],
        )

    def flavors(self):
        rng = self.rng
        n = weighted(rng, [(1, 2), (2, 4), (3, 3)])
        names = ["on-demand", "spot", "reserved"][:n]
        out = []
        for i, fn in enumerate(names):
            s = {}
            if rng.random() < 0.5:
                labels = {"pool": fn}
                if rng.random() < 0.3:
                    labels["zone"] = rng.choice(["z1", "z2"])
                s["nodeLabels"] = labels
            if rng.random() < (0.1 if i == 0 else 0.3):
                s["nodeTaints"] = [{"key": "dedicated", "value": fn, "effect": "NoSchedule"}]
            out.append((fn, s))
        return out

    def groups(self, res, flavor_names):
        """[(covered resources, flavor names)] shared by every quota holder."""
        rng = self.rng
        if GPU in res and len(res) > 1 and len(flavor_names) >= 2 and rng.random() < 0.5:
            k = rng.randint(1, len(flavor_names) - 1)
            return [([r for r in res if r != GPU], flavor_names[:k]), ([GPU], flavor_names[k:])]
        return [(list(res), list(flavor_names))]

    def cohort_tree(self, ncq):
        """(cohorts [(name, parent)], parent per CQ index or None)."""
        rng = self.rng
        shape = weighted(rng, [("none", 1), ("flat", 4), ("two", 4), ("three", 3)])
        cohorts = []
        if shape == "none":
            return cohorts, [None] * ncq, shape
        cohorts.append(("co-root", None))
        if shape in ("two", "three"):
            for c in ["co-a", "co-b"][: rng.randint(1, 2)]:
                cohorts.append((c, "co-root"))
        if shape == "three":
            mids = [c for c, p in cohorts if p == "co-root"]
            for m in mids[: rng.randint(1, len(mids))]:
                cohorts.append((m + "1", m))
        names = [c for c, _ in cohorts]
        leaves = [c for c in names if not any(p == c for _, p in cohorts)]
        parents = []
        for i in range(ncq):
            # the first CQs go to the leaves so that every leaf cohort has one
            if i < len(leaves):
                parents.append(leaves[i])
            elif rng.random() < 0.1:
                parents.append(None)
            else:
                parents.append(rng.choice(names))
        rng.shuffle(parents)
        return cohorts, parents, shape

    def quota_groups(self, groups, has_parent, cohort=False):
        rng = self.rng
        rgs = []
        for covered, fls in groups:
            if cohort:
                chosen = rng.sample(fls, rng.randint(1, len(fls)))
                chosen.sort(key=fls.index)
            else:
                chosen = rng.sample(fls, rng.randint(1, len(fls)))
                if rng.random() < 0.6:
                    chosen.sort(key=fls.index)
            fqs = []
            for fn in chosen:
                rqs = []
                for r in covered:
                    nom = rng.choice(COHORT_NOMINAL[r] if cohort else NOMINAL[r])
                    rq = {"name": r, "nominalQuota": qty(r, nom)}
                    if has_parent and rng.random() < 0.25:
                        rq["borrowingLimit"] = qty(r, rng.choice(LIMIT[r]))
                    if has_parent and rng.random() < 0.25:
                        rq["lendingLimit"] = qty(r, rng.randint(0, nom))
                    rqs.append(rq)
                fqs.append({"name": fn, "resources": rqs})
            rgs.append({"coveredResources": list(covered), "flavors": fqs})
        return rgs

    def weight(self):
        return weighted(self.rng, [("1", 3), ("2", 3), ("3", 1), ("0.5", 2), ("0", 1)])

    def preemption(self, prios):
        rng = self.rng
        p = {}
        w = weighted(rng, [(None, 1), ("Never", 1), ("LowerPriority", 3), ("LowerOrNewerEqualPriority", 2)])
        if w:
            p["withinClusterQueue"] = w
        r = weighted(rng, [(None, 1), ("Never", 1), ("LowerPriority", 2), ("Any", 3)])
        if r:
            p["reclaimWithinCohort"] = r
        if r in ("LowerPriority", "Any") and rng.random() < 0.4:
            b = {"policy": "LowerPriority"}
            if rng.random() < 0.7:
                b["maxPriorityThreshold"] = rng.choice(prios)
            p["borrowWithinCohort"] = b
        elif rng.random() < 0.05:
            p["borrowWithinCohort"] = {"policy": "Never"}
        return p

    def fungibility(self):
        rng = self.rng
        f = {}
        b = rng.choice([None, "MayStopSearch", "TryNextFlavor"])
        p = rng.choice([None, "MayStopSearch", "TryNextFlavor"])
        if b:
            f["whenCanBorrow"] = b
        if p:
            f["whenCanPreempt"] = p
        if b == "TryNextFlavor" and p == "TryNextFlavor" and rng.random() < 0.6:
            f["preference"] = rng.choice(["BorrowingOverPreemption", "PreemptionOverBorrowing"])
        return f

    def namespace_selector(self, namespaces):
        rng = self.rng
        teams = [lab["team"] for _, lab in namespaces]
        kind = weighted(rng, [("all", 7), ("labels", 1.5), ("expr", 1.5)])
        if kind == "all":
            return {}
        if kind == "labels":
            return {"matchLabels": {"team": rng.choice(teams)}}
        e = weighted(rng, [("in", 2), ("notin", 1), ("exists", 1)])
        if e == "in":
            vals = sorted(rng.sample(teams, rng.randint(1, len(teams))))
            return {"matchExpressions": [{"key": "team", "operator": "In", "values": vals}]}
        if e == "notin":
            return {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["silver"]}]}
        return {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}

    # ------------------------------------------------------------ the scenario

    def scenario(self):
        rng = self.rng
        fair = rng.random() < self.fs_ratio
        res = self.resources()
        flavors = self.flavors()
        fnames = [fn for fn, _ in flavors]
        groups = self.groups(res, fnames)
        ncq = rng.randint(2, 6)
        cohorts, cq_parent, shape = self.cohort_tree(ncq)

        # namespaces
        nns = rng.randint(1, 3)
        namespaces = []
        for t in ["a", "b", "c"][:nns]:
            lab = {"team": t}
            if rng.random() < 0.6:
                lab["tier"] = rng.choice(["gold", "silver"])
            namespaces.append(("ns-" + t, lab))

        # priorities
        nwpc = weighted(rng, [(0, 2), (1, 1), (2, 2), (3, 2)])
        wpc_vals = sorted(rng.sample([1, 10, 100, 1000], nwpc))
        wpcs = list(zip(["low", "mid", "high"][-nwpc:] if nwpc else [], wpc_vals))
        if nwpc == 1:
            wpcs = [(rng.choice(["low", "high"]), wpc_vals[0])]
        prio_pool = sorted(set([0, 5, 50] + wpc_vals))

        docs = []
        for n, lab in namespaces:
            docs.append(obj("Namespace", n, **{}))
            docs[-1]["metadata"]["labels"] = dict(lab)
        for n, v in wpcs:
            docs.append(obj("WorkloadPriorityClass", n, value=v))
        for fn, s in flavors:
            d = obj("ResourceFlavor", fn)
            if s:
                d["spec"] = s
            docs.append(d)

        # cohorts, parents first (the tree's list is already in that order)
        for cn, parent in cohorts:
            s = {}
            if parent:
                s["parentName"] = parent
            if rng.random() < 0.35:
                s["resourceGroups"] = self.quota_groups(groups, parent is not None, cohort=True)
            if fair and rng.random() < 0.5:
                s["fairSharing"] = {"weight": self.weight()}
            if s or rng.random() < 0.7:
                d = obj("Cohort", cn)
                d["spec"] = s
                docs.append(d)

        cqs = []
        for i in range(ncq):
            cn = "cq-%d" % i
            s = {"namespaceSelector": self.namespace_selector(namespaces)}
            if cq_parent[i]:
                s["cohortName"] = cq_parent[i]
            qs = weighted(rng, [(None, 3), ("StrictFIFO", 3.5), ("BestEffortFIFO", 3.5)])
            if qs:
                s["queueingStrategy"] = qs
            s["resourceGroups"] = self.quota_groups(groups, cq_parent[i] is not None)
            if rng.random() < 0.85:
                s["preemption"] = self.preemption(prio_pool)
            if rng.random() < 0.4:
                f = self.fungibility()
                if f:
                    s["flavorFungibility"] = f
            if fair and rng.random() < 0.5:
                s["fairSharing"] = {"weight": self.weight()}
            d = obj("ClusterQueue", cn, spec=s)
            docs.append(d)
            cqs.append(d)

        # local queues: one per CQ, in a namespace its selector admits when
        # there is one; sometimes a second one in another namespace
        ns_labels = dict(namespaces)
        lqs = []
        for cq in cqs:
            sel = cq["spec"]["namespaceSelector"]
            ok = [n for n, lab in namespaces if selector_matches(sel, lab)]
            first = rng.choice(ok) if ok and rng.random() < 0.9 else rng.choice(list(ns_labels))
            picks = [first]
            others = [n for n in ns_labels if n != first]
            if others and rng.random() < 0.2:
                picks.append(rng.choice(others))
            for n in picks:
                lq = obj("LocalQueue", "lq-" + casekit.name(cq), namespace=n, spec={"clusterQueue": casekit.name(cq)})
                docs.append(lq)
                lqs.append((lq, selector_matches(sel, ns_labels[n])))

        # workloads: the pre-admitted ones first (older), then pending ones
        nwl = rng.randint(max(2, ncq - 1), 10)
        npre = sum(1 for _ in range(nwl) if rng.random() < 0.45)
        model_docs = list(docs)
        model = casekit.QuotaModel(model_docs)
        cq_by_name = {casekit.name(c): c for c in cqs}
        flavor_spec = dict(flavors)
        wls = []
        held = set()
        hot = set(rng.sample([casekit.name(c) for c in cqs], rng.randint(1, 2)))
        for k in range(nwl):
            pre = k < npre
            if pre:
                cands = [lq for lq, ok in lqs if ok]
                # mostly into one or two "hot" ClusterQueues, to fill them
                hot_c = [lq for lq in cands if lq["spec"]["clusterQueue"] in hot]
                if hot_c and rng.random() < 0.7:
                    lq = rng.choice(hot_c)
                else:
                    lq = rng.choice(cands) if cands else rng.choice(lqs)[0]
            elif held and rng.random() < 0.6:
                # contention: a pending one where pre-admitted ones hold quota
                lq = rng.choice([lq for lq, _ in lqs if lq["spec"]["clusterQueue"] in held])
            else:
                lq = rng.choice(lqs)[0]
            cqn = lq["spec"]["clusterQueue"]
            wl = self.workload(k, lq, res, flavors, prio_pool, wpcs, pre)
            if pre and cands:
                adm = self.assign(wl, cq_by_name[cqn], flavor_spec, model)
                if adm is not None:
                    admn, use = adm
                    model.admit(cqn, use)
                    held.add(cqn)
                    wl["status"] = admn
            wls.append(wl)
        # pre-admitted first, then the rest, in generation order; stamps follow
        wls = [w for w in wls if "status" in w] + [w for w in wls if "status" not in w]
        for k, wl in enumerate(wls):
            wl["metadata"]["name"] = "w-%d" % k
            wl["metadata"]["creationTimestamp"] = stamp(k)
            if "status" in wl:
                for c in wl["status"]["conditions"]:
                    c["lastTransitionTime"] = stamp(k)
            docs.append(wl)

        config = None
        if fair:
            config = {"apiVersion": CONFIG_API, "kind": "Configuration", "fairSharing": {}}
            strat = weighted(
                rng,
                [
                    (None, 3),
                    (["LessThanOrEqualToFinalShare", "LessThanInitialShare"], 1),
                    (["LessThanOrEqualToFinalShare"], 1),
                    (["LessThanInitialShare"], 1),
                ],
            )
            if strat:
                config["fairSharing"]["preemptionStrategies"] = strat

        npre = sum(1 for w in wls if "status" in w)
        header = (
            "generated by bench/kueue/gen.py --seed %d (scenario %d)\n"
            "fair sharing %s; cohort tree %s; resources %s; flavors %s;\n"
            "%d ClusterQueues, %d Workloads (%d pre-admitted)"
            % (
                self.seed,
                self.index,
                "on" if fair else "off",
                shape,
                ",".join(res),
                ",".join(fnames),
                ncq,
                len(wls),
                npre,
            )
        )
        return docs, config, header

    def workload(self, k, lq, res, flavors, prio_pool, wpcs, pre):
        rng = self.rng
        nps = 1 if rng.random() < 0.8 else 2
        pss = []
        for j in range(nps):
            cnt = weighted(rng, [(1, 5), (2, 3), (3, 1.5), (4, 0.5)])
            req = {}
            for r in res:
                if r == GPU and len(res) > 1:
                    if rng.random() < 0.6:
                        req[r] = weighted(rng, PER_POD[r])
                elif rng.random() < 0.8:
                    req[r] = weighted(rng, PER_POD[r])
            if not req:
                r = rng.choice(res)
                req[r] = weighted(rng, PER_POD[r])
            pod = {}
            labelled = [(fn, s["nodeLabels"]) for fn, s in flavors if "nodeLabels" in s]
            if labelled and rng.random() < 0.2:
                fn, lab = rng.choice(labelled)
                key = rng.choice(sorted(lab))
                pod["nodeSelector"] = {key: lab[key]}
            tols = []
            for fn, s in flavors:
                if "nodeTaints" in s and rng.random() < 0.65:
                    tols.append({"key": "dedicated", "operator": "Equal", "value": fn, "effect": "NoSchedule"})
            if any("nodeTaints" in s for _, s in flavors) and not tols and rng.random() < 0.15:
                tols.append({"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"})
            if tols:
                pod["tolerations"] = tols
            pod["containers"] = [
                {"name": "c", "image": "t", "resources": {"requests": {r: qty(r, v) for r, v in req.items()}}}
            ]
            ps = {"name": "main" if j == 0 else "worker", "count": cnt}
            pss.append((ps, pod))
        # partial admission: at most one pod set may have minCount
        if rng.random() < 0.25:
            big = [ps for ps, _ in pss if ps["count"] >= 2]
            if big:
                ps = rng.choice(big)
                ps["minCount"] = rng.randint(1, ps["count"] - 1)
        s = {"queueName": casekit.name(lq)}
        mode = weighted(rng, [("class", 4 if wpcs else 0), ("plain", 3.5), ("none", 1.5)])
        if mode == "class":
            choices = wpcs
            if pre and rng.random() < 0.85:
                choices = wpcs[: max(1, (len(wpcs) + 1) // 2)]
            elif not pre and rng.random() < 0.75:
                choices = wpcs[len(wpcs) // 2 :]
            n, v = rng.choice(choices)
            s["priorityClassRef"] = {"group": casekit.WPC_REF_GROUP, "kind": "WorkloadPriorityClass", "name": n}
            s["priority"] = v
        elif mode == "plain":
            pool = prio_pool
            if pre and rng.random() < 0.85:
                pool = prio_pool[: max(1, (len(prio_pool) + 1) // 2)]
            elif not pre and rng.random() < 0.75:
                pool = prio_pool[len(prio_pool) // 2 :]
            s["priority"] = rng.choice(pool)
        s["podSets"] = []
        for ps, pod in pss:
            d = dict(ps)
            d["template"] = {"spec": pod}
            s["podSets"].append(d)
        return obj("Workload", "w-%d" % k, namespace=casekit.ns(lq), spec=s)

    def assign(self, wl, cq, flavor_spec, model):
        """A status for `wl` admitted in `cq` the way Kueue could have done it
        (first eligible flavor per resource group that fits, full counts),
        and its usage; None when it does not fit."""
        use = {}
        psas = []
        for ps in casekit.podsets(wl):
            pod = ps["template"]["spec"]
            req = casekit.podset_requests(ps)
            cnt = ps["count"]
            fl = {}
            for rg in cq["spec"]["resourceGroups"]:
                rs = [r for r in rg["coveredResources"] if r in req]
                if not rs:
                    continue
                chosen = None
                for fq in rg["flavors"]:
                    fn = fq["name"]
                    if not self.eligible(pod, flavor_spec.get(fn) or {}):
                        continue
                    trial = dict(use)
                    for r in rs:
                        trial[(fn, r)] = trial.get((fn, r), 0) + req[r] * cnt
                    if model.fits(casekit.name(cq), trial):
                        chosen = fn
                        use = trial
                        break
                if chosen is None:
                    return None
                for r in rs:
                    fl[r] = chosen
            if any(r not in fl for r in req):
                return None
            usage = {r: self.fmt_total(r, req[r] * cnt) for r in req}
            psas.append({"name": ps["name"], "count": cnt, "flavors": fl, "resourceUsage": usage})
        cqn = casekit.name(cq)
        status = {
            "admission": {"clusterQueue": cqn, "podSetAssignments": psas},
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "message": "Quota reserved in ClusterQueue %s" % cqn,
                    "lastTransitionTime": None,
                },
                {
                    "type": "Admitted",
                    "status": "True",
                    "reason": "Admitted",
                    "message": "The workload is admitted",
                    "lastTransitionTime": None,
                },
            ],
        }
        return status, use

    @staticmethod
    def fmt_total(r, v):
        if r == "memory":
            return "%dGi" % (v / (1 << 30))
        return "%d" % v

    @staticmethod
    def eligible(pod, fspec):
        """Strictly eligible: every taint tolerated, every nodeSelector label
        on the flavor (a subset of what Kueue's flavor assigner accepts)."""
        for t in fspec.get("nodeTaints") or []:
            ok = False
            for tol in pod.get("tolerations") or []:
                if tol.get("key") != t["key"] or tol.get("effect") not in (None, t["effect"]):
                    continue
                if tol.get("operator") == "Exists" or tol.get("value") == t.get("value"):
                    ok = True
            if not ok:
                return False
        labels = fspec.get("nodeLabels") or {}
        for k, v in (pod.get("nodeSelector") or {}).items():
            if labels.get(k) != v:
                return False
        return True


def generate(seed, index, fs_ratio):
    return Gen(seed, index, fs_ratio).scenario()


def parse_ratio(s):
    try:
        r = Fraction(s)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError("not a number or fraction: %r" % s)
    if r < 0 or r > 1:
        raise argparse.ArgumentTypeError("must be between 0 and 1: %s" % s)
    return float(r)


def main(argv):
    ap = argparse.ArgumentParser(
        prog="gen.py",
        usage="gen.py --seed S --count N --out DIR [--fair-share-ratio R] [--check] [--stats]",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--count", type=int)
    ap.add_argument("--out")
    ap.add_argument("--fair-share-ratio", type=parse_ratio, default=1 / 3)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--stats", action="store_true")
    a = ap.parse_args(argv)
    if a.help:
        print(__doc__.strip())
        return 0
    if a.seed is None or a.count is None or not a.out or a.count < 0:
        ap.print_usage(sys.stderr)
        print("gen.py: --seed, --count (>= 0) and --out are required", file=sys.stderr)
        return 2
    failed = 0
    stats = {"scenarios": 0, "fair": 0, "admitted": 0, "pending": 0, "preempted": 0, "borrowing": 0, "partial": 0}
    for i in range(a.count):
        docs, config, header = generate(a.seed, i, a.fair_share_ratio)
        path = os.path.join(a.out, "r%d-%d" % (a.seed, i))
        casekit.write_case(path, docs, config, header)
        if not a.check:
            continue
        rc, out, err = casekit.simulate(docs, config)
        if rc != 0 or err.strip():
            failed += 1
            print("gen.py: %s: cueue simulate exit %d: %s" % (path, rc, err.strip()), file=sys.stderr)
            continue
        if a.stats:
            collect(stats, json.loads(out), docs, config)
    if a.stats and a.check:
        print(
            "%d scenarios: fair sharing %d; with >=1 admitted %d, pending %d, preempted %d, borrowing %d, "
            "partially admitted %d" % tuple([stats["scenarios"]] + [stats[k] for k in list(stats)[1:]])
        )
    return 1 if failed else 0


def collect(stats, res, docs, config):
    stats["scenarios"] += 1
    stats["fair"] += config is not None
    wls = res.get("workloads") or []
    full = {}
    for d in casekit.of_kind(docs, "Workload"):
        full["%s/%s" % (casekit.ns(d), casekit.name(d))] = {ps["name"]: ps["count"] for ps in casekit.podsets(d)}
    stats["admitted"] += any(w.get("admitted") for w in wls)
    stats["pending"] += any(not w.get("admitted") for w in wls)
    stats["preempted"] += any((w.get("evictions") or 0) > 0 for w in wls)
    stats["partial"] += any(
        w.get("admitted") and any(ps.get("count") != full.get(w["name"], {}).get(ps.get("name")) for ps in w["podSets"])
        for w in wls
    )
    stats["borrowing"] += any(
        (casekit.parse_qty(u.get("borrowed")) or 0) > 0 for cq in res.get("clusterQueues") or [] for u in cq.get("usage") or []
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
