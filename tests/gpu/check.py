#!/usr/bin/env python3
"""Checks of one recorded run against what the program says it did.

    check.py CASE ARGS...    prints "ok NAME" / "not ok NAME: why" lines
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtr  # noqa: E402

ALNAIR = ["cuInit", "cuMemAlloc", "cuMemFree", "cuLaunchKernel", "cuMemcpyH2D", "cuMemcpyD2H", "cuGetProcAddress",
        "cuMemcpyH2D_ASYNC", "cudaMemcpy", "cudaMemcpyAsync"]


def res(name, cond, why=""):
    print(("ok " if cond else "not ok ") + name + ("" if cond else ": " + str(why)))
    return cond


def last_json(path):
    with open(path) as f:
        lines = [l for l in f.read().splitlines() if l.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def metrics(path):
    m = {}
    order = []
    for line in open(path):
        mt = re.match(r"name:([^,]+),count:(\d+)(?:,burst:(\d+))?$", line.strip())
        if not mt:
            return None, None
        m[mt.group(1)] = (int(mt.group(2)), int(mt.group(3) or 0))
        order.append(mt.group(1))
    return m, order


def timeline(path):
    out = []
    for line in open(path):
        mt = re.match(r"name:([^,]+), start:(\d+), burst:(\d+), bytes:(\d+), kind:(-?\d+)$", line.strip())
        if not mt:
            return None
        out.append((mt.group(1), int(mt.group(2)), int(mt.group(3)), int(mt.group(4)), int(mt.group(5))))
    return out


def proc_dirs(out):
    return sorted(d for d in glob.glob(os.path.join(out, "*")) if os.path.isdir(d))


def main_dir(out, pid):
    for d in proc_dirs(out):
        if os.path.basename(d) in ("pid%d" % pid,) or os.path.basename(d).startswith("rank"):
            return d
    ds = proc_dirs(out)
    return ds[0] if ds else None


def case_example(pfx, out, stdout):
    exp = last_json(stdout)
    if not res(pfx + "/program-json", exp is not None, "no JSON line in " + stdout):
        return
    d = main_dir(out, exp["pid"])
    if not res(pfx + "/proc-dir", d and os.path.basename(d) == "pid%d" % exp["pid"], proc_dirs(out)):
        return
    tpath = os.path.join(d, "trace.gtr")
    if not res(pfx + "/trace-complete", os.path.exists(tpath), os.listdir(d)):
        return
    t = gtr.read(tpath)
    s = gtr.summary(t)
    h = t["header"]
    res(pfx + "/header-counts", h["records"] == h["records_read"] and not h.get("torn"), h)
    res(pfx + "/no-loss", h["lost_records"] == 0 and h["cupti_dropped"] == 0, h)
    for k, n in exp["kernels"].items():
        res(pfx + "/kernel-count-" + k, s["kernels"].get(k, 0) == n, "trace %s, program %s" % (s["kernels"].get(k, 0), n))
    nlaunch = sum(exp["kernels"].values())
    launches = sum(s["api"].get(n, [0])[0] for n in ("cuLaunchKernel", "cuLaunchKernelEx"))
    res(pfx + "/launch-api-count", launches == nlaunch, "api %s, program %s (%s)" % (launches, nlaunch, s["api"]))
    kern = [r for r in t["records"] if r["type"] == "kernel"]
    apis = {r["corr"] for r in t["records"] if r["type"] == "api" and r["corr"]}
    linked = sum(1 for k in kern if k["corr"] in apis)
    res(pfx + "/kernel-corr-links", kern and linked == len(kern), "%d of %d kernels link to an API record" % (linked, len(kern)))
    streams = {k["stream"] for k in kern if k["name"] in ("scale", "add")}
    res(pfx + "/two-streams", len(streams) == 2, streams)
    res(pfx + "/gpu-h2d-bytes", s["memcpy_bytes"].get("1", 0) == exp["h2d_bytes"], s["memcpy_bytes"])
    res(pfx + "/gpu-d2h-bytes", s["memcpy_bytes"].get("2", 0) == exp["d2h_bytes"], s["memcpy_bytes"])
    cm = [r for r in t["records"] if r["type"] == "api" and r["name"] == "cudaMemcpy"]
    res(pfx + "/api-cudaMemcpy-h2d", sum(r["bytes"] for r in cm if r["copy_kind"] == 1) == exp["h2d_bytes"] and
        sum(1 for r in cm if r["copy_kind"] == 1) == exp["memcpy_calls"]["h2d"], cm)
    res(pfx + "/api-cudaMemcpy-d2h", sum(r["bytes"] for r in cm if r["copy_kind"] == 2) == exp["d2h_bytes"], cm)
    allocs = sum(r["bytes"] for r in t["records"] if r["type"] == "api" and r["name"] == "cuMemAlloc" and r["result"] == 0)
    res(pfx + "/alloc-bytes", allocs == exp["alloc_bytes"], "api %d, program %d" % (allocs, exp["alloc_bytes"]))
    m, order = metrics(os.path.join(d, "metrics.log"))
    if res(pfx + "/metrics-format", m is not None and order[0] == "mem_used" and order[1:11] == ALNAIR, order):
        res(pfx + "/mem-used-zero", m["mem_used"][0] == 0, m["mem_used"])
        res(pfx + "/metrics-cudaMemcpy", m["cudaMemcpy"][0] == 3, m["cudaMemcpy"])
        res(pfx + "/metrics-launches", m["cuLaunchKernel"][0] + m.get("cuLaunchKernelEx", (0, 0))[0] == nlaunch, m)
        res(pfx + "/metrics-cuMemAlloc", m["cuMemAlloc"][0] >= 2 and m["cuMemFree"][0] >= 2, m)
    tl = timeline(os.path.join(d, "timeline.log"))
    if res(pfx + "/timeline-format", tl, "unparsable timeline.log"):
        h2d = sum(b for n, _, _, b, k in tl if n == "cudaMemcpy" and k == 1)
        res(pfx + "/timeline-h2d-bytes", h2d == exp["h2d_bytes"], h2d)
    rg = [r for r in t["records"] if r["type"] == "range" and r["kind"] == 1]
    res(pfx + "/nvtx-count", len(rg) == len(exp["nvtx_ranges"]), "%d vs %d" % (len(rg), len(exp["nvtx_ranges"])))
    got = sorted((r["name"], r["level"]) for r in rg)
    want = sorted((x["name"], x["level"]) for x in exp["nvtx_ranges"])
    res(pfx + "/nvtx-names-levels", got == want, (got[:8], want[:8]))
    ids = {r["range_id"]: r for r in rg}
    nest_ok = all((r["level"] == 0) == (r["parent_id"] == 0) and (r["parent_id"] == 0 or (
        ids[r["parent_id"]]["start"] <= r["start"] and r["end"] <= ids[r["parent_id"]]["end"])) for r in rg)
    res(pfx + "/nvtx-nesting", nest_ok, "parent links or times wrong")
    g0 = min((k["start"] for k in kern), default=0)
    res(pfx + "/gpu-clock-epoch", kern and abs(g0 - h["start_ns"]) < 120e9, "first kernel %d, tap start %d" % (g0, h["start_ns"]))


def case_threads(pfx, out, stdout):
    exp = last_json(stdout)
    d = main_dir(out, exp["pid"])
    t = gtr.read(os.path.join(d, "trace.gtr"))
    s = gtr.summary(t)
    res(pfx + "/spin-kernels", s["kernels"].get("spin", 0) == exp["kernels"]["spin"], (s["kernels"], exp["kernels"]))
    nl = sum(exp["kernels"].values())
    launches = sum(s["api"].get(n, [0])[0] for n in ("cuLaunchKernel", "cuLaunchKernelEx"))
    res(pfx + "/launch-api-count", launches == nl, "%d vs %d" % (launches, nl))
    tids = {r["tid"] for r in t["records"] if r["type"] == "api" and r["name"] in ("cuLaunchKernel", "cuLaunchKernelEx")}
    res(pfx + "/launch-threads", len(tids) >= 9, tids)
    m, _ = metrics(os.path.join(d, "metrics.log"))
    res(pfx + "/mem-used-zero", m and m["mem_used"][0] == 0, m and m["mem_used"])


def case_fork(pfx, out, stdout):
    exp = last_json(stdout)
    res(pfx + "/child-exit", exp["child_status"] == 0, exp["child_status"])
    ds = [os.path.basename(d) for d in proc_dirs(out)]
    others = [d for d in ds if d != "pid%d" % exp["pid"]]
    if not res(pfx + "/child-dir", len(others) == 1 and "pid%d" % exp["pid"] in ds, ds):
        return
    t = gtr.read(os.path.join(out, others[0], "trace.gtr"))
    rg = sorted((r["name"], r["level"]) for r in t["records"] if r["type"] == "range")
    res(pfx + "/child-ranges", rg == [("child", 0), ("child_inner", 1)], rg)
    res(pfx + "/child-no-parent-records", not any(r["type"] == "kernel" for r in t["records"]), "kernels in child")


def case_torch(pfx, out, stdout, base_stdout):
    exp = last_json(stdout)
    base = last_json(base_stdout)
    if not res(pfx + "/program-json", exp is not None and base is not None, stdout):
        return
    res(pfx + "/loss-unchanged", abs(exp["loss"] - base["loss"]) <= 1e-5 * max(1, abs(base["loss"])), (exp, base))
    ds = proc_dirs(out)
    main = [d for d in ds if os.path.exists(os.path.join(d, "trace.gtr"))]
    if not res(pfx + "/trace", main, ds):
        return
    t = gtr.read(os.path.join(main[0], "trace.gtr"))
    s = gtr.summary(t)
    res(pfx + "/kernels", sum(s["kernels"].values()) > exp["steps"], s["kernels"])
    marks = [r for r in t["records"] if r["type"] == "range" and r["name"].startswith("ProfilerStep#")]
    res(pfx + "/profiler-step-ranges", len(marks) == exp["step_ranges"] and all(r["level"] == 0 for r in marks),
        len(marks))
    steps = [r for r in t["records"] if r["type"] == "range" and r["name"] == "step"]
    res(pfx + "/step-ranges", len(steps) == exp["step_ranges"] and all(r["level"] == 1 for r in steps), len(steps))
    inner = [r for r in t["records"] if r["type"] == "range" and r["name"] in ("forward", "backward", "optimizer")]
    res(pfx + "/inner-ranges", len(inner) == 3 * exp["steps"] and all(r["level"] == 2 for r in inner), len(inner))
    m, order = metrics(os.path.join(main[0], "metrics.log"))
    res(pfx + "/metrics-launches", m and m["cuLaunchKernel"][0] + m.get("cuLaunchKernelEx", (0, 0))[0] > 0, m)
    launches = sum(s["api"].get(n, [0])[0] for n in ("cuLaunchKernel", "cuLaunchKernelEx"))
    res(pfx + "/launches-vs-kernels", launches == sum(s["kernels"].values()), (launches, s["kernels"]))


def case_profiler(pfx, out, stdout, stderr):
    exp = last_json(stdout)
    err = open(stderr).read()
    res(pfx + "/program-ran", exp is not None and exp.get("profiler_events", 0) > 0, exp)
    n = err.count("another CUPTI client")
    res(pfx + "/one-message", n == 1, "%d messages:\n%s" % (n, err[-2000:]))
    ds = proc_dirs(out)
    ok = False
    for d in ds:
        m, _ = metrics(os.path.join(d, "metrics.log")) if os.path.exists(os.path.join(d, "metrics.log")) else (None, None)
        if m and m["cuLaunchKernel"][0] + m.get("cuLaunchKernelEx", (0, 0))[0] > 0:
            ok = True
    res(pfx + "/metrics-still-work", ok, ds)


def case_sigterm(pfx, out, rc):
    res(pfx + "/killed-by-sigterm", int(rc) == 143, rc)
    ds = proc_dirs(out)
    if not res(pfx + "/dir", len(ds) == 1, ds):
        return
    files = os.listdir(ds[0])
    complete = "trace.gtr" in files
    partial = "trace.gtr.partial" in files
    res(pfx + "/complete-or-partial", complete or partial, files)
    if complete:
        t = gtr.read(os.path.join(ds[0], "trace.gtr"))
        res(pfx + "/readable", not t["header"].get("torn") and t["header"]["end_ns"] > 0, t["header"])
    res(pfx + "/metrics-written", "metrics.log" in files, files)


def case_lost(pfx, out, stdout):
    exp = last_json(stdout)
    d = main_dir(out, exp["pid"])
    t = gtr.read(os.path.join(d, "trace.gtr"))
    h = t["header"]
    rg = [r for r in t["records"] if r["type"] == "range"]
    expected = exp["marks"] + len(exp["nvtx_ranges"])
    drop = sum(r["count"] for r in t["records"] if r["type"] == "dropped" and r["source"] == 1)
    res(pfx + "/some-lost", h["lost_records"] > 0, h)
    res(pfx + "/written-plus-lost", len(rg) + h["lost_records"] == expected,
        "%d written + %d lost != %d" % (len(rg), h["lost_records"], expected))
    res(pfx + "/dropped-records-sum", drop == h["lost_records"], (drop, h["lost_records"]))
    res(pfx + "/lost-flag", h["flags"] & 2, h["flags"])


def case_metrics_only(pfx, out, stdout):
    exp = last_json(stdout)
    d = main_dir(out, exp["pid"])
    m, _ = metrics(os.path.join(d, "metrics.log"))
    nl = sum(exp["kernels"].values())
    res(pfx + "/launch-count", m and m["cuLaunchKernel"][0] + m.get("cuLaunchKernelEx", (0, 0))[0] == nl, m)
    t = gtr.read(os.path.join(d, "trace.gtr"))
    # the example's runtime is linked statically: with counters only its 3 cudaMemcpy are counted as
    # the driver copies they make, and the trace says so (GPUTAP_RUNTIME_CALLBACKS=on names them)
    named = os.environ.get("GPUTAP_RUNTIME_CALLBACKS") == "on"
    copies = sum(v[0] for k, v in (m or {}).items() if k.startswith("cuMemcpy"))
    note6 = any(r["type"] == "note" and r["what"] == 6 for r in t["records"])
    if named:
        res(pfx + "/cudaMemcpy-count", m and m["cudaMemcpy"][0] == 3 and not note6, m and m.get("cudaMemcpy"))
    else:
        res(pfx + "/cudaMemcpy-as-driver-copies", m and m.get("cudaMemcpy", (0, 0))[0] == 0 and copies >= 3 and note6,
            (m and m.get("cudaMemcpy"), copies, note6))
    res(pfx + "/no-records", not any(r["type"] in ("kernel", "api", "memcpy") for r in t["records"]),
        gtr.summary(t)["counts"])
    res(pfx + "/metrics-flag", t["header"]["flags"] & 4, t["header"]["flags"])


if __name__ == "__main__":
    case = sys.argv[1]
    globals()["case_" + case](*sys.argv[2:])
