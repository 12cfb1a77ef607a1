#!/usr/bin/env python3
"""report.py - the table of bench/vs-kueue.sh: Kueue beside Cueue.

    report.py --config-name NAME --generator FILE --out DIR [--qps N --burst N]
              [--plots] [--json] SIDE=DIR...

Each SIDE=DIR is one run of Kueue's scheduler performance runner (SIDE is
kueue or cueue). From DIR it reads what the runner wrote (summary.yaml,
wlStates.csv, <controller>.stats.yaml) and the API server's audit log
(audit.log, one JSON event per request). The runner times each workload from
its own first sight of it; the audit log gives each workload's creation time,
so the two together place every admission and finish on one clock, whose zero
is the first workload's creation.

Figures per side:
  wall_s                  the controller's process lifetime (the runner's
                          wallMs: what Kueue's checker bounds)
  last_admission_s        from the first creation to the last admission
  last_finish_s           ... to the last finish
  cq_usage_pct            the runner's ClusterQueue usage: CPU used over
                          nominal quota times the monitored time, per class
  admissions_per_s        admissions over last_admission_s
  time_to_admission_ms    per workload class: mean (the runner's), p50, p99
  cpu_s, maxrss_mib       the controller's user+sys CPU (the runner's
                          figures) and peak RSS (its VmHWM, sampled)
  requests_per_admission  the controller's API requests (audit log, by its
                          user agent) over its admissions; writes_per_admission
                          the same for the requests that are not reads
"""
import argparse
import csv
import glob
import json
import os
import subprocess
import sys
import tarfile
from datetime import datetime

import yaml

READS = {"get", "list", "watch"}


def ts(s):
    """An RFC 3339 timestamp (microseconds) as seconds since the epoch."""
    s = s.rstrip("Z")
    if "." in s:
        a, b = s.split(".")
        s = a + "." + (b + "000000")[:6]
    else:
        s = s + ".000000"
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%f").timestamp()


