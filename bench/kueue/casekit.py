"""Shared helpers of bench/kueue/gen.py and bench/kueue/shrink.py.

A "case" is a folder with input.yaml (a YAML stream of kueue.x-k8s.io
v1beta2 objects and v1 Namespaces, in creation order) and optionally
config.yaml (one config.kueue.x-k8s.io Configuration). This module reads
and writes cases, checks that their references resolve, models Kueue's
hierarchical quota (to tell whether pre-admitted Workloads fit, as Kueue
would have admitted them) and runs `cueue simulate` on a case.

Python 3 standard library and PyYAML only.
"""

import os
import re
import subprocess
import tempfile
from fractions import Fraction

import yaml

KUEUE_GROUP = "kueue.x-k8s.io"
WPC_REF_GROUP = "kueue.x-k8s.io"

# ---------------------------------------------------------------- quantities

_SUFFIX = {
    "": Fraction(1),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
}
_QTY = re.compile(r"^([0-9]+(?:\.[0-9]*)?)([a-zA-Z]*)$")


def parse_qty(v):
    """A Kubernetes quantity (int or string) as a Fraction; None if unparsable."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return Fraction(v)
    if isinstance(v, float):
        return Fraction(v).limit_denominator(10**9)
    m = _QTY.match(str(v).strip())
    if not m or m.group(2) not in _SUFFIX:
        return None
    return Fraction(m.group(1)) * _SUFFIX[m.group(2)]


def halve_qty(v, minimum=1):
    """v with its number halved (floor, at least `minimum`), same suffix;
    None when it cannot shrink (or is not a plain integer quantity)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        n = max(minimum, v // 2)
        return n if n < v else None
    m = re.match(r"^([0-9]+)([a-zA-Z]*)$", str(v).strip())
    if not m:
        return None
    n = int(m.group(1))
    h = max(minimum, n // 2)
    if h >= n:
        return None
    return "%d%s" % (h, m.group(2))


# ---------------------------------------------------------------- case I/O


def load_case(path):
    """(docs, config) of the case folder `path`; config is a dict or None."""
    with open(os.path.join(path, "input.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    config = None
    cp = os.path.join(path, "config.yaml")
    if os.path.exists(cp):
        with open(cp) as f:
            cdocs = [d for d in yaml.safe_load_all(f) if d is not None]
        if cdocs:
            config = cdocs[0]
    return docs, config


def dump_docs(docs, header=None):
    # every document starts with "---", so that `cat config.yaml input.yaml`
    # is one valid stream
    text = yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=None, width=100, explicit_start=True)
    if header:
        text = "".join("# %s\n" % line for line in header.splitlines()) + text
    return text


def write_case(path, docs, config, header=None):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "input.yaml"), "w") as f:
        f.write(dump_docs(docs, header))
    cp = os.path.join(path, "config.yaml")
    if config is not None:
        with open(cp, "w") as f:
            f.write(dump_docs([config]))
    elif os.path.exists(cp):
        os.unlink(cp)


def case_text(docs, config):
    """One YAML stream, Configuration first: what `cueue simulate` reads."""
    return (dump_docs([config]) if config is not None else "") + dump_docs(docs)


# ---------------------------------------------------------------- object access


def kind(d):
    return d.get("kind")


def name(d):
    return (d.get("metadata") or {}).get("name")


def ns(d):
    return (d.get("metadata") or {}).get("namespace")


def of_kind(docs, k):
    return [d for d in docs if kind(d) == k]


def spec(d):
    s = d.get("spec")
    return s if isinstance(s, dict) else {}


def podsets(wl):
    return spec(wl).get("podSets") or []


def containers(ps):
    return (((ps.get("template") or {}).get("spec") or {}).get("containers")) or []


def podset_requests(ps):
    """{resource: Fraction} per pod (sum over containers)."""
    out = {}
    for c in containers(ps):
        req = ((c.get("resources") or {}).get("requests")) or {}
        for r, v in req.items():
            q = parse_qty(v)
            if q is not None:
                out[r] = out.get(r, 0) + q
    return out


def admission(wl):
    st = wl.get("status")
    if not isinstance(st, dict):
        return None
    return st.get("admission")


def is_preadmitted(wl):
    if not admission(wl):
        return False
    for c in (wl.get("status") or {}).get("conditions") or []:
        if c.get("type") == "QuotaReserved" and c.get("status") == "True":
            return True
    return False


def lq_key(lq):
    return (ns(lq) or "default", name(lq))


def wl_lq_key(wl):
    return (ns(wl) or "default", spec(wl).get("queueName"))


# ---------------------------------------------------------------- references


def broken_refs(docs):
    """The set of references in `docs` that do not resolve (strings), so a
    reduction can be refused when it breaks one the original did not."""
    out = set()
    cqs = {name(d): d for d in of_kind(docs, "ClusterQueue")}
    flavors = {name(d) for d in of_kind(docs, "ResourceFlavor")}
    wpcs = {name(d) for d in of_kind(docs, "WorkloadPriorityClass")}
    nss = {name(d) for d in of_kind(docs, "Namespace")}
    lqs = {lq_key(d): d for d in of_kind(docs, "LocalQueue")}
    cohorts = {name(d) for d in of_kind(docs, "Cohort")}
    for d in docs:
        n = ns(d)
        if n and n not in nss:
            out.add("namespace %s" % n)
    for d in of_kind(docs, "ClusterQueue") + of_kind(docs, "Cohort"):
        for rg in spec(d).get("resourceGroups") or []:
            for fq in rg.get("flavors") or []:
                if fq.get("name") not in flavors:
                    out.add("%s %s -> flavor %s" % (kind(d), name(d), fq.get("name")))
    for d in of_kind(docs, "Cohort"):
        p = spec(d).get("parentName")
        if p and p not in cohorts:
            out.add("Cohort %s -> parent %s" % (name(d), p))
    for d in of_kind(docs, "LocalQueue"):
        cq = spec(d).get("clusterQueue")
        if cq not in cqs:
            out.add("LocalQueue %s/%s -> %s" % (ns(d), name(d), cq))
    for wl in of_kind(docs, "Workload"):
        wn = "%s/%s" % (ns(wl), name(wl))
        key = wl_lq_key(wl)
        lq = lqs.get(key)
        if lq is None:
            out.add("Workload %s -> LocalQueue %s" % (wn, key[1]))
        pcr = spec(wl).get("priorityClassRef")
        if pcr and pcr.get("group") == WPC_REF_GROUP and pcr.get("name") not in wpcs:
            out.add("Workload %s -> WorkloadPriorityClass %s" % (wn, pcr.get("name")))
        adm = admission(wl)
        if adm:
            cqn = adm.get("clusterQueue")
            cq = cqs.get(cqn)
            if cq is None:
                out.add("Workload %s admission -> %s" % (wn, cqn))
                continue
            if lq is not None and spec(lq).get("clusterQueue") != cqn:
                out.add("Workload %s admission in %s, not its queue's" % (wn, cqn))
            groups = {}
            for rg in spec(cq).get("resourceGroups") or []:
                fl = {fq.get("name") for fq in rg.get("flavors") or []}
                for r in rg.get("coveredResources") or []:
                    groups[r] = fl
            pss = {ps.get("name"): ps for ps in podsets(wl)}
            for psa in adm.get("podSetAssignments") or []:
                ps = pss.get(psa.get("name"))
                if ps is None:
                    out.add("Workload %s admission -> pod set %s" % (wn, psa.get("name")))
                    continue
                fl = psa.get("flavors") or {}
                for r in podset_requests(ps):
                    if r not in fl:
                        out.add("Workload %s admission: no flavor for %s" % (wn, r))
                for r, f in fl.items():
                    if f not in groups.get(r, ()):
                        out.add("Workload %s admission: %s in %s not in %s" % (wn, r, f, cqn))
    return out


# ---------------------------------------------------------------- quota model
#
# Kueue's hierarchical quota (pkg/cache/scheduler/resource_node.go, read for
# its rules): a node's subtree quota is its own nominal plus, for each child,
# the child's subtree quota less what the child keeps to itself (subtree quota
# minus lendingLimit, when set). A request fits a ClusterQueue when, for each
# flavor/resource, it is at most what the ClusterQueue may still use: its own
# kept part that is unused, plus what its parent has available, capped by
# borrowingLimit.


class QuotaModel:
    def __init__(self, docs):
        self.parent = {}
        self.quota = {}  # node -> {(flavor, resource): (nominal, borrowing, lending)}
        self.usage = {}  # node -> {fr: Fraction}
        nodes = []
        for d in of_kind(docs, "Cohort"):
            node = ("cohort", name(d))
            nodes.append(node)
            p = spec(d).get("parentName")
            if p:
                self.parent[node] = ("cohort", p)
            self.quota[node] = self._quotas(d)
        for d in of_kind(docs, "ClusterQueue"):
            node = ("cq", name(d))
            nodes.append(node)
            c = spec(d).get("cohortName")
            if c:
                self.parent[node] = ("cohort", c)
            self.quota[node] = self._quotas(d)
        for node in list(self.parent.values()):  # implicit cohorts
            self.quota.setdefault(node, {})
        self.children = {}
        for c, p in self.parent.items():
            self.children.setdefault(p, []).append(c)
        self.subtree = {}
        for node in self.quota:
            self.usage[node] = {}
        roots = [n for n in self.quota if n not in self.parent]
        seen = set()
        for r in roots:
            self._subtree(r, seen)
        self.cyclic = len(seen) != len(self.quota)

    @staticmethod
    def _quotas(d):
        out = {}
        for rg in spec(d).get("resourceGroups") or []:
            for fq in rg.get("flavors") or []:
                for rq in fq.get("resources") or []:
                    fr = (fq.get("name"), rq.get("name"))
                    nom = parse_qty(rq.get("nominalQuota", 0)) or Fraction(0)
                    bl = rq.get("borrowingLimit")
                    ll = rq.get("lendingLimit")
                    out[fr] = (
                        nom,
                        parse_qty(bl) if bl is not None else None,
                        parse_qty(ll) if ll is not None else None,
                    )
        return out

    def _subtree(self, node, seen):
        seen.add(node)
        st = {fr: q[0] for fr, q in self.quota[node].items()}
        for c in self.children.get(node, []):
            if c in seen:
                continue
            cst = self._subtree(c, seen)
            for fr, v in cst.items():
                st[fr] = st.get(fr, 0) + v - self._local(c, fr)
        self.subtree[node] = st
        return st

    def _local(self, node, fr):
        q = self.quota[node].get(fr)
        if q is None or q[2] is None:
            return 0
        return max(0, self.subtree[node].get(fr, 0) - q[2])

    def _local_available(self, node, fr):
        return max(0, self._local(node, fr) - self.usage[node].get(fr, 0))

    def available(self, node, fr):
        st = self.subtree[node].get(fr, 0)
        use = self.usage[node].get(fr, 0)
        p = self.parent.get(node)
        if p is None:
            return st - use
        pav = self.available(p, fr)
        q = self.quota[node].get(fr)
        if q is not None and q[1] is not None:
            stored = st - self._local(node, fr)
            used = max(0, use - self._local(node, fr))
            pav = min(stored - used + q[1], pav)
        return self._local_available(node, fr) + pav

    def add(self, node, fr, v):
        la = self._local_available(node, fr)
        self.usage[node][fr] = self.usage[node].get(fr, 0) + v
        p = self.parent.get(node)
        if p is not None and v > la:
            self.add(p, fr, v - la)

    def fits(self, cq, frq):
        """Whether the request {(flavor, resource): qty} fits ClusterQueue cq."""
        node = ("cq", cq)
        if node not in self.quota:
            return False
        for fr, v in frq.items():
            if v > self.available(node, fr):
                return False
        return True

    def admit(self, cq, frq):
        for fr, v in frq.items():
            self.add(("cq", cq), fr, v)


def admission_usage(wl):
    """{(flavor, resource): qty} that the Workload's status.admission holds."""
    adm = admission(wl) or {}
    pss = {ps.get("name"): ps for ps in podsets(wl)}
    out = {}
    for psa in adm.get("podSetAssignments") or []:
        ps = pss.get(psa.get("name"))
        if ps is None:
            continue
        cnt = psa.get("count", ps.get("count", 1))
        fl = psa.get("flavors") or {}
        for r, q in podset_requests(ps).items():
            if r in fl:
                fr = (fl[r], r)
                out[fr] = out.get(fr, 0) + q * cnt
    return out


def preadmitted_fit(docs):
    """True when the pre-admitted Workloads, taken in file order, each fit
    the quota left by the ones before (as Kueue could have admitted them)."""
    model = QuotaModel(docs)
    if model.cyclic:
        return False
    for wl in of_kind(docs, "Workload"):
        if not is_preadmitted(wl):
            continue
        cq = admission(wl).get("clusterQueue")
        use = admission_usage(wl)
        if not model.fits(cq, use):
            return False
        model.admit(cq, use)
    return True


# ---------------------------------------------------------------- cueue simulate


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cueue_bin():
    b = os.environ.get("CUEUE_BIN")
    if b:
        return b
    return os.path.join(repo_root(), "build", "cueue")


def simulate(docs, config, binary=None):
    """(exit code, stdout, stderr) of `cueue simulate -o json` on the case."""
    binary = binary or cueue_bin()
    fd, path = tempfile.mkstemp(prefix="cueue-case-", suffix=".yaml")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(case_text(docs, config))
        p = subprocess.run(
            [binary, "simulate", "-o", "json", path],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            universal_newlines=True,
        )
        err = p.stderr.replace(path, "<case>")
        return p.returncode, p.stdout, err
    finally:
        os.unlink(path)


def count_objects(docs, config=None):
    return len(docs) + (1 if config is not None else 0)
