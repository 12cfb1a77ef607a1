#!/usr/bin/env python3
"""webhook.py - the admission and conversion webhook of the conformance
sequences (sequences.sh, webhook_*): one HTTPS server that kube-apiserver
and `cueue cluster` both call, answering the same way to both.

Usage: webhook.py CERT KEY PORT_FILE
Listens on 127.0.0.1 (a free port, written to PORT_FILE once listening).

  /mutate   AdmissionReview: allowed, a JSONPatch adding the label mutated=yes
  /deny     AdmissionReview: denied, code 403, "no thanks from the test webhook"
  /warn     AdmissionReview: allowed, with the warning "the test webhook warns you"
  /convert  ConversionReview: Gadget v1 spec.size <-> v2 spec.count
"""
import base64
import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def admission(review, allowed=True, patch=None, status=None, warnings=None):
    resp = {"uid": review["request"]["uid"], "allowed": allowed}
    if patch is not None:
        resp["patchType"] = "JSONPatch"
        resp["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
    if status is not None:
        resp["status"] = status
    if warnings:
        resp["warnings"] = warnings
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp}


def mutate(review):
    obj = review["request"].get("object") or {}
    labels = (obj.get("metadata") or {}).get("labels")
    if labels is None:
        patch = [{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}]
    else:
        patch = [{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}]
    return admission(review, patch=patch)


def convert(review):
    req = review["request"]
    desired = req["desiredAPIVersion"]
    to_v2 = desired.endswith("/v2")
    src, dst = ("size", "count") if to_v2 else ("count", "size")
    out = []
    for obj in req["objects"]:
        spec = obj.get("spec") or {}
        if src in spec:
            spec[dst] = spec.pop(src)
        obj["apiVersion"] = desired
        out.append(obj)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": req["uid"], "convertedObjects": out,
                         "result": {"status": "Success"}}}


ROUTES = {
    "/mutate": mutate,
    "/deny": lambda r: admission(r, allowed=False, status={
        "code": 403, "reason": "Forbidden", "message": "no thanks from the test webhook"}),
    "/warn": lambda r: admission(r, warnings=["the test webhook warns you"]),
    "/convert": convert,
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        fn = ROUTES.get(self.path.split("?", 1)[0])
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        if fn is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = json.dumps(fn(json.loads(body))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt, *args):
        sys.stderr.write("webhook: " + (fmt % args) + "\n")


def main():
    cert, key, port_file = sys.argv[1:4]
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(port_file + ".tmp", port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
