#!/usr/bin/python3
"""diff.py - Kueue and Cueue given the same objects on two real control
planes; their decisions compared. bench/diff-kueue.sh brings the control
planes up, builds what is missing and calls this; see its --help.

For each scenario, on both control planes at once: every object of the
previous scenario is deleted (finalizers stripped: no controller runs
then); the scenario's namespaces get their labels; the objects are created
in file order, the Workloads in order of their creationTimestamp, one
timestamp a second (the API server stamps creation to the second, so
equal input timestamps share a second and distinct ones do not); the
status of the Workloads the input shows admitted is written; then Kueue's
manager starts on one and `cueue controller` on the other, each with the
scenario's Configuration. A watch follows every Workload: it counts
evictions and, for a Workload no Job owns, finishes an eviction as Kueue's
job reconciler would for a Job (quota released, Requeued), which Kueue
itself leaves to the owner. The run ends when the controller has started
and no Workload changed for --quiet seconds; then the controllers stop and
the Workloads are read.
"""

import argparse
import datetime
import fnmatch
import http.client
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from fractions import Fraction

import yaml

GROUP = "kueue.x-k8s.io"
V = GROUP + "/v1beta2"

# kind -> (api prefix, plural, namespaced); creation order of the kinds
# that must exist before the others is the file's order
KINDS = {
    "Namespace": ("/api/v1", "namespaces", False),
    "ResourceFlavor": ("/apis/" + V, "resourceflavors", False),
    "Cohort": ("/apis/" + V, "cohorts", False),
    "ClusterQueue": ("/apis/" + V, "clusterqueues", False),
    "LocalQueue": ("/apis/" + V, "localqueues", True),
    "Workload": ("/apis/" + V, "workloads", True),
    "WorkloadPriorityClass": ("/apis/" + V, "workloadpriorityclasses", False),
    "AdmissionCheck": ("/apis/" + V, "admissionchecks", False),
    "Topology": ("/apis/" + V, "topologies", False),
    "PriorityClass": ("/apis/scheduling.k8s.io/v1", "priorityclasses", False),
    "Node": ("/api/v1", "nodes", False),
    "Pod": ("/api/v1", "pods", True),
    "Job": ("/apis/batch/v1", "jobs", True),
}
# emptied between scenarios, dependants first
EMPTY_ORDER = ["Job", "Pod", "Workload", "LocalQueue", "ClusterQueue", "Cohort", "ResourceFlavor",
               "WorkloadPriorityClass", "AdmissionCheck", "Topology", "PriorityClass", "Node"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- quantities

SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
          "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
          "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


def qty(s):
    """A Kubernetes quantity as an exact Fraction (None when unreadable)."""
    if s is None:
        return Fraction(0)
    if isinstance(s, (int, float)):
        return Fraction(s)
    s = str(s).strip()
    for suf in sorted(SUFFIX, key=len, reverse=True):
        if suf and s.endswith(suf):
            num = s[: -len(suf)]
            break
    else:
        suf, num = "", s
    try:
        if "e" in num.lower() and suf == "":
            return Fraction(num)
        return Fraction(num) * SUFFIX[suf]
    except (ValueError, ZeroDivisionError):
        return None


def fmt_qty(f, resource):
    """A Fraction back as a quantity: whole numbers plain, memory in the
    largest binary unit that divides it, else milli-units."""
    if f.denominator == 1:
        n = f.numerator
        if resource == "memory" or resource.endswith("storage"):
            for suf in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
                if n and n % SUFFIX[suf] == 0:
                    return "%d%s" % (n // SUFFIX[suf], suf)
        return str(n)
    m = f * 1000
    if m.denominator == 1:
        return "%dm" % m.numerator
    return str(float(f))


# ---------------------------------------------------------------- API client

class Kube:
    """A small client of one API server, from a kubeconfig of cluster.sh
    (client certificate files). One connection per thread."""

    def __init__(self, kubeconfig):
        kc = yaml.safe_load(open(kubeconfig))
        cl = kc["clusters"][0]["cluster"]
        us = kc["users"][0]["user"]
        u = urllib.parse.urlparse(cl["server"])
        self.host, self.port = u.hostname, u.port or 443
        self.ctx = ssl.create_default_context(cafile=cl["certificate-authority"])
        self.ctx.load_cert_chain(us["client-certificate"], us["client-key"])
        self.local = threading.local()
        self.kubeconfig = kubeconfig

    def conn(self, fresh=False):
        c = getattr(self.local, "c", None)
        if c is None or fresh:
            if c is not None:
                c.close()
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
            self.local.c = c
        return c

    def req(self, method, path, body=None, ctype="application/json"):
        data = None if body is None else json.dumps(body).encode()
        hdr = {"Accept": "application/json"}
        if data is not None:
            hdr["Content-Type"] = ctype
        for attempt in range(3):
            c = self.conn(fresh=attempt > 0)
            try:
                c.request(method, path, body=data, headers=hdr)
                r = c.getresponse()
                raw = r.read()
                try:
                    doc = json.loads(raw) if raw else None
                except ValueError:
                    doc = {"raw": raw.decode(errors="replace")}
                return r.status, doc
            except (http.client.HTTPException, OSError):
                if attempt == 2:
                    raise
                time.sleep(0.2)
        return 0, None

    def must(self, method, path, body=None, ctype="application/json", ok=(200, 201, 202)):
        for _ in range(40):  # 429: a new CRD's storage is still initializing
            st, doc = self.req(method, path, body, ctype)
            if st != 429:
                break
            time.sleep(0.25)
        if st not in ok:
            msg = doc.get("message") if isinstance(doc, dict) else doc
            raise RuntimeError("%s %s: %s %s" % (method, path, st, msg))
        return doc

    def stream(self, path):
        """A watch: yields each event (a dict) until the server ends it."""
        c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=3600)
        c.request("GET", path, headers={"Accept": "application/json"})
        r = c.getresponse()
        if r.status != 200:
            raise RuntimeError("watch %s: %s" % (path, r.status))
        try:
            while True:
                line = r.readline()
                if not line:
                    return
                line = line.strip()
                if line:
                    yield json.loads(line)
        finally:
            c.close()


def obj_path(kind, ns=None, name=None, sub=None):
    pre, plural, namespaced = KINDS[kind]
    p = pre
    if namespaced and ns:
        p += "/namespaces/" + ns
    p += "/" + plural
    if name:
        p += "/" + name
    if sub:
        p += "/" + sub
    return p


# ---------------------------------------------------------------- scenarios

class Scenario:
    def __init__(self, name, docs, config):
        self.name = name
        self.docs = docs          # objects, v1beta2, file order
        self.config = config      # a Kueue Configuration (dict) or {}


def load_yaml_docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if isinstance(d, dict)]


