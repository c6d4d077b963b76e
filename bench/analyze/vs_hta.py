#!/usr/bin/env python3
"""gputap analyze against HTA in-process on real PyTorch traces (bench/analyze/traces), interleaved
runs, medians: gputap's whole process (wall, CPU of all threads, peak RSS) against HTA's in-process
times from bench/analyze/hta_all.py (one parse, then every analysis gputap computes), with an older
gputap binary beside it when --before is given.

usage: vs_hta.py [--runs N] [--before OLD_GPUTAP] --hta-python VENV/bin/python GPUTAP TRACE.json.gz...
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def gputap(binary, trace):
    with tempfile.NamedTemporaryFile("r") as tf:
        t0 = time.perf_counter()
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", tf.name, binary, "analyze", "--format", "json",
                              trace], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        if status:
            raise SystemExit("%s failed on %s" % (binary, trace))
        return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": int(tf.read().split()[-1]) / 1024}


def hta(python, tdir, out):
    subprocess.run([python, os.path.join(HERE, "hta_all.py"), tdir, out], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    r = json.load(open(out))
    return {"parse": r["seconds_parse"], "analyses": r["seconds_analyses"],
            "inproc": r["seconds_parse"] + r["seconds_analyses"], "rss_mb": r["peak_rss_kb"] / 1024,
            "errors": r["errors"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--before")
    ap.add_argument("--hta-python", required=True)
    ap.add_argument("gputap")
    ap.add_argument("traces", nargs="+")
    o = ap.parse_args()
    work = tempfile.mkdtemp()
    summary = []
    for tr in o.traces:
        tdir = os.path.join(work, os.path.basename(tr).split(".")[0])
        os.makedirs(tdir)
        shutil.copy(tr, tdir)  # HTA reads a folder: one trace = one rank
        runs = {"after": [], "before": [], "hta": []}
        gputap(o.gputap, tr)  # the page cache
        for i in range(o.runs):
            if o.before:
                runs["before"].append(gputap(o.before, tr))
            runs["after"].append(gputap(o.gputap, tr))
            runs["hta"].append(hta(o.hta_python, tdir, os.path.join(work, "hta%d.json" % i)))

        def med(k, f):
            return statistics.median(x[f] for x in runs[k])

        name = os.path.basename(tr)
        print("== %s (%d interleaved runs, medians)" % (name, o.runs))
        for k in ("before", "after"):
            if runs[k]:
                w = sorted(x["wall"] for x in runs[k])
                print("gputap %-6s wall %.3f s (%.3f-%.3f), CPU %.3f s, peak RSS %.1f MB" % (
                    k, med(k, "wall"), w[0], w[-1], med(k, "cpu"), max(x["rss_mb"] for x in runs[k])))
        h = sorted(x["analyses"] for x in runs["hta"])
        print("HTA 0.5 in-process: parse %.3f s, analyses %.3f s (%.3f-%.3f), peak RSS %.0f MB%s" % (
            med("hta", "parse"), med("hta", "analyses"), h[0], h[-1], max(x["rss_mb"] for x in runs["hta"]),
            "; failed: " + "; ".join(runs["hta"][0]["errors"]) if runs["hta"][0]["errors"] else ""))
        row = {"trace": name}
        for k in ("before", "after"):
            if runs[k]:
                row[k] = (med("hta", "analyses") / med(k, "wall"), med("hta", "inproc") / med(k, "wall"),
                          med("hta", "analyses") / med(k, "cpu"))
                print("speed-up %-6s: HTA analyses / gputap wall %.1fx; HTA parse + analyses / gputap wall %.1fx; "
                      "HTA analyses / gputap CPU %.1fx" % ((k,) + row[k]))
        if runs["before"]:
            print("gputap before / after: wall %.2fx, CPU %.2fx" % (med("before", "wall") / med("after", "wall"),
                                                                    med("before", "cpu") / med("after", "cpu")))
        summary.append(row)
    shutil.rmtree(work)


main()
