#!/usr/bin/env python3
"""Checks of launch hold runs (tests/gpu/hold.sh), from the runs' own traces.

    check_hold.py NAME BASE_STDOUT NOHOLD_DIR NOHOLD_STDOUT HOLD_N:DIR:STDOUT... [--expect KEY>0 ...]
    check_hold.py latency [--window K] RUNDIR...   launch-to-start latency and GPU idle time per run
                                            (JSON lines; --window: the last K kernels only)

For each hold run: the program printed exactly what it printed without gputap
and without hold; the trace says launches were held (hold.held > 0, held
launch records present); kernels and launch calls are as many as without
hold; held launches were issued and their kernels ran (every held launch's
correlation id has a kernel).  --expect names counters that must be > 0 in
every hold run (e.g. not_held.capture); --expect-batched names counters that
must be > 0 in the runs with batches of 2 or more (with --hold 1 each launch
is issued at once, so no call finds anything to release).
Prints "ok NAME/..." / "not ok NAME/...: why".
"""
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtr  # noqa: E402

LAUNCHES = ("cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel")


def traces(rundir):
    return sorted(glob.glob(os.path.join(rundir, "*", "trace.gtr")) + glob.glob(os.path.join(rundir, "*", "trace.gtr.partial")))


def facts(rundir):
    f = dict(kernels=0, launches=0, held_api=0, counters={}, held_recs=[], releases=[], kernel_corr=set(), procs=0,
             api_by_corr={}, kernel_start={}, kernel_spans=[])
    for p in traces(rundir):
        t = gtr.read(p)
        f["procs"] += 1
        for r in t["records"]:
            ty = r["type"]
            if ty == "kernel":
                f["kernels"] += 1
                f["kernel_corr"].add(r["corr"])
                f["kernel_start"].setdefault(r["corr"], r["start"])
                f["kernel_spans"].append((r["start"], r["end"]))
            elif ty == "api" and r["name"] in LAUNCHES:
                f["launches"] += 1
                if r["flags"] & 2:
                    f["held_api"] += 1
                if r["corr"]:
                    f["api_by_corr"][r["corr"]] = r
            elif ty == "counter" and r["name"].startswith("hold."):
                f["counters"][r["name"][5:]] = f["counters"].get(r["name"][5:], 0) + r["value"]
            elif ty == "hold":
                (f["held_recs"] if r["kind"] == 1 else f["releases"]).append(r)
    return f


def say(ok, name, why=""):
    print(("ok " if ok else "not ok ") + name + ("" if ok else ": " + why))
    sys.stdout.flush()


def read(path):
    try:
        with open(path) as fh:
            return fh.read()
    except OSError as e:
        return "<" + str(e) + ">"


def check_runs(name, base_out, nohold_dir, nohold_out, runs, expect, batched):
    base = read(base_out)
    say(base.strip() != "" and not base.startswith("<"), name + "/baseline-ran", base[:200])
    say(read(nohold_out) == base, name + "/no-hold-output-unchanged", read(nohold_out)[:300] + " vs " + base[:300])
    f0 = facts(nohold_dir)
    say(f0["kernels"] > 0, name + "/no-hold-kernels", "no kernel records")
    say(not f0["counters"], name + "/no-hold-holds-nothing", str(f0["counters"]))
    for spec in runs:
        n, d, out = spec.split(":", 2)
        tag = name + "/hold-" + n
        got = read(out)
        say(got == base, tag + "/output-unchanged", got[:300] + " vs " + base[:300])
        f = facts(d)
        c = f["counters"]
        say(c.get("held", 0) > 0, tag + "/held", "counters %s" % c)
        say(int(c.get("batch", 0)) == int(n), tag + "/batch-setting", "hold.batch %s" % c.get("batch"))
        say(len(f["held_recs"]) == int(c.get("held", -1)), tag + "/held-records",
            "%d held records, hold.held %s" % (len(f["held_recs"]), c.get("held")))
        say(f["held_api"] == len(f["held_recs"]), tag + "/held-api-records",
            "%d API records marked held, %d held records" % (f["held_api"], len(f["held_recs"])))
        say(f["kernels"] == f0["kernels"], tag + "/kernel-count", "%d vs %d without hold" % (f["kernels"], f0["kernels"]))
        say(f["launches"] == f0["launches"], tag + "/launch-count",
            "%d vs %d without hold" % (f["launches"], f0["launches"]))
        bad = [r for r in f["held_recs"] if r["result"] != 0]
        say(not bad and c.get("failed", 0) == 0, tag + "/no-release-failures", "%d failed" % len(bad))
        if f["held_recs"] and all(r["corr"] for r in f["held_recs"]):
            missing = [r["corr"] for r in f["held_recs"] if r["corr"] not in f["kernel_corr"]]
            say(not missing, tag + "/held-kernels-ran", "%d held launches without a kernel" % len(missing))
        rel = sum(r["count"] for r in f["releases"])
        say(rel == len(f["held_recs"]), tag + "/releases-account-for-all", "released %d, held %d" % (rel, len(f["held_recs"])))
        big = [r["count"] for r in f["releases"] if r["count"] > int(n)]
        say(not big, tag + "/batches-bounded", "batches over %s: %s" % (n, big[:5]))
        for e in expect + (batched if int(n) > 1 else []):
            say(c.get(e, 0) > 0, tag + "/" + e, "counters %s" % c)