def convert_v1beta1(paths, cueue_bin):
    """cueue convert: v1beta1 objects as v1beta2 (the CRDs here store
    v1beta2 and serve no conversion webhook)."""
    out = subprocess.run([cueue_bin, "convert"] + paths, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("cueue convert %s: %s" % (" ".join(paths), out.stderr.strip()))
    return [d for d in yaml.safe_load_all(out.stdout) if isinstance(d, dict)]


def load_scenario(path, cueue_bin):
    """A folder with input.yaml (and config.yaml), or one YAML file whose
    Configuration document, if any, is the configuration."""
    if os.path.isdir(path):
        name = os.path.basename(os.path.normpath(path))
        files = [os.path.join(path, "input.yaml")]
        cfgf = os.path.join(path, "config.yaml")
        if os.path.exists(cfgf):
            files.append(cfgf)
    else:
        name = os.path.splitext(os.path.basename(path))[0]
        files = [path]
    raw = []
    for f in files:
        raw += load_yaml_docs(f)
    if any(str(d.get("apiVersion", "")).startswith(GROUP + "/v1beta1") for d in raw):
        raw = convert_v1beta1(files, cueue_bin)
    docs, config = [], {}
    # a v1 List is its items (as kubectl applies it)
    raw = [i for d in raw for i in ((d.get("items") or []) if d.get("kind") == "List" else [d])
           if isinstance(i, dict)]
    for d in raw:
        if d.get("kind") == "Configuration":
            config = d
        else:
            docs.append(d)
    normalize(docs)
    return Scenario(name, docs, config)


def normalize(docs):
    """What Kueue's webhooks (not installed here: nothing serves them) and
    a real API server need of the objects: a Workload's spec.priority next
    to its priorityClassRef (Kueue's CRD refuses one without the other);
    the limits of a Job's or a Pod's extended resources (the API server
    refuses a request for one without an equal limit), a container's image.
    An object with only metadata.generateName gets a name of its own
    (generateName and its place in the input), the same on both clusters,
    so its Workload can be matched across them (each server would generate
    a different one)."""
    values = {}
    for i, d in enumerate(docs):
        md = d.get("metadata") or {}
        if not md.get("name") and md.get("generateName"):
            md["name"] = "%sx%03d" % (md.pop("generateName"), i)
            d["metadata"] = md
    for d in docs:
        if d.get("kind") in ("WorkloadPriorityClass", "PriorityClass") and "value" in d:
            values[(d["kind"], d["metadata"]["name"])] = d["value"]
    for d in docs:
        spec = d.get("spec") or {}
        if d.get("kind") == "Workload":
            ref = spec.get("priorityClassRef") or {}
            if ref and spec.get("priority") is None:
                v = values.get((ref.get("kind", "WorkloadPriorityClass"), ref.get("name")))
                if v is not None:
                    spec["priority"] = v
        if d.get("kind") in ("Job", "Pod"):
            ps = ((spec.get("template") or {}).get("spec") or {}) if d["kind"] == "Job" else spec
            for c in (ps.get("containers") or []) + (ps.get("initContainers") or []):
                c.setdefault("image", "busybox")  # the API server requires one
                res = c.get("resources") or {}
                for r, q in (res.get("requests") or {}).items():
                    if r in ("cpu", "memory", "ephemeral-storage"):
                        continue
                    res.setdefault("limits", {}).setdefault(r, q)
                if res:
                    c["resources"] = res


def list_cases(args):
    paths = []
    for c in args.case or []:
        paths.append(c)
    for d in args.cases or []:
        for e in sorted(os.listdir(d)):
            p = os.path.join(d, e)
            if os.path.isdir(p) and os.path.exists(os.path.join(p, "input.yaml")):
                paths.append(p)
            elif e.endswith((".yaml", ".yml")) and os.path.isfile(p):
                paths.append(p)
    return paths


def parse_ts(s):
    if not s:
        return None
    s = str(s)
    try:
        return datetime.datetime.strptime(s.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None


# ---------------------------------------------------------------- one side

class Side:
    """One control plane and the controller under test on it."""

    def __init__(self, who, cluster_dir, args):
        self.who = who
        self.dir = cluster_dir
        self.kube = Kube(os.path.join(cluster_dir, "kubeconfig"))
        self.args = args
        self.proc = None
        self.ready_at = None
        self.last_event = 0.0
        self.evictions = {}     # ns/name -> count
        self.evicted_now = {}   # ns/name -> Evicted True seen last
        self.finished = set()   # evictions finished by the harness (key, ltt)
        self.watch_thread = None
        self.stop_watch = False
        self.errors = []
        self.notes = []         # what the reader should know of this run
        self.namespaces = {}    # name -> labels we set

    # -- emptying
    def empty(self):
        k = self.kube
        for kind in EMPTY_ORDER:
            doc = k.must("GET", obj_path(kind))
            for it in doc.get("items", []):
                md = it["metadata"]
                if kind == "PriorityClass" and md["name"].startswith("system-"):
                    continue
                p = obj_path(kind, md.get("namespace"), md["name"])
                if md.get("finalizers"):
                    k.req("PATCH", p, {"metadata": {"finalizers": None}},
                          "application/merge-patch+json")
                # no kubelet confirms a pod's end: a pod goes at once
                k.req("DELETE", p + "?propagationPolicy=Background" +
                      ("&gracePeriodSeconds=0" if kind == "Pod" else ""))
        for kind in EMPTY_ORDER:
            end = time.time() + 30
            while True:
                doc = k.must("GET", obj_path(kind))
                left = [i for i in doc.get("items", [])
                        if not (kind == "PriorityClass" and i["metadata"]["name"].startswith("system-"))]
                if not left:
                    break
                if time.time() > end:
                    raise RuntimeError("%s: %d %s objects left after 30 s" % (self.who, len(left), kind))
                for it in left:
                    md = it["metadata"]
                    p = obj_path(kind, md.get("namespace"), md["name"])
                    if md.get("finalizers"):
                        k.req("PATCH", p, {"metadata": {"finalizers": None}},
                              "application/merge-patch+json")
                time.sleep(0.1)

    def set_namespace(self, name, labels):
        k = self.kube
        st, cur = k.req("GET", obj_path("Namespace", name=name))
        want = dict(labels or {})
        want["kubernetes.io/metadata.name"] = name
        if st == 404:
            k.must("POST", obj_path("Namespace"),
                   {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": want}})
        elif (cur["metadata"].get("labels") or {}) != want:
            cur["metadata"]["labels"] = want
            k.must("PUT", obj_path("Namespace", name=name), cur)
        # a Pod needs its namespace's default ServiceAccount, which no
        # controller makes here
        k.must("POST", "/api/v1/namespaces/%s/serviceaccounts" % name,
               {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}},
               ok=(201, 409))

    def create(self, d):
        kind = d["kind"]
        md = d.get("metadata") or {}
        body = json.loads(json.dumps(d))
        bmd = body.setdefault("metadata", {})
        for f in ("creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"):
            bmd.pop(f, None)
        body.pop("status", None)
        self.kube.must("POST", obj_path(kind, md.get("namespace")), body)

    def node_taints(self, d):
        """The Node's taints as the scenario gives them: the API server
        taints a new node not-ready, and no node lifecycle controller runs
        here to lift it once the node is Ready."""
        taints = (d.get("spec") or {}).get("taints")
        self.kube.must("PATCH", obj_path("Node", name=d["metadata"]["name"]),
                       {"spec": {"taints": taints or None}}, "application/merge-patch+json")

    def write_status(self, d):
        st = json.loads(json.dumps(d.get("status") or {}))
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        for c in st.get("conditions") or []:
            c.setdefault("reason", c.get("type", "Unknown"))
            c.setdefault("message", "")
            c.setdefault("lastTransitionTime", now)
        md = d["metadata"]
        self.kube.must("PATCH", obj_path(d["kind"], md.get("namespace"), md["name"], "status"),
                       {"status": st}, "application/merge-patch+json")

    # -- the controller
    def start(self, scen, workdir):
        os.makedirs(workdir, exist_ok=True)
        logf = open(os.path.join(workdir, self.who + ".log"), "w")
        conf = os.path.join(workdir, self.who + "-config.yaml")
        if self.who == "kueue":
            cfg = kueue_config(scen.config, self.args)
            cmd = [self.args.kueue_bin, "--config", conf, "--kubeconfig", self.kube.kubeconfig,
                   "--zap-log-level=2"]
        else:
            cfg = cueue_config(scen.config)
            cmd = [self.args.cueue_bin, "controller", "--kubeconfig", self.kube.kubeconfig,
                   "--config", conf, "-v", os.environ.get("DIFF_KUEUE_CUEUE_V", "1"),
                   "--metrics-bind-address", "0",
                   "--health-probe-bind-address", "0"]
        with open(conf, "w") as f:
            yaml.safe_dump(cfg, f, sort_keys=False)
        self.logpath = logf.name
        self.started = time.time()
        self.proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT)
        logf.close()

    def check_ready(self):
        if self.ready_at is not None:
            return True
        if self.proc.poll() is not None:
            raise RuntimeError("%s exited (%s) before it was ready; see %s"
                               % (self.who, self.proc.returncode, self.logpath))
        try:
            with open(self.logpath, errors="replace") as f:
                text = f.read()
        except OSError:
            return False
        mark = '"Starting workers"' if self.who == "kueue" else "starting admission cycles"
        if self.who == "kueue":
            ok = '"controller":"workload"' in text and mark in text and "Starting scheduler" in text \
                or text.count(mark) >= 6
        else:
            ok = mark in text
        if ok:
            self.ready_at = time.time()
        return ok

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT if self.who == "kueue" else signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    # -- the watch
    def watch(self, rv):
        self.last_event = time.time()
        self.stop_watch = False
        path = obj_path("Workload") + "?watch=1&allowWatchBookmarks=false&resourceVersion=" + rv

        def run():
            try:
                for ev in self.kube.stream(path):
                    if self.stop_watch:
                        return
                    if ev.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                        self.last_event = time.time()
                        self.on_workload(ev["object"])
            except Exception as e:  # noqa: BLE001 - reported, not lost
                if not self.stop_watch:
                    self.errors.append("watch: %s" % e)
        self.watch_thread = threading.Thread(target=run, daemon=True)
        self.watch_thread.start()

    def on_workload(self, wl):
        md = wl["metadata"]
        key = wl_key(wl)
        conds = {c["type"]: c for c in (wl.get("status") or {}).get("conditions") or []}
        if os.environ.get("DIFF_KUEUE_DEBUG"):
            log("  [%s] %.3f %s rv %s %s adm=%s mf=%s" % (
                self.who, time.time() % 100, key, md.get("resourceVersion"),
                json.dumps([(c["type"], c["status"]) for c in conds.values()]),
                bool((wl.get("status") or {}).get("admission")),
                [(m.get("manager"), m.get("subresource")) for m in md.get("managedFields") or []]))
        ev = conds.get("Evicted")
        now_ev = bool(ev and ev.get("status") == "True")
        if now_ev and not self.evicted_now.get(key):
            self.evictions[key] = self.evictions.get(key, 0) + 1
        self.evicted_now[key] = now_ev
        qr = conds.get("QuotaReserved")
        if now_ev and qr and qr.get("status") == "True" and not md.get("ownerReferences"):
            mark = (key, ev.get("lastTransitionTime"), md.get("resourceVersion"))
            if mark not in self.finished:
                self.finished.add(mark)
                self.finish_eviction(wl, ev)

    def finish_eviction(self, wl, ev):
        """What Kueue's job reconciler does once an evicted Job stopped:
        Requeued (True after a preemption), the quota reservation unset."""
        md = wl["metadata"]
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        conds = [dict(c) for c in (wl.get("status") or {}).get("conditions") or []]
        if os.environ.get("DIFF_KUEUE_DEBUG"):
            log("  [%s] finishing the eviction of %s/%s rv %s: %s" % (
                self.who, md["namespace"], md["name"], md.get("resourceVersion"),
                json.dumps([(c["type"], c["status"]) for c in conds])))

        def setc(t, status, reason, msg):
            for c in conds:
                if c["type"] == t:
                    if c.get("status") != status:
                        c["lastTransitionTime"] = now
                    c.update(status=status, reason=reason, message=msg)
                    return
            conds.append({"type": t, "status": status, "reason": reason, "message": msg,
                          "lastTransitionTime": now})
        requeued = ev.get("reason") in ("Preempted", "NodeFailures")
        setc("Requeued", "True" if requeued else "False", ev.get("reason", ""), ev.get("message", ""))
        setc("QuotaReserved", "False", "Pending", ev.get("message", ""))
        if any(c["type"] == "Admitted" for c in conds):
            setc("Admitted", "False", "NoReservation", "The workload has no reservation")
        body = {"metadata": {"resourceVersion": md["resourceVersion"]},
                "status": {"admission": None, "conditions": conds}}
        st, doc = self.kube.req("PATCH", obj_path("Workload", md["namespace"], md["name"], "status"),
                                body, "application/merge-patch+json")
        if st == 409:
            self.finished.discard((md["namespace"] + "/" + md["name"], ev.get("lastTransitionTime"),
                                   md.get("resourceVersion")))
        elif st not in (200, 201):
            self.errors.append("finishing the eviction of %s/%s: %s" % (md["namespace"], md["name"], st))

    def end_watch(self):
        self.stop_watch = True


def merge(base, over):
    out = dict(base)
    for k, v in (over or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


# evictions of one Workload in one scenario that mean a preemption loop
LOOP = 5

HARNESS_KEYS = ("apiVersion", "kind", "leaderElection", "health", "metrics", "webhook",
                "internalCertManagement", "namespace", "clientConnection")


FS_DEFAULT = ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]


def kueue_config(scen_cfg, args):
    mine = {k: v for k, v in (scen_cfg or {}).items() if k not in HARNESS_KEYS}
    fs = mine.get("fairSharing")
    if isinstance(fs, dict):
        # v1beta1's fairSharing.enable is gone in v1beta2, where Kueue
        # v0.17 also refuses fairSharing without preemptionStrategies
        # (Cueue takes v1beta1's default then: docs/kueue-differences.md)
        fs = dict(fs)
        if fs.pop("enable", True) is False:
            mine.pop("fairSharing")
        else:
            fs.setdefault("preemptionStrategies", FS_DEFAULT)
            mine["fairSharing"] = fs
    base = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": "kueue-system",
        "leaderElection": {"leaderElect": False},
        "health": {"healthProbeBindAddress": "0"},
        "metrics": {"bindAddress": "0"},
        "webhook": {"host": "127.0.0.1", "port": args.webhook_port, "certDir": args.certs},
        "internalCertManagement": {"enable": False},
        "clientConnection": {"qps": -1, "burst": 1000},
    }
    cfg = merge(base, mine)
    gates = dict(cfg.get("featureGates") or {})
    gates.setdefault("VisibilityOnDemand", False)
    cfg["featureGates"] = gates
    return cfg


def cueue_config(scen_cfg):
    mine = {k: v for k, v in (scen_cfg or {}).items() if k not in HARNESS_KEYS}
    base = {"apiVersion": (scen_cfg or {}).get("apiVersion", "config.kueue.x-k8s.io/v1beta2"),
            "kind": "Configuration", "clientConnection": {"qps": -1, "burst": 1000}}
    return merge(base, mine)


# ---------------------------------------------------------------- decisions

def cq_of_lq(docs):
    m = {}
    for d in docs:
        if d.get("kind") == "LocalQueue":
            md = d["metadata"]
            m[md.get("namespace", "default") + "/" + md["name"]] = (d.get("spec") or {}).get("clusterQueue")
    return m


def wl_key(wl):
    """namespace/name; for a Job's Workload without the hash of the Job's
    UID that ends its name (the two clusters give a Job different UIDs)."""
    md = wl["metadata"]
    name = md["name"]
    if any(o.get("kind") == "Job" and o.get("controller") for o in md.get("ownerReferences") or []):
        name = re.sub(r"-[0-9a-f]{5}$", "", name)
    return md["namespace"] + "/" + name


def topology_domains(ta):
    """A v1beta2 topologyAssignment (levels, slices of domainCount,
    valuesPerLevel and podCounts, each universal or individual) as its
    domains, sorted: ["value/value...=count", ...]. Two encodings of the
    same placement compare equal."""
    out = []
    for sl in ta.get("slices") or []:
        n = sl.get("domainCount") or 0
        cols = []
        for lv in sl.get("valuesPerLevel") or []:
            if lv.get("universal") is not None:
                cols.append([lv["universal"]] * n)
            else:
                ind = lv.get("individual") or {}
                pre, suf = ind.get("prefix") or "", ind.get("suffix") or ""
                cols.append([pre + r + suf for r in ind.get("roots") or []])
        pc = sl.get("podCounts") or {}
        counts = [pc["universal"]] * n if pc.get("universal") is not None else list(pc.get("individual") or [])
        for i in range(n):
            vals = [c[i] if i < len(c) else "?" for c in cols]
            out.append("%s=%s" % ("/".join(vals), counts[i] if i < len(counts) else "?"))
    return sorted(out)


def decisions(side, scen, wls):
    """The final state, in the form of `cueue simulate -o json`."""
    lqs = cq_of_lq(scen.docs)
    cqs = [d for d in scen.docs if d.get("kind") == "ClusterQueue"]
    usage = {}  # cq -> (flavor, resource) -> Fraction
    out_w = []
    for wl in sorted(wls, key=lambda w: (w["metadata"]["namespace"], w["metadata"]["name"])):
        md, spec, st = wl["metadata"], wl.get("spec") or {}, wl.get("status") or {}
        key = wl_key(wl)
        conds = {c["type"]: c for c in st.get("conditions") or []}
        qr = conds.get("QuotaReserved")
        fin = conds.get("Finished")
        admitted = bool(qr and qr.get("status") == "True" and st.get("admission"))
        adm = st.get("admission") or {}
        cq = adm.get("clusterQueue") if admitted else lqs.get(md["namespace"] + "/" + (spec.get("queueName") or ""))
        pss = []
        if admitted:
            for a in adm.get("podSetAssignments") or []:
                ps = {"name": a.get("name"), "count": a.get("count"),
                      "flavors": dict(sorted((a.get("flavors") or {}).items()))}
                if a.get("topologyAssignment"):
                    ps["topology"] = topology_domains(a["topologyAssignment"])
                pss.append(ps)
                if not (fin and fin.get("status") == "True"):
                    for r, q in (a.get("resourceUsage") or {}).items():
                        f = (a.get("flavors") or {}).get(r, "")
                        u = usage.setdefault(cq, {})
                        u[(f, r)] = u.get((f, r), Fraction(0)) + (qty(q) or 0)
        reason = None
        if not admitted and qr and qr.get("status") == "False":
            reason = qr.get("message")
        out_w.append({"name": key, "admitted": admitted, "clusterQueue": cq, "podSets": pss,
                      "evictions": side.evictions.get(key, 0), "reason": reason})
    out_c = []
    for d in sorted(cqs, key=lambda d: d["metadata"]["name"]):
        name, spec = d["metadata"]["name"], d.get("spec") or {}
        nominal = {}
        for rg in spec.get("resourceGroups") or []:
            for fl in rg.get("flavors") or []:
                for r in fl.get("resources") or []:
                    nominal[(fl["name"], r["name"])] = qty(r.get("nominalQuota")) or Fraction(0)
        u = usage.get(name, {})
        rows = []
        for (f, r) in sorted(set(nominal) | set(u)):
            tot = u.get((f, r), Fraction(0))
            nom = nominal.get((f, r), Fraction(0))
            rows.append({"flavor": f, "resource": r, "total": fmt_qty(tot, r),
                         "borrowed": fmt_qty(max(Fraction(0), tot - nom), r), "nominal": fmt_qty(nom, r)})
        mine = [w for w in out_w if w["clusterQueue"] == name]
        out_c.append({"name": name, "cohort": spec.get("cohortName"),
                      "pending": sum(1 for w in mine if not w["admitted"]),
                      "admitted": sum(1 for w in mine if w["admitted"]), "usage": rows})
    return {"workloads": out_w, "clusterQueues": out_c}


def compare(name, a, b):
    """The differences between Kueue's decisions (a) and Cueue's (b)."""
    diffs = []

    def wview(w):
        if w is None:
            return None
        v = {"admitted": w["admitted"], "evicted": w["evictions"] > 0}
        if w["admitted"]:
            v["clusterQueue"] = w["clusterQueue"]
            v["podSets"] = w["podSets"]
        return v
    wa = {w["name"]: w for w in a["workloads"]}
    wb = {w["name"]: w for w in b["workloads"]}
    for k in sorted(set(wa) | set(wb)):
        va, vb = wview(wa.get(k)), wview(wb.get(k))
        if va != vb:
            diffs.append({"scenario": name, "workload": k, "kueue": va, "cueue": vb})
    ca = {c["name"]: c for c in a["clusterQueues"]}
    cb = {c["name"]: c for c in b["clusterQueues"]}
    for k in sorted(set(ca) | set(cb)):
        def uview(c):
            if c is None:
                return None
            return {"%s/%s" % (u["flavor"], u["resource"]): u["total"] for u in c["usage"]
                    if qty(u["total"])}
        ua, ub = uview(ca.get(k)), uview(cb.get(k))
        if ua != ub:
            diffs.append({"scenario": name, "clusterQueue": k, "kueue": ua, "cueue": ub})
    return diffs


# ---------------------------------------------------------------- a run

def in_parallel(fns):
    res, errs = [None] * len(fns), [None] * len(fns)

    def run(i):
        try:
            res[i] = fns[i]()
        except Exception as e:  # noqa: BLE001 - raised below
            errs[i] = e
    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(fns))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for e in errs:
        if e:
            raise e
    return res


