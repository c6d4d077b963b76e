#!/usr/bin/env python3
"""Two gputap binaries side by side on the same traces: `gputap analyze --format json TRACE`, run
interleaved (A, B, A, B, ...), the median of each over RUNS runs: wall time, CPU time (user + system,
all threads) and peak RSS.

usage: ab.py [--runs N] [--args "ARGS"] GPUTAP_A GPUTAP_B TRACE...
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time


def one(binary, args, trace):
    """wall s, CPU s (user + system, all threads), peak RSS KB (GNU time's %M: the process's own)"""
    with tempfile.NamedTemporaryFile("r") as tf:
        t0 = time.perf_counter()
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", tf.name, binary, "analyze"] + args + [trace],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        if status != 0:
            raise SystemExit("%s failed on %s (status %d)" % (binary, trace, status))
        return wall, ru.ru_utime + ru.ru_stime, int(tf.read().split()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--args", default="--format json")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("traces", nargs="+")
    o = ap.parse_args()
    args = o.args.split()
    print("%-28s %-2s %9s %9s %9s   %s" % ("trace", "", "wall s", "CPU s", "RSS MB", "wall runs"))
    for tr in o.traces:
        res = {"A": [], "B": []}
        one(o.a, args, tr), one(o.b, args, tr)  # warm the page cache
        for _ in range(o.runs):
            res["A"].append(one(o.a, args, tr))
            res["B"].append(one(o.b, args, tr))
        med = {}
        for k in "AB":
            w = [x[0] for x in res[k]]
            c = [x[1] for x in res[k]]
            m = max(x[2] for x in res[k])
            med[k] = (statistics.median(w), statistics.median(c))
            print("%-28s %-2s %9.4f %9.4f %9.1f   %s" % (os.path.basename(tr)[:28], k, med[k][0], med[k][1], m / 1024,
                                                    " ".join("%.3f" % x for x in sorted(w))))
        print("%-28s A/B: wall %.2fx, CPU %.2fx" % ("", med["A"][0] / med["B"][0], med["A"][1] / med["B"][1]))


main()