def pct(v, p):
    if not v:
        return 0
    v = sorted(v)
    k = max(0, min(len(v) - 1, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def load_side(name, d, requests):
    stats_f = [f for f in glob.glob(os.path.join(d, "*.stats.yaml"))]
    if not stats_f:
        raise SystemExit("report.py: no <controller>.stats.yaml in %s" % d)
    with open(stats_f[0]) as f:
        st = yaml.safe_load(f)
    ctl = os.path.basename(stats_f[0])[: -len(".stats.yaml")]
    # the controller's own peak (VmHWM, sampled by vs-kueue.sh); the
    # runner's maxrss holds the runner's peak too (vfork), so it is a
    # fallback only
    try:
        with open(os.path.join(d, "peak_rss_kib")) as f:
            peak = int(f.read().strip())
    except (OSError, ValueError):
        peak = st["maxrss"]
    with open(os.path.join(d, "summary.yaml")) as f:
        summ = yaml.safe_load(f)
    wls = []
    with open(os.path.join(d, "wlStates.csv")) as f:
        for row in csv.DictReader(f):
            wls.append(row)

    try:
        with open(os.path.join(d, "agent")) as f:
            agent_name = f.read().strip()
    except OSError:
        agent_name = ctl
    # the audit log: creations (the runner's) and the controller's requests
    created, finished_at = {}, {}
    nreq = nwrite = nevw = 0
    by_kind = {}
    agents = {}
    with open(os.path.join(d, "audit.log")) as f:
        for line in f:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            ua = ev.get("userAgent", "")
            verb = ev.get("verb", "")
            ref = ev.get("objectRef") or {}
            agent = ua.split("/")[0]
            agents[agent] = agents.get(agent, 0) + 1
            if agent == "runner" and ref.get("resource") == "workloads":
                code = (ev.get("responseStatus") or {}).get("code", 0)
                k = (ref.get("namespace"), ref.get("name"))
                if 200 <= code < 300 and verb == "create":
                    created[k] = ts(ev["requestReceivedTimestamp"])
                elif 200 <= code < 300 and ref.get("subresource") == "status":
                    # the runner's last status write of a workload is its
                    # Finished=True (the others clear an eviction)
                    finished_at[k] = ts(ev["stageTimestamp"])
            if agent == agent_name:
                nreq += 1
                if verb not in READS:
                    nwrite += 1
                    if ref.get("resource") == "events":
                        nevw += 1
                k = "%s %s%s" % (verb, ref.get("resource", ev.get("requestURI", "?")),
                                 "/" + ref["subresource"] if ref.get("subresource") else "")
                by_kind[k] = by_kind.get(k, 0) + 1
    if nreq == 0:
        raise SystemExit("report.py: no request of user agent %r in %s/audit.log (agents: %s)"
                         % (agent_name, d, ", ".join(sorted(agents))))
    t0 = min(created.values()) if created else 0

    adm, fin, per_class = [], [], {}
    intervals = []
    never = []
    for w in wls:
        key = (w["namespace"], w["name"])
        c = w["class name"]
        ta, tf = int(w["ms to admitted"]), int(w["ms to finish"])
        pc = per_class.setdefault(c, [])
        if key not in created:
            continue
        if tf == 0 and ta == 0:
            never.append(key)
            continue
        pc.append(ta)
        # the runner times a workload from its first sight of it, which
        # trails the creation by the watch's delay; its Finished write is
        # on the API server's clock, so a finished workload is placed from
        # there: admitted (tf - ta) before it
        if tf and key in finished_at:
            f_abs = finished_at[key] - t0
            a_abs = f_abs - (tf - ta) / 1000.0
        else:
            a_abs = created[key] - t0 + ta / 1000.0
            f_abs = created[key] - t0 + tf / 1000.0 if tf else None
        adm.append(a_abs)
        if f_abs is not None:
            fin.append(f_abs)
            intervals.append((a_abs, f_abs, c))
    nadm = len(adm) + sum(int(v.get("totalEvictions", 0)) for v in summ["workloadClasses"].values())
    last_adm = max(adm) if adm else 0
    out = {
        "dir": d,
        "t0": t0,
        "controller": ctl,
        "wall_s": round(st["wallMs"] / 1000.0, 1),
        "last_admission_s": round(last_adm, 1),
        "last_finish_s": round(max(fin) if fin else 0, 1),
        "cpu_s": round((st["userMs"] + st["sysMs"]) / 1000.0, 1),
        "maxrss_mib": round(peak / 1024.0, 1),
        "runner_maxrss_mib": round(st["maxrss"] / 1024.0, 1),
        "workloads": len(wls),
        "admissions": nadm,
        "never_admitted": len(never),
        "evictions": sum(int(v.get("totalEvictions", 0)) for v in summ["workloadClasses"].values()),
        "admissions_per_s": round(nadm / last_adm, 1) if last_adm else 0,
        "requests": nreq,
        "writes": nwrite,
        "requests_per_admission": round(nreq / nadm, 2) if nadm else 0,
        "writes_per_admission": round(nwrite / nadm, 2) if nadm else 0,
        "event_writes_per_admission": round(nevw / nadm, 2) if nadm else 0,
        "object_writes_per_admission": round((nwrite - nevw) / nadm, 2) if nadm else 0,
        "requests_by_kind": dict(sorted(by_kind.items(), key=lambda kv: -kv[1])),
        "dropped_events": summ.get("droppedWorkloadEvents", 0),
    }
    usage = {}
    for cls, g in (summ.get("clusterQueueClasses") or {}).items():
        if g.get("nominalQuota"):
            usage[cls] = round(100.0 * g["cpuAverageUsage"] / g["nominalQuota"], 1)
    out["cq_usage_pct"] = usage.get("cq", next(iter(usage.values()), 0))
    out["cq_usage_pct_by_class"] = usage
    out["time_to_admission_ms"] = {}
    for cls, v in sorted((summ.get("workloadClasses") or {}).items()):
        out["time_to_admission_ms"][cls] = {
            "mean": v["averageTimeToAdmissionMs"],
            "p50": pct(per_class.get(cls, []), 50),
            "p99": pct(per_class.get(cls, []), 99),
            "count": v["count"],
        }
    never_set = set("%s/%s" % k for k in never)
    return out, intervals, never_set


def class_requests(gen):
    """CPU request (cores) per workload class, and the total nominal quota."""
    req, nominal = {}, 0.0
    for co in gen.get("cohorts", []):
        for qs in co.get("queuesSets", []):
            nominal += co.get("count", 1) * qs.get("count", 1) * float(qs.get("nominalQuota", 0))
            for ws in qs.get("workloadsSets", []):
                for w in ws.get("workloads", []):
                    req[w["className"]] = float(w.get("request", 0))
    return req, nominal


def series(intervals, req, step):
    """Workloads admitted and running, and CPU in use, on a grid of step s."""
    if not intervals:
        return []
    end = max(b for _, b, _ in intervals)
    n = int(end / step) + 2
    run = [0] * n
    cpu = [0.0] * n
    for a, b, c in intervals:
        i, j = int(a / step + 0.5), int(b / step + 0.5)
        for k in range(i, min(j, n)):
            run[k] += 1
            cpu[k] += req.get(c, 0)
    return [(k * step, run[k], cpu[k]) for k in range(n)]


def metric_series(d, nominal, t0):
    """The controller's own gauges, scraped by the runner every second
    (metricsDump.tgz: one <epoch-ms>.prometheus file per scrape): workloads
    admitted and active (kueue_admitted_active_workloads, summed over the
    ClusterQueues) and CPU reserved (kueue_cohort_subtree_resource_reservations,
    summed over the cohorts; Kueue reports it in millicores for cpu, and so
    does Cueue now; a sum within the whole quota is read as cores, as Cueue
    reported it before). None without a dump."""
    path = os.path.join(d, "metricsDump.tgz")
    if not os.path.exists(path):
        return None
    rows = []
    with tarfile.open(path) as tf:
        for m in tf.getmembers():
            base = os.path.basename(m.name)
            if not base.endswith(".prometheus"):
                continue
            try:
                t = int(base.split(".")[0]) / 1000.0 - t0
            except ValueError:
                continue
            run, cpu = 0.0, 0.0
            for line in tf.extractfile(m).read().decode("utf-8", "replace").splitlines():
                if line.startswith("kueue_admitted_active_workloads{"):
                    run += float(line.rsplit(" ", 1)[1])
                elif line.startswith("kueue_cohort_subtree_resource_reservations{") and \
                        'resource="cpu"' in line:
                    cpu += float(line.rsplit(" ", 1)[1])
            rows.append((t, run, cpu))
    if not rows:
        return None
    rows.sort()
    if nominal and max(c for _, _, c in rows) > 1.5 * nominal:
        rows = [(t, r, c / 1000.0) for t, r, c in rows]
    return rows


def plots(outdir, sides, req, nominal, title):
    end = max([b for _, iv, _ in sides.values() for _, b, _ in iv] or [1])
    step = max(0.05, round(end / 2000.0, 2))
    dumps = {s: metric_series(sides[s][0]["dir"], nominal, sides[s][0]["t0"]) for s in sides}
    use_metrics = all(v is not None for v in dumps.values())
    for s, (_, iv, _) in sides.items():
        with open(os.path.join(outdir, "%s.series" % s), "w") as f:
            f.write("# t_s running cpu usage_pct (%s)\n"
                    % ("the controller's metrics" if use_metrics else "the runner's times"))
            rows = dumps[s] if use_metrics else series(iv, req, step)
            for t, r, c in rows:
                f.write("%.2f %d %.1f %.2f\n" % (t, r, c, 100.0 * c / nominal if nominal else 0))
    names = list(sides)
    made = []
    for png, col, ylabel, what in (
        ("running.png", 2, "workloads admitted and active", "Admitted and running workloads"),
        ("usage.png", 4, "CPU reserved, % of the nominal quota", "ClusterQueue usage"),
    ):
        lines = ", ".join(
            "'%s' using 1:%d with steps lw 2 title '%s'" % (os.path.join(outdir, s + ".series"), col,
                                                            "Kueue" if s == "kueue" else "Cueue")
            for s in names)
        script = ("set terminal png size 1000,500\nset output '%s'\nset title \"%s, %s\"\n"
                  "set xlabel 'seconds from the first workload creation'\nset ylabel '%s'\n"
                  "set key below\nset grid\nset xrange [0:*]\nset yrange [0:*]\nplot %s\n"
                  % (os.path.join(outdir, png), what, title, ylabel, lines))
        try:
            subprocess.run(["gnuplot"], input=script.encode(), check=True)
            made.append(os.path.join(outdir, png))
        except (OSError, subprocess.CalledProcessError) as e:
            print("report.py: no plot %s: %s" % (png, e), file=sys.stderr)
    return made


def fmt_ms(v):
    return "%.1f s" % (v / 1000.0) if v >= 10000 else "%d ms" % v


def table(cfgname, res, qps):
    names = list(res)
    head = "| | " + " | ".join("Kueue (%s)" % res[s]["controller"] if s == "kueue" else "Cueue"
                               for s in names) + (" | Cueue / Kueue |" if len(names) == 2 else " |")
    rows = [head, "|---" * (len(names) + 1 + (len(names) == 2)) + "|"]

    def row(label, key, fmt, ratio=True):
        vals = [res[s][key] for s in names]
        r = "| %s | %s |" % (label, " | ".join(fmt(v) for v in vals))
        if len(names) == 2:
            a, b = vals[0], vals[1]
            r += " %s |" % ("%.2f" % (b / a) if ratio and isinstance(a, (int, float)) and a else "")
        rows.append(r)

    row("controller wall time (runner)", "wall_s", lambda v: "%.1f s" % v)
    row("to the last admission", "last_admission_s", lambda v: "%.1f s" % v)
    row("to the last finish", "last_finish_s", lambda v: "%.1f s" % v)
    row("ClusterQueue usage", "cq_usage_pct", lambda v: "%.1f%%" % v)
    row("admissions (evictions)", "admissions", lambda v: str(v), False)
    rows[-1] = "| admissions (evictions) | %s |%s" % (
        " | ".join("%d (%d)" % (res[s]["admissions"], res[s]["evictions"]) for s in names),
        " |" if len(names) == 2 else "")
    row("admissions per second", "admissions_per_s", lambda v: "%.1f" % v)
    classes = sorted({c for s in names for c in res[s]["time_to_admission_ms"]},
                     key=lambda c: {"large": 0, "medium": 1, "small": 2}.get(c, 3))
    for c in classes:
        for k in ("mean", "p50", "p99"):
            vals = [res[s]["time_to_admission_ms"].get(c, {}).get(k, 0) for s in names]
            r = "| time to admission, %s, %s | %s |" % (c, k, " | ".join(fmt_ms(v) for v in vals))
            if len(names) == 2:
                r += " %s |" % ("%.2f" % (vals[1] / vals[0]) if vals[0] else "")
            rows.append(r)
    row("controller CPU (user+sys)", "cpu_s", lambda v: "%.1f s" % v)
    row("controller max RSS", "maxrss_mib", lambda v: "%.1f MiB" % v)
    row("API requests per admission", "requests_per_admission", lambda v: "%.2f" % v)
    row("API writes per admission", "writes_per_admission", lambda v: "%.2f" % v)
    row("... of which Events", "event_writes_per_admission", lambda v: "%.2f" % v)
    row("... of which objects", "object_writes_per_admission", lambda v: "%.2f" % v)
    row("workloads never admitted", "never_admitted", lambda v: str(v), False)
    lim = "qps %s, burst %s" % qps if qps[0] is not None else "minimalkueue's qps 50, burst 100"
    return "config %s, controllers' client limits: %s\n\n%s\n" % (cfgname, lim, "\n".join(rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config-name", required=True)
    ap.add_argument("--generator", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--qps")
    ap.add_argument("--burst")
    ap.add_argument("--plots", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("sides", nargs="+", metavar="SIDE=DIR")
    a = ap.parse_args()
    with open(a.generator) as f:
        gen = yaml.safe_load(f)
    req, nominal = class_requests(gen)
    sides, res = {}, {}
    for sd in a.sides:
        name, _, d = sd.partition("=")
        sides[name] = load_side(name, d, req)
        res[name] = sides[name][0]
    diff = {}
    if "kueue" in sides and "cueue" in sides:
        k_never, c_never = sides["kueue"][2], sides["cueue"][2]
        diff = {"admitted_by_kueue_only": sorted(c_never - k_never),
                "admitted_by_cueue_only": sorted(k_never - c_never)}
    made = plots(a.out, sides, req, nominal, a.config_name) if a.plots else []
    doc = {"config": a.config_name, "qps": a.qps, "burst": a.burst}
    doc.update({k: {f: v for f, v in r.items() if f not in ("dir", "t0")} for k, r in res.items()})
    doc["differences"] = diff
    doc["plots"] = made
    with open(os.path.join(a.out, "report.json"), "w") as f:
        json.dump(doc, f, indent=1)
    if a.json:
        print(json.dumps(doc, separators=(",", ":")))
        return
    t = table(a.config_name, res, (a.qps, a.burst))
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write(t)
    print(t)
    for s in res:
        top = list(res[s]["requests_by_kind"].items())[:8]
        print("%s requests: %s" % (s, ", ".join("%s %d" % kv for kv in top)))
    for k, v in diff.items():
        if v:
            print("%s: %d (%s%s)" % (k.replace("_", " "), len(v), ", ".join(v[:5]),
                                    ", ..." if len(v) > 5 else ""))
    for p in made:
        print("plot: %s" % p)


if __name__ == "__main__":
    main()