def namespaces_of(docs):
    labels = {}
    for d in docs:
        if d.get("kind") == "Namespace":
            labels[d["metadata"]["name"]] = (d["metadata"].get("labels") or {})
    for d in docs:
        ns = (d.get("metadata") or {}).get("namespace")
        if d.get("kind") in ("LocalQueue", "Workload", "Job"):
            ns = ns or "default"
            d.setdefault("metadata", {})["namespace"] = ns
        if ns and ns not in labels:
            labels[ns] = {}
    return labels


def stamp_groups(docs):
    """The Workloads and Jobs in creation groups: by input
    creationTimestamp (file order within one), those without one last,
    each alone."""
    wls = [d for d in docs if d.get("kind") in ("Workload", "Job")]
    stamped = [(parse_ts(d["metadata"].get("creationTimestamp")), i, d) for i, d in enumerate(wls)]
    with_ts = sorted([s for s in stamped if s[0] is not None], key=lambda s: (s[0], s[1]))
    groups = []
    for ts, _, d in with_ts:
        if groups and groups[-1][0] == ts:
            groups[-1][1].append(d)
        else:
            groups.append((ts, [d]))
    for ts, _, d in stamped:
        if ts is None:
            groups.append((None, [d]))
    return [g[1] for g in groups]


def sleep_to_next_second():
    now = time.time()
    target = int(now) + 1 + 0.02
    time.sleep(max(0.0, target - now))


