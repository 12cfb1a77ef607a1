#!/usr/bin/env python3
"""compare.py - are two sets of Kubernetes manifests the same objects?

    compare.py EXPECTED.yaml RENDERED.yaml

EXPECTED is dist/install.yaml, RENDERED the output of `helm template` of
charts/cueue with its default values. They must hold the same objects
(kind, namespace, name) with equal contents, modulo what Helm adds:
- the labels helm.sh/chart, app.kubernetes.io/managed-by,
  app.kubernetes.io/instance and app.kubernetes.io/version;
- the pod template's checksum/config annotation (it restarts the pods
  when the Configuration changes);
and the Namespace, which `helm install --create-namespace` makes. The
Configuration in the ConfigMap is compared as YAML, not as text. Prints
each difference with its path; exits 1 if there is any.
"""
import sys

import yaml

HELM_LABELS = {"helm.sh/chart", "app.kubernetes.io/managed-by",
               "app.kubernetes.io/instance", "app.kubernetes.io/version"}
CONFIG_KEY = "controller_manager_config.yaml"


def load(path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    out = {}
    for d in docs:
        md = d.get("metadata", {})
        key = (d.get("kind"), md.get("namespace", ""), md.get("name"))
        if key in out:
            sys.exit(f"{path}: {key} twice")
        out[key] = d
    return out


def strip_labels(md):
    labels = md.get("labels")
    if isinstance(labels, dict):
        for k in HELM_LABELS:
            labels.pop(k, None)
        if not labels:
            del md["labels"]


def normalize(d):
    strip_labels(d.get("metadata", {}))
    tmpl = d.get("spec", {}).get("template") if isinstance(d.get("spec"), dict) else None
    if isinstance(tmpl, dict):
        md = tmpl.setdefault("metadata", {})
        strip_labels(md)
        ann = md.get("annotations")
        if isinstance(ann, dict):
            ann.pop("checksum/config", None)
            if not ann:
                del md["annotations"]
    if d.get("kind") == "ConfigMap" and CONFIG_KEY in d.get("data", {}):
        d["data"][CONFIG_KEY] = yaml.safe_load(d["data"][CONFIG_KEY])
    return d


def diff(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in b:
                out.append(f"{path}.{k}: only in the expected objects: {a[k]!r}"[:300])
            elif k not in a:
                out.append(f"{path}.{k}: only in the rendered objects: {b[k]!r}"[:300])
            else:
                diff(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items expected, {len(b)} rendered")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: expected {a!r}, rendered {b!r}"[:300])


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare.py EXPECTED.yaml RENDERED.yaml")
    exp, got = load(sys.argv[1]), load(sys.argv[2])
    out = []
    for key in sorted(set(exp) | set(got), key=str):
        name = "%s %s" % (key[0], "/".join(x for x in key[1:] if x))
        if key not in got:
            if key[0] != "Namespace":
                out.append(f"{name}: not rendered")
        elif key not in exp:
            out.append(f"{name}: rendered, not expected")
        else:
            diff(normalize(exp[key]), normalize(got[key]), name, out)
    for line in out:
        print(line)
    print(f"{len(exp)} expected objects, {len(got)} rendered, {len(out)} differences")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