def pct(v, q):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def latency(rundir, window=0):
    """Launch-to-start latency (kernel start - end of the launch call), for
    held launches also from the release, and GPU idle time between the first
    and last kernel (gaps in the union of kernel spans); with a window, over
    the last `window` kernels (a benchmark's timed part)."""
    f = facts(rundir)
    if window and len(f["kernel_spans"]) > window:
        spans = sorted(f["kernel_spans"])[-window:]
        t0 = spans[0][0]
        f["kernel_spans"] = spans
        f["kernel_start"] = {c: s for c, s in f["kernel_start"].items() if s >= t0}
    held = {r["corr"]: r for r in f["held_recs"] if r["corr"]}
    l_all, l_held, l_rel, l_not = [], [], [], []
    for corr, a in f["api_by_corr"].items():
        ks = f["kernel_start"].get(corr)
        if ks is None:
            continue
        d = (ks - a["end"]) / 1e3
        l_all.append(d)
        if corr in held:
            l_held.append(d)
            l_rel.append((ks - held[corr]["end"]) / 1e3)
        else:
            l_not.append(d)
    spans = sorted(f["kernel_spans"])
    busy, idle, cur_s, cur_e = 0, 0, None, None
    for s, e in spans:
        if cur_e is None:
            cur_s, cur_e = s, e
        elif s > cur_e:
            busy += cur_e - cur_s
            idle += s - cur_e
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        busy += cur_e - cur_s
    sizes = [r["count"] for r in f["releases"]]
    trig = {}
    for r in f["releases"]:
        k = r["reason"] + (":" + r["api"] if r["api"] else "")
        trig[k] = trig.get(k, 0) + 1
    return dict(run=os.path.basename(rundir.rstrip("/")), kernels=f["kernels"], launches=f["launches"],
                held=len(f["held_recs"]), window_kernels=len(f["kernel_spans"]),
                gpu_busy_pct=100.0 * busy / (busy + idle) if busy + idle else float("nan"),
                latency_us=dict(median=pct(l_all, 0.5), p95=pct(l_all, 0.95)),
                held_latency_us=dict(median=pct(l_held, 0.5), p95=pct(l_held, 0.95)),
                release_to_start_us=dict(median=pct(l_rel, 0.5), p95=pct(l_rel, 0.95)),
                not_held_latency_us=dict(median=pct(l_not, 0.5), p95=pct(l_not, 0.95)),
                gpu_busy_ms=busy / 1e6, gpu_idle_ms=idle / 1e6,
                batches=len(sizes), batch_median=statistics.median(sizes) if sizes else 0,
                top_triggers=sorted(trig.items(), key=lambda kv: -kv[1])[:8])


def main():
    a = sys.argv[1:]
    if a and a[0] == "latency":
        a = a[1:]
        window = 0
        if a[:1] == ["--window"]:
            window = int(a[1])
            a = a[2:]
        for d in a:
            print(json.dumps(latency(d, window)))
        return 0
    expect, batched = [], []
    rest = []
    i = 0
    while i < len(a):
        if a[i] == "--expect":
            expect.append(a[i + 1])
            i += 2
        elif a[i] == "--expect-batched":
            batched.append(a[i + 1])
            i += 2
        else:
            rest.append(a[i])
            i += 1
    name, base_out, nohold_dir, nohold_out = rest[:4]
    check_runs(name, base_out, nohold_dir, nohold_out, rest[4:], expect, batched)
    return 0


if __name__ == "__main__":
    sys.exit(main())