def check_stamps(side, groups):
    """1 when the server's creationTimestamps keep the groups: equal
    within one, strictly increasing from one to the next."""
    ts = {}
    for kind in ("Workload", "Job"):
        for i in side.kube.must("GET", obj_path(kind)).get("items", []):
            ts[(kind, i["metadata"]["namespace"], i["metadata"]["name"])] = i["metadata"]["creationTimestamp"]
    prev = None
    for g in groups:
        got = {ts.get((d["kind"], d["metadata"]["namespace"], d["metadata"]["name"])) for d in g}
        if len(got) != 1:
            return False
        t = got.pop()
        if prev is not None and not (t > prev):
            return False
        prev = t
    return True


def preadmitted(d):
    st = d.get("status") or {}
    return bool(st.get("admission")) or any(
        c.get("type") == "QuotaReserved" and c.get("status") == "True" for c in st.get("conditions") or [])


def create_groups(sides, groups):
    for g in groups:
        sleep_to_next_second()
        in_parallel([lambda s=s: [s.create(d) for d in g] for s in sides])
        for d in g:
            if d.get("status"):
                in_parallel([lambda s=s: s.write_status(d) for s in sides])


def wait_quiet(sides, args, t0, settle=None):
    """Until every controller is ready and no Workload changed for
    --quiet seconds (settle: that many seconds after ready, whatever
    the Workloads do)."""
    while True:
        time.sleep(0.2)
        now = time.time()
        done = True
        for s in sides:
            if not s.check_ready():
                done = False
            elif settle is not None:
                done = done and now - s.ready_at >= settle
            elif now - max(s.ready_at, s.last_event) < args.quiet:
                done = False
        if done:
            return
        if now - t0 > args.timeout:
            if all(s.ready_at for s in sides):
                # still writing (Kueue rewrites the pending status of some
                # inadmissible Workloads for minutes): the decisions are
                # compared as they stand, and the run says so
                for s in sides:
                    if now - s.last_event < args.quiet:
                        s.notes.append("no Workload silence of %gs within %gs: compared as it stood"
                                       % (args.quiet, args.timeout))
                return
            for s in sides:
                s.stop()
                s.end_watch()
            raise RuntimeError("no quiescence within %d s (%s)" % (
                args.timeout, ", ".join("%s %s" % (s.who, "ready" if s.ready_at else "not ready")
                                        for s in sides)))


