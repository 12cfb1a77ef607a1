#!/usr/bin/env python3
"""Adds to each CRD of crds/ the served (not storage) kueue.x-k8s.io/v1beta1
version, derived from the file's own v1beta2 version by the differences
between the two APIs (docs/conversion.md), and the conversion section.

Usage: scripts/gen-crd-v1beta1.py [--check] [CRD_DIR]
  The v1beta2 version in each file is the source and stays as written; the
  v1beta1 version before it and spec.conversion are (re)generated.
  --check: change nothing; exit 1 and name the files that are not up to date
  (the CTest crds_v1beta1).

As in Kueue's CRDs, the four kinds whose schemas differ (ClusterQueue,
Cohort, LocalQueue, Workload) convert through the webhook at path /convert
of the Service cueue-webhook-service in cueue-system; the other four (with
Topology) keep the API server's own conversion (only apiVersion changes).
"""
import copy
import os
import re
import sys

import yaml

WEBHOOK_KINDS = {"ClusterQueue", "Cohort", "LocalQueue", "Workload"}

DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
QUANTITY = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
    "x-kubernetes-int-or-string": True,
}
ADMISSION_FAIR_SHARING_STATUS = {
    "description": "Admission Fair Sharing state (v1beta1 only; not kept in v1beta2).",
    "type": "object",
    "properties": {
        "consumedResources": {
            "description": "Usage over time, with the decay applied.",
            "type": "object",
            "additionalProperties": QUANTITY,
        },
        "lastUpdate": {"description": "When it was last updated.", "type": "string",
                       "format": "date-time"},
    },
    "required": ["consumedResources", "lastUpdate"],
}


def props(schema, path):
    """The properties map at a dotted path of the schema ("spec.x"; "[]" for items)."""
    node = schema
    for seg in path.split("."):
        if seg == "[]":
            node = node["items"]
        else:
            node = node["properties"][seg]
    return node


def rename(parent, old, new, description=None):
    """Renames a property in place (keeping its position)."""
    p = parent["properties"]
    if old not in p:
        raise SystemExit("gen-crd-v1beta1: no property %s" % old)
    items = [(new if k == old else k, v) for k, v in p.items()]
    p.clear()
    p.update(items)
    if description:
        p[new]["description"] = description
    if old in parent.get("required", []):
        parent["required"] = sorted(new if r == old else r for r in parent["required"])


def drop(parent, name):
    parent["properties"].pop(name, None)
    if name in parent.get("required", []):
        parent["required"].remove(name)
        if not parent["required"]:
            del parent["required"]


def add(parent, name, schema, after=None):
    p = parent["properties"]
    items = list(p.items())
    pos = len(items)
    if after and after in p:
        pos = [k for k, _ in items].index(after) + 1
    items.insert(pos, (name, schema))
    p.clear()
    p.update(items)


def cluster_queue(s, cols):
    spec = props(s, "spec")
    rename(spec, "cohortName", "cohort",
           "The cohort this ClusterQueue belongs to (v1beta2: cohortName).")
    add(spec, "admissionChecks", {
        "description": "AdmissionChecks of every workload of this queue (v1beta2: "
                       "admissionChecksStrategy). At most one of admissionChecks and "
                       "admissionChecksStrategy may be set.",
        "type": "array",
        "items": {"type": "string", "maxLength": 316},
    }, after="admissionChecksStrategy")
    ff = props(s, "spec.flavorFungibility")["properties"]
    ff["whenCanBorrow"]["enum"] = ff["whenCanBorrow"]["enum"] + ["Borrow"]
    ff["whenCanPreempt"]["enum"] = ff["whenCanPreempt"]["enum"] + ["Preempt"]
    status = props(s, "status")
    add(status, "pendingWorkloadsStatus", {
        "description": "Deprecated (v1beta1 only): the head of the pending queue.",
        "type": "object",
        "properties": {
            "clusterQueuePendingWorkload": {
                "type": "array",
                "x-kubernetes-list-type": "atomic",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}},
                    "required": ["name", "namespace"],
                },
            },
            "lastChangeTime": {"type": "string", "format": "date-time"},
        },
        "required": ["lastChangeTime"],
    })
    add(props(s, "status.fairSharing"), "admissionFairSharingStatus",
        ADMISSION_FAIR_SHARING_STATUS)
    for c in cols:
        if c["jsonPath"] == ".spec.cohortName":
            c["jsonPath"] = ".spec.cohort"