def run_scenario(scen, sides, args, workdir):
    """online (the default): the queues, flavors, pre-admitted Workloads
    and the rest first; the controllers start and settle; then the other
    Workloads arrive, a timestamp group a second. snapshot: every object
    first, then the controllers (Kueue fills its cohort tree in
    reconcilers that run beside its scheduler, so a cold start can
    admit before the tree is whole: docs/kueue-differences.md)."""
    docs = scen.docs
    unknown = sorted({d.get("kind", "?") for d in docs} - set(KINDS))
    nslabels = namespaces_of(docs)
    groups = stamp_groups(docs)
    online = args.mode == "online"
    if online:
        first = [g2 for g2 in ([d for d in g if preadmitted(d)] for g in groups) if g2]
        later = [g2 for g2 in ([d for d in g if not preadmitted(d)] for g in groups) if g2]
    else:
        first, later = groups, []
    for attempt in range(2):
        in_parallel([s.empty for s in sides])
        for s in sides:
            s.evictions, s.evicted_now, s.finished, s.errors, s.notes = {}, {}, set(), [], []
            s.ready_at = None
        in_parallel([lambda s=s: [s.set_namespace(n, l) for n, l in sorted(nslabels.items())]
                     for s in sides])
        for d in docs:
            if d.get("kind") in KINDS and d["kind"] not in ("Namespace", "Workload", "Job"):
                in_parallel([lambda s=s: s.create(d) for s in sides])
                # a Node's capacity and Ready condition, a Pod's phase: no
                # kubelet (nor KWOK) writes them here
                if d["kind"] in ("Node", "Pod") and d.get("status"):
                    in_parallel([lambda s=s: s.write_status(d) for s in sides])
                if d["kind"] == "Node":
                    in_parallel([lambda s=s: s.node_taints(d) for s in sides])
        create_groups(sides, first)
        if all(check_stamps(s, first) for s in sides):
            break
        log("  %s: creation timestamps not reproduced (a slow create crossed a second); again" % scen.name)
    else:
        raise RuntimeError("creation timestamps could not be reproduced")
    rvs = [s.kube.must("GET", obj_path("Workload"))["metadata"]["resourceVersion"] for s in sides]
    for s, rv in zip(sides, rvs):
        s.watch(rv)
        s.start(scen, workdir)
    t0 = time.time()
    if later:
        wait_quiet(sides, args, t0, settle=args.settle)
        create_groups(sides, later)
        if not all(check_stamps(s, first + later) for s in sides):
            for s in sides:
                s.errors.append("creation timestamps not as in the input (order or equality)")
    wait_quiet(sides, args, t0)
    for s in sides:
        s.stop()
        s.end_watch()
    out = {}
    for s in sides:
        wls = s.kube.must("GET", obj_path("Workload")).get("items", [])
        out[s.who] = decisions(s, scen, wls)
        if s.errors:
            out[s.who]["harnessErrors"] = s.errors
        if s.notes:
            out[s.who]["harnessNotes"] = s.notes
    return out, unknown, round(time.time() - t0, 1)