def cohort(s, cols):
    add(props(s, "status.fairSharing"), "admissionFairSharingStatus",
        ADMISSION_FAIR_SHARING_STATUS)


def local_queue(s, cols):
    status = props(s, "status")
    rename(status, "flavorsUsage", "flavorUsage",
           "Resources in use by the admitted workloads, by flavor (v1beta2: flavorsUsage).")
    name = {"type": "string", "maxLength": 253, "pattern": DNS1123_SUBDOMAIN}
    add(status, "flavors", {
        "description": "Deprecated (v1beta1 only): the flavors of the ClusterQueue.",
        "type": "array",
        "maxItems": 16,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {
            "type": "object",
            "properties": {
                "name": name,
                "resources": {"type": "array", "maxItems": 16, "x-kubernetes-list-type": "set",
                              "items": {"type": "string"}},
                "nodeLabels": {"type": "object", "maxProperties": 8,
                               "x-kubernetes-map-type": "atomic",
                               "additionalProperties": {"type": "string"}},
                "nodeTaints": {
                    "type": "array", "maxItems": 8, "x-kubernetes-list-type": "atomic",
                    "items": {
                        "type": "object",
                        "properties": {"effect": {"type": "string"}, "key": {"type": "string"},
                                       "timeAdded": {"type": "string", "format": "date-time"},
                                       "value": {"type": "string"}},
                        "required": ["effect", "key"],
                    },
                },
                "topology": {
                    "type": "object",
                    "properties": {
                        "name": name,
                        "levels": {"type": "array", "minItems": 1, "maxItems": 16,
                                   "x-kubernetes-list-type": "atomic",
                                   "items": {"type": "string"}},
                    },
                    "required": ["levels", "name"],
                },
            },
            "required": ["name"],
        },
    })


def workload(s, cols):
    spec = props(s, "spec")
    drop(spec, "preemptionGates")
    ref = "priorityClassRef"
    keys = list(spec["properties"])
    before = keys[keys.index(ref) - 1] if keys.index(ref) > 0 else None
    drop(spec, ref)
    add(spec, "priorityClassName", {
        "description": "The name of the priority class (v1beta2: priorityClassRef.name).",
        "type": "string", "maxLength": 253, "pattern": DNS1123_SUBDOMAIN,
    }, after=before)
    add(spec, "priorityClassSource", {
        "description": "What priorityClassName names: a WorkloadPriorityClass "
                       "(kueue.x-k8s.io/workloadpriorityclass) or a PriorityClass "
                       "(scheduling.k8s.io/priorityclass) (v1beta2: priorityClassRef.group "
                       "and kind).",
        "type": "string", "default": "",
        "enum": ["kueue.x-k8s.io/workloadpriorityclass", "scheduling.k8s.io/priorityclass", ""],
    }, after="priorityClassName")
    tr = props(s, "spec.podSets.[]").get("properties", {}).get("topologyRequest")
    if tr and "properties" in tr:
        drop(tr, "podsetSliceRequiredTopologyConstraints")
    status = props(s, "status")
    rename(status, "accumulatedPastExecutionTimeSeconds", "accumulatedPastExexcutionTimeSeconds",
           "Time spent in the Admitted state in the previous admissions, in seconds "
           "(v1beta2: accumulatedPastExecutionTimeSeconds; the v1beta1 name is misspelt).")
    drop(status, "preemptionGates")
    ta = props(s, "status.admission.podSetAssignments.[].topologyAssignment")
    keys = list(ta["properties"])
    drop(ta, "slices")
    add(ta, "domains", {
        "description": "The topology domains of the pods, one per entry (v1beta2: slices).",
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "values": {"description": "The domain's value at each level.",
                           "type": "array", "minItems": 1, "maxItems": 16,
                           "x-kubernetes-list-type": "atomic", "items": {"type": "string"}},
                "count": {"description": "The number of pods in the domain.",
                          "type": "integer", "format": "int32", "minimum": 1},
            },
            "required": ["count", "values"],
        },
    })
    ta["required"] = sorted(set(ta.get("required", [])) - {"slices"} | {"domains", "levels"})