def kueue_panicked(logpath):
    """Whether Kueue's log shows a panic (recovered or not)."""
    try:
        with open(logpath, errors="replace") as f:
            return any("Observed a panic" in ln or ln.startswith("panic: ") for ln in f)
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", action="append", help="a folder of scenarios")
    ap.add_argument("--case", action="append", help="one scenario (folder or YAML file)")
    ap.add_argument("--kueue-cluster", required=True)
    ap.add_argument("--cueue-cluster", required=True)
    ap.add_argument("--kueue-bin", required=True)
    ap.add_argument("--cueue-bin", required=True)
    ap.add_argument("--certs", required=True, help="the webhook server's tls.crt/tls.key folder")
    ap.add_argument("--webhook-port", type=int, default=29443)
    ap.add_argument("--out")
    ap.add_argument("--work", required=True, help="logs and configurations")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quiet", type=float, default=3.0)
    ap.add_argument("--mode", choices=("online", "snapshot"), default="online")
    ap.add_argument("--settle", type=float, default=2.0,
                    help="online: seconds after a controller is ready before the Workloads come")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds a run may take before it is compared as it stands")
    ap.add_argument("--known", help="deliberate differences: lines SCENARIO OBJECT (patterns)")
    ap.add_argument("--summary", help="write the summary JSON there too")
    args = ap.parse_args()
    known = []
    if args.known:
        for ln in open(args.known):
            ln = ln.split("#", 1)[0].split()
            if len(ln) >= 2:
                known.append((ln[0], ln[1]))

    paths = list_cases(args)
    if not paths:
        log("diff.py: no scenario given (--cases DIR or --case PATH)")
        return 2
    sides = [Side("kueue", args.kueue_cluster, args), Side("cueue", args.cueue_cluster, args)]

    def on_signal(sig, frame):  # noqa: ARG001 - the controllers must not outlive us
        for s in sides:
            s.stop()
        sys.exit(130)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    summary = {"scenarios": 0, "identical": 0, "knownOnly": 0, "kueueNoAnswer": 0, "differences": [],
               "failed": []}
    t_all = time.time()
    for p in paths:
        try:
            scen = load_scenario(p, args.cueue_bin)
        except Exception as e:  # noqa: BLE001 - reported per scenario
            summary["scenarios"] += 1
            summary["failed"].append({"scenario": os.path.basename(p), "error": str(e)})
            log("%s: cannot load: %s" % (p, e))
            continue
        summary["scenarios"] += 1
        wd = os.path.join(args.work, scen.name)
        try:
            res, unknown, secs = run_scenario(scen, sides, args, wd)
        except Exception as e:  # noqa: BLE001 - reported per scenario
            for s in sides:
                s.stop()
                s.end_watch()
            summary["failed"].append({"scenario": scen.name, "error": str(e)})
            log("%s: FAILED: %s" % (scen.name, e))
            continue
        if args.out:
            d = os.path.join(args.out, scen.name)
            os.makedirs(d, exist_ok=True)
            for who in ("kueue", "cueue"):
                with open(os.path.join(d, who + ".json"), "w") as f:
                    json.dump(res[who], f, indent=2)
                    f.write("\n")
        diffs = compare(scen.name, res["kueue"], res["cueue"])
        for who in ("kueue", "cueue"):
            for e in res[who].get("harnessErrors", []):
                diffs.append({"scenario": scen.name, "harness": who, "error": e})
        # Where Kueue has no answer, its final state is not a decision and
        # the scenario's differences are reported as such, apart: a
        # preemption loop (a Workload evicted LOOP times or more by Kueue
        # and not by Cueue: Kueue can preempt for a workload that then
        # loses the quota to its victim, cycle after cycle; the state is
        # wherever the loop stopped), or a panic in Kueue's scheduler
        # (it schedules nothing after it). A loop in Cueue is a difference
        # like any other.
        loops = {who: sorted("%s x%d" % (w["name"], w["evictions"]) for w in res[who]["workloads"]
                             if w["evictions"] >= LOOP) for who in ("kueue", "cueue")}
        kside = [x for x in sides if x.who == "kueue"][0]
        noanswer = ("panic" if kueue_panicked(kside.logpath) else
                    "loop" if loops["kueue"] and not loops["cueue"] else None)
        if noanswer:
            for d in diffs:
                if "harness" not in d:
                    d["kueueNoAnswer"] = noanswer
        note = " (ignored kinds: %s)" % ", ".join(unknown) if unknown else ""
        for who in ("kueue", "cueue"):
            if loops[who]:
                note += " (%s: preemption loop, evicted %s)" % (who, ", ".join(loops[who]))
        if noanswer == "panic":
            note += " (kueue: its scheduler panicked, see %s)" % kside.logpath
        for who in ("kueue", "cueue"):
            for n in res[who].get("harnessNotes", []):
                note += " (%s: %s)" % (who, n)
        for d in diffs:
            what = d.get("workload") or d.get("clusterQueue") or ""
            if any(fnmatch.fnmatchcase(scen.name, a) and fnmatch.fnmatchcase(what, b) for a, b in known):
                d["known"] = True
        if diffs:
            summary["differences"] += diffs
            new = [d for d in diffs if not d.get("known") and not d.get("kueueNoAnswer")]
            if not new and all(d.get("kueueNoAnswer") for d in diffs):
                summary["kueueNoAnswer"] += 1
            elif not new:
                summary["knownOnly"] += 1
            log("%s: %d difference(s)%s in %.1f s%s" % (
                scen.name, len(diffs), "" if new else ", all known" if not noanswer
                else ", where Kueue has no answer (%s)" % noanswer, secs, note))
            for d in diffs:
                what = d.get("workload") or d.get("clusterQueue") or d.get("harness")
                log("    %s%s\n      kueue: %s\n      cueue: %s" % (
                    what, " (known)" if d.get("known") else " (Kueue: %s)" % d["kueueNoAnswer"] if d.get("kueueNoAnswer") else "",
                    json.dumps(d.get("kueue", d.get("error"))), json.dumps(d.get("cueue"))))
        else:
            summary["identical"] += 1
            log("%s: identical (%d workloads, %.1f s)%s" % (scen.name, len(res["kueue"]["workloads"]), secs, note))
    summary["seconds"] = round(time.time() - t_all, 1)
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(summary, f)
    line = "%d scenarios, %d identical" % (summary["scenarios"], summary["identical"])
    if summary["knownOnly"]:
        line += ", %d with known differences only" % summary["knownOnly"]
    if summary["kueueNoAnswer"]:
        line += (", %d differing where Kueue has no answer (a preemption loop or a panic)"
                 % summary["kueueNoAnswer"])
    if summary["failed"]:
        line += ", %d failed to run" % len(summary["failed"])
    if args.json:
        print(json.dumps(summary))
    else:
        print(line)
        for f in summary["failed"]:
            print("  failed: %s: %s" % (f["scenario"], f["error"]))
    if summary["failed"]:
        return 3
    return 0 if not any(not d.get("known") and not d.get("kueueNoAnswer") for d in summary["differences"]) else 1


if __name__ == "__main__":
    sys.exit(main())