def admission_check(s, cols):
    add(props(s, "spec"), "retryDelayMinutes", {
        "description": "Deprecated (v1beta1 only): minutes to wait before retrying a check.",
        "type": "integer", "format": "int64", "default": 15,
    })


TRANSFORMS = {
    "ClusterQueue": cluster_queue,
    "Cohort": cohort,
    "LocalQueue": local_queue,
    "Workload": workload,
    "AdmissionCheck": admission_check,
    "ResourceFlavor": lambda s, cols: None,
    "WorkloadPriorityClass": lambda s, cols: None,
    "Topology": lambda s, cols: None,
}

CONVERSION = """  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions:
      - v1
      clientConfig:
        service:
          name: cueue-webhook-service
          namespace: cueue-system
          path: /convert
          port: 443
"""


class Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):  # no anchors: each schema node written out
        return True


def _str(dumper, s):
    style = "'" if s == "" or "\n" in s or re.search(r"^[\s\-?:,\[\]{}#&*!|>'\"%@`]|: | #", s) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", s, style=style)


Dumper.add_representer(str, _str)


def generate(text, path):
    lines = text.splitlines(keepends=True)
    # the v1beta2 version: from "  - name: v1beta2" to the next version or the end
    try:
        start = lines.index("  - name: v1beta2\n")
    except ValueError:
        raise SystemExit("%s: no '  - name: v1beta2' version" % path)
    end = start + 1
    while end < len(lines) and not lines[end].startswith("  - name: "):
        end += 1
    v2_text = "".join(lines[start:end])
    vstart = lines.index("  versions:\n")
    head = lines[:vstart]
    # drop a conversion section made before
    out_head, skip = [], False
    for ln in head:
        if ln == "  conversion:\n":
            skip = True
            continue
        if skip and (ln.startswith("    ") or ln.strip() == ""):
            continue
        skip = False
        out_head.append(ln)
    doc = yaml.safe_load(text.split("\n---\n", 1)[-1])
    kind = doc["spec"]["names"]["kind"]
    v2 = yaml.safe_load("x:\n" + v2_text)["x"][0]
    v1 = copy.deepcopy(v2)
    v1["name"] = "v1beta1"
    v1["storage"] = False
    v1["deprecated"] = True
    TRANSFORMS[kind](v1["schema"]["openAPIV3Schema"], v1.get("additionalPrinterColumns", []))
    body = yaml.dump([v1], Dumper=Dumper, sort_keys=False, default_flow_style=False, width=100,
                     allow_unicode=True)
    v1_text = "".join("  " + ln if ln.strip() else ln for ln in body.splitlines(keepends=True))
    out = []
    for ln in out_head:
        out.append(ln)
        if ln == "spec:\n" and kind in WEBHOOK_KINDS:
            out.append(CONVERSION)
    note = ("  # v1beta1: generated from v1beta2 below by scripts/gen-crd-v1beta1.py; "
            "do not edit by hand.\n")
    return "".join(out) + "  versions:\n" + note + v1_text + v2_text + "".join(lines[end:])


def main():
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    d = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crds")
    stale = []
    for name in sorted(os.listdir(d)):
        if not name.endswith(".yaml"):
            continue
        path = os.path.join(d, name)
        text = open(path).read()
        new = generate(text, path)
        if new != text:
            stale.append(name)
            if not check:
                open(path, "w").write(new)
    if check and stale:
        print("crds: not up to date with their v1beta2 versions (run scripts/gen-crd-v1beta1.py): "
              + ", ".join(stale))
        return 1
    if not check:
        print("crds: %d file(s) written" % len(stale))
    return 0


if __name__ == "__main__":
    sys.exit(main())
